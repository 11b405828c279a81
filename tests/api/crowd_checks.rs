//! Check items inside link-study bundles over real HTTP (docs/crowd.md):
//! gold items and instructional attention checks at seeded positions, a
//! participant screened out after two failed checks (its bundle given to
//! the next arrival), the researcher's per-participant figures, and check
//! items kept out of outcomes, agreement and export.
use crate::crowd_kit::{arrive, arrive_with, browser, create_link_study, lease_states, link_spec, stage, start};
use crate::helpers::{cli, text, TestApp};
use hardneg::api_types::TaskView;
use hardneg::domain::ids::TaskId;
use hardneg::domain::survey::{ItemData, SurveyKind};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

pub async fn db(app: &TestApp) -> sqlx::AnyPool {
    app.db().await
}

/// The option an attention check's instruction names ("… select B for this item.").
pub fn named_option(t: &TaskView) -> Option<String> {
    let text = t.prompt.text.strip_prefix("Attention check")?;
    t.options.iter().find(|o| text.contains(&format!("select {} for", o.label))).map(|o| o.id.clone())
}

/// The shown option of a `four_image` task (seed) that stores `value`, as the kind presents it.
fn option_storing(seed: i64, value: &str) -> String {
    let item = ItemData { candidate_images: vec![String::new(); 4], ..Default::default() };
    let p = SurveyKind::parse("four_image").unwrap().present(&item, seed as u64).unwrap();
    p.options.into_iter().find(|o| o.value == value).unwrap().id
}

/// Gold tasks of the study: task id -> (seed, right value).
async fn gold_tasks(app: &TestApp, study: i64) -> HashMap<i64, (i64, String)> {
    let rows: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT id, seed, check_answer FROM tasks WHERE study_id = $1 AND check_kind = 'gold'")
            .bind(study)
            .fetch_all(&db(app).await)
            .await
            .unwrap();
    rows.into_iter().map(|(id, seed, answer)| (id, (seed, answer))).collect()
}

#[derive(Debug, Default)]
struct Walk {
    attention: usize,
    gold: usize,
    gold_right: usize,
    answered: usize,
}

/// Answers the whole queue: the first `fail` attention checks wrongly, the
/// rest as instructed; gold items right when `gold_right`; real items `real`.
async fn walk(app: &TestApp, p: &reqwest::Client, study: i64, fail: usize, gold_right: bool, real: &str) -> Walk {
    let gold = gold_tasks(app, study).await;
    let mut w = Walk::default();
    let mut seen = HashSet::new();
    while let Some(t) = app.next_task(p, study).await {
        assert!(seen.insert(t.task_id), "task {} came twice", t.task_id);
        let choice = if let Some(named) = named_option(&t) {
            w.attention += 1;
            if w.attention <= fail {
                t.options.iter().map(|o| o.id.clone()).find(|o| *o != named).unwrap()
            } else {
                named
            }
        } else if let Some((seed, right)) = gold.get(&t.task_id.get()) {
            w.gold += 1;
            let right_option = option_storing(*seed, right);
            w.gold_right += usize::from(gold_right);
            if gold_right {
                right_option
            } else {
                t.options.iter().map(|o| o.id.clone()).find(|o| *o != right_option).unwrap()
            }
        } else {
            assert!(!t.prompt.text.starts_with("Attention check"), "{:?}", t.prompt.text);
            real.to_string()
        };
        let res = app.answer(p, t.task_id, &choice).await;
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        w.answered += 1;
    }
    w
}

const CHECKS: &[&str] = &[
    "completion_url = \"http://127.0.0.1:9/done?cc={code}\"",
    "attention_checks = 2",
    "gold = [{ key = \"demo-000\", answer = \"none\" }, { key = \"demo-001\" }]",
    "screen_out_code = \"SCREEN01\"",
    "screen_out_url = \"http://127.0.0.1:9/out?cc={code}\"",
];

async fn participant_rows(app: &TestApp, researcher: &reqwest::Client, study: i64) -> Vec<Value> {
    app.get(researcher, &format!("/api/v1/studies/{study}/participants")).await
}

