//! Crowd quality over real HTTP: participants who answer with care, too
//! fast, straight-lining, or failing attention checks and gold items; their
//! flags and suggested decisions in the approve list (API and CLI); the
//! dashboard against a computation from the stored rows; discarding a copy.
use crate::crowd_kit::{arrive, create_link_study, link_spec, post_ok, start};
use crate::helpers::TestApp;
use hardneg::api_types::{AnswerRequest, TaskView};
use reqwest::Client;
use serde_json::Value;
use std::collections::HashMap;

/// How a participant picks: the option showing the image with the smallest
/// URL (the same underlying image for everyone: careful people agree), or always one position.
#[derive(Clone, Copy)]
enum Pick {
    SameImage,
    Always(&'static str),
}

fn choose(task: &TaskView, pick: Pick) -> String {
    match pick {
        Pick::Always(id) => id.to_string(),
        Pick::SameImage => {
            let best = task.options.iter().filter(|o| o.image_url.is_some()).min_by_key(|o| o.image_url.clone());
            best.expect("four_image shows images").id.clone()
        }
    }
}

/// Answers the whole bundle, each answer reported as taking `ms`; `at(k)` overrides the pick of the k-th task.
async fn answer_all(
    app: &TestApp,
    c: &Client,
    study: i64,
    pick: Pick,
    ms: i64,
    at: &dyn Fn(usize) -> Option<&'static str>,
) {
    let mut k = 0;
    while let Some(task) = app.next_task(c, study).await {
        let option = at(k).map(str::to_string).unwrap_or_else(|| choose(&task, pick));
        let body = AnswerRequest { option, elapsed_ms: Some(ms), text: None, texts: Default::default() };
        let res = c.post(app.url(&format!("/api/v1/tasks/{}/answer", task.task_id))).json(&body).send().await.unwrap();
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        k += 1;
    }
}

async fn participant(app: &TestApp, token: &str, study: i64, pid: &str) -> Client {
    let c = arrive(app, token, study, pid).await;
    start(app, &c, study).await;
    c
}

fn by_pid(csv: &str) -> HashMap<String, HashMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let row: HashMap<String, String> =
                header.iter().zip(l.split(',')).map(|(h, v)| (h.to_string(), v.to_string())).collect();
            (row["platform_id"].clone(), row)
        })
        .collect()
}

async fn approve_csv(app: &TestApp, researcher: &Client, study: i64) -> String {
    let res = researcher.get(app.url(&format!("/api/v1/studies/{study}/approve-list.csv"))).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    assert!(res.headers()["content-disposition"].to_str().unwrap().contains("approve-list.csv"));
    res.text().await.unwrap()
}