#[tokio::test]
async fn checks_sit_in_every_bundle_and_two_failed_attention_checks_screen_out() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("checks", 9, CHECKS)).await;
    // demo-001's gold answer is the dataset's known truth: its one matching candidate, or none.
    let pool = db(&app).await;
    let truth: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT c.slot, c.known_match FROM candidates c JOIN instances i ON i.id = c.instance_id
         WHERE i.key = 'demo-001' AND i.dataset_id = (SELECT id FROM datasets WHERE name = 'demo') ORDER BY c.slot",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let matching: Vec<String> = truth.iter().filter(|(_, m)| *m == 1).map(|(s, _)| s.to_string()).collect();
    let want_truth = matching.first().cloned().unwrap_or_else(|| "none".into());

    // Passes every check and answers the gold items right.
    let p1 = arrive(&app, &token, study, "P1").await;
    start(&app, &p1, study).await;
    let w1 = walk(&app, &p1, study, 0, true, "B").await;
    assert_eq!(w1.attention, 2, "{w1:?}");
    let done: Value = app.get(&p1, &format!("/api/v1/take/{study}/completion")).await;
    assert_eq!(done["code"].as_str().unwrap().len(), 8);
    // Fails one check (and answers gold wrong): still finishes.
    let p2 = arrive(&app, &token, study, "P2").await;
    start(&app, &p2, study).await;
    let w2 = walk(&app, &p2, study, 1, false, "A").await;
    assert_eq!(stage(&app, &p2, study).await["stage"], "complete");

    let checks: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT user_id, check_kind, check_answer FROM tasks WHERE study_id = $1 AND check_kind IS NOT NULL",
    )
    .bind(study)
    .fetch_all(&pool)
    .await
    .unwrap();
    let gold_answers: HashSet<&str> =
        checks.iter().filter(|c| c.1 == "gold").map(|c| c.2.as_str()).collect::<HashSet<_>>();
    assert!(gold_answers.iter().all(|a| *a == "none" || *a == want_truth), "{gold_answers:?}");
    let rows = participant_rows(&app, &researcher, study).await;
    for (row, w) in rows.iter().zip([&w1, &w2]) {
        // Each participant: its 9 items, 2 attention checks and the gold items not in its bundle.
        assert_eq!(row["total"].as_u64(), Some(w.answered as u64), "{row}");
        assert_eq!(w.answered, 9 + 2 + w.gold);
        assert!(w.gold >= 1 && w.gold <= 2, "{w:?}");
        assert_eq!(row["gold_total"].as_u64(), Some(w.gold as u64));
        assert_eq!(row["gold_right"].as_u64(), Some(w.gold_right as u64));
        assert_eq!(row["comprehension_attempts"], 0);
        assert_eq!(row["state"], "completed");
    }
    assert_eq!((rows[0]["checks_failed"].as_i64(), rows[1]["checks_failed"].as_i64()), (Some(0), Some(1)));

    // Fails two: ended at the second, its bundle back in the pool.
    let p3 = arrive(&app, &token, study, "P3").await;
    start(&app, &p3, study).await;
    let w3 = walk(&app, &p3, study, 2, true, "B").await;
    assert_eq!(w3.attention, 2);
    let s = stage(&app, &p3, study).await;
    assert_eq!(s["stage"], "screened_out", "{s}");
    assert_eq!((s["reason"].as_str(), s["code"].as_str()), (Some("attention_checks"), Some("SCREEN01")));
    assert_eq!(s["url"], "http://127.0.0.1:9/out?cc=SCREEN01");
    let refused = p3.get(app.url(&format!("/api/v1/take/{study}/completion"))).send().await.unwrap();
    assert_eq!(refused.status(), 422, "no completion code after a screen-out");
    let (open, total): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE t.done = 0), count(*) FROM tasks t JOIN participants p ON p.user_id = t.user_id
         WHERE p.study_id = $1 AND p.platform_pid = 'P3'",
    )
    .bind(study)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((open + w3.answered as i64, total), (total, 9 + 2 + w3.gold as i64), "stopped at the second failure");
    let last: i64 = sqlx::query_scalar(
        "SELECT max(t.id) FROM tasks t JOIN participants p ON p.user_id = t.user_id WHERE p.study_id = $1 AND p.platform_pid = 'P3'",
    )
    .bind(study)
    .fetch_one(&pool)
    .await
    .unwrap();
    // Its last task (the second failed check) sent again: a repeat, answered
    // as one (its response may have been lost); nothing more is stored.
    let again = app.answer(&p3, TaskId::new(last), "A").await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<serde_json::Value>().await.unwrap()["duplicate"], true);
    let rows = participant_rows(&app, &researcher, study).await;
    assert_eq!(rows[2]["state"], "screened_out");
    assert_eq!(
        (rows[2]["checks_failed"].as_i64(), rows[2]["screened_out_reason"].as_str()),
        (Some(2), Some("attention_checks"))
    );
    let p3_bundle = rows[2]["bundle"].as_i64().unwrap();
    // The same PID again: the screen-out page with its code, not a new place.
    let (status, body) = arrive_with(&app, &browser(), &token, "P3").await;
    assert_eq!(status, 200);
    // In the take page's words: the code, never "return" (decide may
    // reject them in a study of 5 minutes or more).
    assert!(body.contains("SCREEN01") && body.contains("attention checks were answered wrongly"), "{body}");
    assert!(!body.to_lowercase().contains("return the study"), "{body}");
    let page = browser().get(app.url(&format!("/join/{token}?PROLIFIC_PID=P3"))).send().await.unwrap();
    assert!(page.text().await.unwrap().contains("http://127.0.0.1:9/out?cc=SCREEN01"));
    // The next arrival gets the reclaimed bundle.
    let _p4 = arrive(&app, &token, study, "P4").await;
    let rows = participant_rows(&app, &researcher, study).await;
    assert_eq!(rows[3]["bundle"].as_i64(), Some(p3_bundle), "{rows:?}");
    assert_eq!(lease_states(&app, &researcher, study).await, ["completed", "completed", "screened_out", "active"]);
    // The CLI lists the same figures.
    let out = cli(&app.data_dir, &["participants", &study.to_string(), "--csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("gold_right,gold_total,checks_failed,comprehension_attempts,screened_out_reason"),
        "{csv}"
    );
    let p3_line = csv.lines().nth(3).unwrap();
    assert!(p3_line.contains(",screened_out,") && p3_line.ends_with(",2,0,attention_checks"), "{p3_line}");
}