#[tokio::test]
async fn flags_decisions_dashboard_and_discarding() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock-offset");
    let data = tmp.path().join("data");
    let app = TestApp::spawn_with_env(&data, &["--demo-size", "14"], &[("HARDNEG_TEST_CLOCK_FILE", &clock)]);
    let researcher = app.login("researcher").await;
    // One bundle of all 14 items, 8 copies: everyone answers the same items.
    let extra = ["copies = 8", "min_seconds_per_item = 2", "straight_line_run = 5", "platform_fee = 0.5"];
    let (study, token) = create_link_study(&app, &researcher, &link_spec("quality", 14, &extra)).await;

    let careful = [
        participant(&app, &token, study, "CAREFUL1").await,
        participant(&app, &token, study, "CAREFUL2").await,
        participant(&app, &token, study, "CAREFUL3").await,
    ];
    let fast = participant(&app, &token, study, "FAST").await;
    let liner = participant(&app, &token, study, "LINER").await;
    let checker = participant(&app, &token, study, "CHECKER").await;
    // The test marks four of CHECKER's tasks as check items in the SQLite file
    // (as `studies::link::checks` stores them), so they are at known positions: gold
    // first, the attention checks last (failing the second ends the place).
    let db = crate::helpers::db_at(&data).await;
    for (position, kind) in [(0, "gold"), (1, "gold"), (12, "attention"), (13, "attention")] {
        let n = sqlx::query(
            "UPDATE tasks SET check_kind = $1, check_answer = 'none'
             WHERE study_id = $2 AND position = $3 AND user_id = (SELECT user_id FROM participants WHERE platform_pid = 'CHECKER')",
        )
        .bind(kind)
        .bind(study)
        .bind(position)
        .execute(&db)
        .await
        .unwrap()
        .rows_affected();
        assert_eq!(n, 1);
    }
    let returned = participant(&app, &token, study, "RETURNED").await;
    post_ok(&app, &returned, &format!("/api/v1/take/{study}/return")).await;

    // Ten minutes pass before the answers: every bundle takes over 5 minutes.
    std::fs::write(&clock, "600").unwrap();
    for (c, ms) in careful.iter().zip([4000, 3000, 5000]) {
        answer_all(&app, c, study, Pick::SameImage, ms, &|_| None).await;
    }
    answer_all(&app, &fast, study, Pick::SameImage, 800, &|_| None).await;
    answer_all(&app, &liner, study, Pick::Always("A"), 3000, &|_| None).await;
    // Gold right once (none) and wrong once (A), both attention checks failed (A is never "none").
    let checks = |k: usize| match k {
        1 | 12 | 13 => Some("A"),
        0 => Some("none"),
        _ => None,
    };
    answer_all(&app, &checker, study, Pick::SameImage, 3000, &checks).await;
    let working = participant(&app, &token, study, "WORKING").await;
    assert_eq!(crate::crowd_kit::answer_n(&app, &working, study, 3, "B").await, 3);

    let csv = approve_csv(&app, &researcher, study).await;
    assert!(csv.starts_with(
        "platform_id,participant,bundle,status,answers,median_s_per_item,gold_accuracy,checks_failed,\
         comprehension_attempts,ds_accuracy,flags,decision,reason,ended\n"
    ));
    let rows = by_pid(&csv);
    assert_eq!(rows.len(), 8, "{csv}");
    for pid in ["CAREFUL1", "CAREFUL2", "CAREFUL3"] {
        let r = &rows[pid];
        assert_eq!(
            (r["status"].as_str(), r["flags"].as_str(), r["decision"].as_str()),
            ("completed", "", "approve"),
            "{r:?}"
        );
        assert_eq!(r["answers"], "14");
        assert!(r["ds_accuracy"].parse::<f64>().unwrap() > 0.9, "{r:?}");
    }
    assert_eq!(rows["CAREFUL2"]["median_s_per_item"], "3.0");
    let f = &rows["FAST"];
    assert_eq!(
        (f["median_s_per_item"].as_str(), f["flags"].as_str(), f["decision"].as_str()),
        ("0.8", "too_fast", "review")
    );
    let l = &rows["LINER"];
    assert!(l["flags"].split(';').any(|f| f == "straight_lining"), "{l:?}");
    assert_eq!(l["decision"], "review");
    let c = &rows["CHECKER"];
    assert_eq!((c["answers"].as_str(), c["checks_failed"].as_str(), c["gold_accuracy"].as_str()), ("10", "2", "0.500"));
    assert_eq!((c["decision"].as_str(), c["reason"].as_str()), ("reject", "failed two attention checks"));
    assert_eq!(c["flags"], "failed_check");
    // Its second failed check was its last item: it is screened out all the same.
    assert_eq!(c["status"], "screened_out");
    assert_eq!((rows["RETURNED"]["status"].as_str(), rows["RETURNED"]["decision"].as_str()), ("returned", "none"));
    assert_eq!((rows["WORKING"]["status"].as_str(), rows["WORKING"]["decision"].as_str()), ("active", "wait"));
    // Two more answers: the server reads only WORKING's answers again, and
    // its list equals the CLI's, which reads every answer afresh.
    assert_eq!(crate::crowd_kit::answer_n(&app, &working, study, 2, "C").await, 2);
    let csv = approve_csv(&app, &researcher, study).await;
    assert_eq!(by_pid(&csv)["WORKING"]["answers"], "5");
    let out = app.cli(&["participants", &study.to_string(), "--approve-list"]);
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));
    assert_eq!(crate::helpers::text(&out.stdout), csv);

    dashboard_matches_the_stored_rows(&app, &researcher, &db, study).await;

    // Discarding: over the API and the CLI; answers stay, places free up, a new arrival gets the bundle.
    let res =
        researcher.post(app.url(&format!("/api/v1/studies/{study}/participants/5/discard"))).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["state"], "discarded");
    let out = app.cli(&["participants", &study.to_string(), "--discard", "4"]);
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));
    let again =
        researcher.post(app.url(&format!("/api/v1/studies/{study}/participants/4/discard"))).send().await.unwrap();
    assert_eq!(again.status(), 422, "a discarded copy is not discarded twice");
    let active =
        researcher.post(app.url(&format!("/api/v1/studies/{study}/participants/8/discard"))).send().await.unwrap();
    assert_eq!(active.status(), 422, "participant 8 (WORKING) has not finished: {}", active.text().await.unwrap());
    let rows = by_pid(&approve_csv(&app, &researcher, study).await);
    assert_eq!((rows["FAST"]["status"].as_str(), rows["LINER"]["status"].as_str()), ("discarded", "discarded"));
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM answers WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(stored, 6 * 14 + 5, "discarded answers stay stored");
    let counted: i64 = sqlx::query_scalar("SELECT count(*) FROM counted_answers WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(counted, 3 * 14 + 5, "neither discarded copies, a screened-out copy nor check items count");
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    assert_eq!(
        (d["completed"].as_i64(), d["free"].as_i64(), d["participants"]["discarded"].as_i64()),
        (Some(3), Some(4), Some(2))
    );
    let newcomer = participant(&app, &token, study, "NEWCOMER").await;
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    assert_eq!((d["leased"].as_i64(), d["free"].as_i64()), (Some(2), Some(3)));
    // Both were just read: a new answer shows in them at once (nothing computed from older answers is served).
    assert_eq!(rows["WORKING"]["answers"], "5");
    assert_eq!(crate::crowd_kit::answer_n(&app, &newcomer, study, 1, "B").await, 1);
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    assert_eq!(d["answers"].as_i64(), Some(stored + 1));
    let binned: i64 = d["time_per_item"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).sum();
    assert_eq!(binned, stored + 1);
    assert_eq!(by_pid(&approve_csv(&app, &researcher, study).await)["NEWCOMER"]["answers"], "1");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap_or(f64::NAN) - b).abs() < 1e-9
}

/// Every figure of the dashboard, computed again from the rows the server stored.
async fn dashboard_matches_the_stored_rows(app: &TestApp, researcher: &Client, db: &sqlx::AnyPool, study: i64) {
    let d: Value = app.get(researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    let now = d["now"].as_i64().unwrap();
    assert_eq!((d["bundles"].as_i64(), d["places"].as_i64()), (Some(1), Some(8)));
    assert_eq!((d["free"].as_i64(), d["leased"].as_i64(), d["completed"].as_i64()), (Some(2), Some(1), Some(5)));
    let p = &d["participants"];
    assert_eq!((p["started"].as_i64(), p["working"].as_i64(), p["completed"].as_i64()), (Some(8), Some(1), Some(5)));
    assert_eq!(
        (p["returned"].as_i64(), p["timed_out"].as_i64(), p["screened_out"].as_i64()),
        (Some(1), Some(0), Some(1))
    );

    let times: Vec<(i64, i64)> = sqlx::query_as("SELECT elapsed_ms, answered_at FROM answers WHERE study_id = $1")
        .bind(study)
        .fetch_all(db)
        .await
        .unwrap();
    assert_eq!(d["answers"].as_i64(), Some(times.len() as i64));
    assert_eq!(times.len(), 6 * 14 + 5);
    assert!(close(&d["median_secs_per_item"], median(times.iter().map(|t| t.0 as f64 / 1000.0).collect())));
    // The rate: answers since max(first answer, now - 15 min), over at least a minute.
    let first = times.iter().map(|t| t.1).min().unwrap();
    let since = first.max(now - 900);
    let recent = times.iter().filter(|t| t.1 >= since).count() as f64;
    let rate = recent / ((now - since).max(60) as f64 / 60.0);
    assert!(close(&d["answers_per_minute"], rate), "{d}");
    // Three copies still wanted of 14 tasks (RETURNED's, CHECKER's, WORKING's), less the 5 answers in progress.
    assert_eq!(d["remaining_answers"].as_i64(), Some(3 * 14 - 5));
    assert!(close(&d["eta_secs"], 37.0 / rate * 60.0));

    let bundle_secs: Vec<f64> =
        sqlx::query_scalar("SELECT ended_at - leased_at FROM leases WHERE study_id = $1 AND state = 'completed'")
            .bind(study)
            .fetch_all(db)
            .await
            .unwrap()
            .into_iter()
            .map(|s: i64| s as f64)
            .collect();
    let median_bundle = median(bundle_secs);
    assert!(median_bundle >= 600.0, "the clock moved ten minutes: {median_bundle}");
    assert!(close(&d["median_bundle_secs"], median_bundle));
    // (12 $/h × 1.5) × median hours × 8 places; spent: the 5 finished (CHECKER was screened out).
    let per_place = 12.0 * 1.5 * median_bundle / 3600.0;
    let cost = &d["cost"];
    assert!(close(&cost["per_hour"], 18.0) && close(&cost["per_place"], per_place), "{cost}");
    assert!(close(&cost["estimated_total"], per_place * 8.0) && close(&cost["spent"], per_place * 5.0), "{cost}");
    assert_eq!(d["arrivals"].as_array().unwrap().last().unwrap()[1], 8);
    assert_eq!(d["completions"].as_array().unwrap().last().unwrap()[1], 5);
    let bins: Vec<i64> = d["time_per_item"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).collect();
    assert_eq!((bins[0], bins[1], bins[3], bins[4], bins[5]), (14, 5, 3 * 14, 14, 14));
    // The CLI's JSON is the same, apart from the moment it was taken.
    let out = app.cli(&["study", "status", &study.to_string(), "--json"]);
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));
    let mut cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut api = d.clone();
    for v in [&mut cli, &mut api] {
        for k in ["now", "answers_per_minute", "eta_secs", "arrivals", "completions"] {
            v.as_object_mut().unwrap().remove(k);
        }
    }
    assert_eq!(cli, api);
    let text = app.cli(&["study", "status", &study.to_string()]);
    assert!(crate::helpers::text(&text.stdout).contains("places:       8 in 1 bundles: 2 free, 1 leased, 5 completed"));
}