#[tokio::test]
async fn check_items_never_reach_outcomes_agreement_or_export() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    // 3 bundles of 21; bundle 0 is wanted twice: the fourth arrival pairs with the first.
    let mut lines = CHECKS.to_vec();
    lines.push("paired_bundles = 1");
    let (study, token) = create_link_study(&app, &researcher, &link_spec("checks kept out", 21, &lines)).await;
    let mut real_answers = 0;
    for (pid, real) in [("P1", "none"), ("P2", "A"), ("P3", "A"), ("P4", "none")] {
        let p = arrive(&app, &token, study, pid).await;
        start(&app, &p, study).await;
        let w = walk(&app, &p, study, 0, pid != "P4", real).await;
        assert_eq!((w.attention, w.answered - w.attention - w.gold), (2, 21), "{pid}: {w:?}");
        real_answers += 21;
    }
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], real_answers, "only the bundles' own answers count");
    assert_eq!(
        progress["distribution"].as_array().unwrap().iter().map(|d| d["count"].as_i64().unwrap()).sum::<i64>(),
        84
    );
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/agreement")).await;
    let pairs = report["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{report}");
    assert_eq!(pairs[0]["n"], 21, "the pair shares its bundle's 21 items, not its check items");
    assert_eq!(pairs[0]["observed"], 1.0);
    // Bundles 1 and 2 (one answer each, an image) survive Step 3 with exactly that one vote.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("x");
    let args = ["export", "demo", "--out", dir.to_str().unwrap(), "--stage", "step3", "--format", "csv"];
    let res = cli(&app.data_dir, &args);
    assert!(res.status.success(), "{}", text(&res.stderr));
    let mut rows = csv::Reader::from_path(dir.join("data.csv")).unwrap();
    let headers = rows.headers().unwrap().clone();
    let (votes, by) = (
        headers.iter().position(|h| h == "step3_votes").unwrap(),
        headers.iter().position(|h| h == "step3_resolved_by").unwrap(),
    );
    let mut exported = 0;
    for r in rows.records() {
        let r = r.unwrap();
        assert_eq!(r[votes].split(';').count(), 1, "one vote per item: {r:?}");
        assert_eq!(&r[by], "single", "{r:?}");
        exported += 1;
    }
    assert_eq!(exported, 42);
}
