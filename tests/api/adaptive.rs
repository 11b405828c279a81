//! Adaptive overlap over real HTTP (`[assignment.adaptive]`, min 2, max 4,
//! stop = "agree"): items whose answers agree at `min` get no more; disputed
//! ones get exactly one more per round up to `max`; nobody answers an item
//! twice; waves of 200 simultaneous arrivals never push an item past `max`.
use crate::crowd_kit::{arrive_with, browser, create_link_study, link_spec, start};
use crate::helpers::{Spec, TestApp};
use hardneg::api_types::TaskView;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

const ADAPTIVE: &str = "[assignment.adaptive]\nmin = 2\nmax = 4\nstop = \"agree\"";

/// An item as a participant sees it: its caption and its images (in any order).
fn key(t: &TaskView) -> String {
    let mut images: Vec<String> = t.options.iter().filter_map(|o| o.image_url.clone()).collect();
    images.sort();
    format!("{}|{}", t.prompt.text, images.join(","))
}

/// Whether everyone agrees on the item (None), or answers split it.
fn agreed(key: &str) -> bool {
    key.bytes().map(u32::from).sum::<u32>() % 2 == 0
}

/// Answers per item so far: (None, an image). Disputed items alternate so
/// that None never leads by two: None, image, None, image.
#[derive(Default)]
struct Tally(Mutex<HashMap<String, (u32, u32)>>);

impl Tally {
    fn choose(&self, key: &str) -> &'static str {
        let mut t = self.0.lock().unwrap();
        let (none, image) = t.entry(key.to_string()).or_default();
        if agreed(key) || *none <= *image {
            *none += 1;
            "none"
        } else {
            *image += 1;
            "A"
        }
    }

    fn counts(&self) -> HashMap<String, u32> {
        self.0.lock().unwrap().iter().map(|(k, (n, i))| (k.clone(), n + i)).collect()
    }
}

/// One wave: 200 participants arrive at once; those admitted answer their
/// bundles, all at the same time. Returns the items each admitted one answered.
async fn wave(app: &TestApp, token: &str, study: i64, wave: usize, tally: &Tally) -> Vec<Vec<String>> {
    let arrivals = (0..200).map(|i| async move {
        let client = browser();
        let (status, body) = arrive_with(app, &client, token, &format!("W{wave}P{i:03}")).await;
        match status.as_u16() {
            303 => Some(client),
            200 if body.contains("This study is full") => None,
            other => panic!("arrival answered {other}: {body}"),
        }
    });
    let admitted: Vec<_> = futures_util::future::join_all(arrivals).await.into_iter().flatten().collect();
    let work = admitted.iter().map(|client| async move {
        start(app, client, study).await;
        let mut seen = Vec::new();
        while let Some(task) = app.next_task(client, study).await {
            let k = key(&task);
            let res = app.answer(client, task.task_id, tally.choose(&k)).await;
            assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
            seen.push(k);
        }
        seen
    });
    futures_util::future::join_all(work).await
}

#[tokio::test]
async fn link_study_asks_again_only_where_answers_disagree_and_never_past_max() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "20"]);
    let researcher = app.login("researcher").await;
    let spec = format!("{}{ADAPTIVE}\n", link_spec("adaptive crowd", 5, &[]));
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    let tally = Tally::default();
    let mut per_wave: Vec<HashMap<String, u32>> = Vec::new();
    for w in 0..6 {
        let answered = wave(&app, &token, study, w, &tally).await;
        let mut counts: HashMap<String, u32> = HashMap::new();
        for items in &answered {
            assert_eq!(items.iter().collect::<HashSet<_>>().len(), items.len(), "a participant saw an item twice");
            for k in items {
                *counts.entry(k.clone()).or_default() += 1;
            }
        }
        if answered.is_empty() {
            break;
        }
        per_wave.push(counts);
    }
    // 20 items in 4 bundles wanting 2 copies: 8 places in the first wave;
    // then follow-up bundles of one copy, one answer per disputed item per
    // wave, twice (3rd and 4th answers); then the study is full.
    assert_eq!(per_wave.len(), 3, "{per_wave:?}");
    let total = tally.counts();
    assert_eq!(total.len(), 20);
    assert!(per_wave[0].values().all(|&n| n == 2), "{:?}", per_wave[0]);
    let disputed: HashSet<&String> = total.keys().filter(|k| !agreed(k)).collect();
    assert!(!disputed.is_empty() && disputed.len() < 20, "the demo items split both ways");
    for later in &per_wave[1..] {
        assert_eq!(later.keys().collect::<HashSet<_>>(), disputed, "only disputed items, each once");
        assert!(later.values().all(|&n| n == 1));
    }
    for (k, n) in &total {
        assert_eq!(*n, if agreed(k) { 2 } else { 4 }, "{k}");
    }

    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let d = disputed.len() as i64;
    assert_eq!(report["stopped"], serde_json::json!({"agreed": 20 - d, "confident": 0, "max": d, "collecting": 0}));
    assert_eq!(report["answers_spent"], 2 * (20 - d) + 4 * d);
    assert_eq!(report["fixed_answers"], 80);
    for item in report["items"].as_array().unwrap() {
        match item["reason"].as_str().unwrap() {
            "agreed" => assert_eq!((item["answers"].as_i64(), item["value"].as_str()), (Some(2), Some("none"))),
            "max" => assert_eq!(item["answers"], 4),
            other => panic!("{other}"),
        }
        assert!(item["answers"].as_i64() <= Some(4));
    }
    // Agreed items are final; those that reached max wait for adjudication.
    let status: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(status["answers"], 2 * (20 - d) + 4 * d, "{status}");
}

#[tokio::test]
async fn account_study_offers_disputed_items_to_one_more_annotator_each_round() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "12"]);
    app.add_user("ann3", "annotator", "a long password three");
    app.add_user("ann4", "annotator", "a long password four");
    let researcher = app.login("researcher").await;
    let spec =
        Spec::new("adaptive accounts").annotators(&["annotator1", "annotator2", "ann3", "ann4"]).seed(5).line(ADAPTIVE);
    let study = app.create_study_ok(&researcher, &spec).await;
    // Disputed items: the 1st and 3rd annotator say None, the others an image.
    let pick = |none: bool| move |t: &TaskView| if agreed(&key(t)) || none { "none" } else { "A" }.to_string();
    let first = app.work_through("annotator1", study, pick(true)).await;
    assert_eq!(first.len(), 12, "the first to start claims every item");
    assert_eq!(app.work_through("annotator2", study, pick(false)).await.len(), 12);
    let disputed: HashSet<String> = first.iter().map(key).filter(|k| !agreed(k)).collect();
    assert!(!disputed.is_empty() && disputed.len() < 12);
    // Who has not started is asked at most the disputed items, not all 12 (audit AW).
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    let row = |who: &str| progress["annotators"].as_array().unwrap().iter().find(|a| a["username"] == who).cloned();
    assert_eq!(row("ann3").unwrap()["total"], disputed.len() as i64, "{progress}");
    // Each round of a disputed item goes to one annotator who has not had it.
    for (who, none) in [("ann3", true), ("ann4", false)] {
        let got: HashSet<String> = app.work_through(who, study, pick(none)).await.iter().map(key).collect();
        assert_eq!(got, disputed, "{who}");
    }
    // Nothing is left for anyone: no item past max, nobody twice on an item.
    for who in ["annotator1", "annotator2", "ann3", "ann4"] {
        assert!(app.work_through(who, study, pick(true)).await.is_empty(), "{who}");
    }
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let d = disputed.len() as i64;
    assert_eq!(report["stopped"], serde_json::json!({"agreed": 12 - d, "confident": 0, "max": d, "collecting": 0}));
    assert_eq!(report["answers_spent"], 2 * (12 - d) + 4 * d);
    let saved = report["saved_share"].as_f64().unwrap();
    assert!((saved - (1.0 - (2 * (12 - d) + 4 * d) as f64 / 48.0)).abs() < 1e-9, "{saved}");
    // A fixed-overlap study has no adaptive report.
    let fixed = app.create_study_ok(&researcher, &Spec::new("fixed").seed(5)).await;
    let res = researcher.get(app.url(&format!("/api/v1/studies/{fixed}/adaptive"))).send().await.unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn adaptive_specs_that_cannot_work_are_refused_with_the_field() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let cases = [
        (Spec::new("a1").line("[assignment.adaptive]\nmin = 2\nmax = 1\nstop = \"agree\""), "assignment.adaptive.max"),
        (Spec::new("a2").line("[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"posterior\""), "threshold"),
        (
            Spec::new("a3").annotators(&["annotator1", "annotator2"]).line(ADAPTIVE),
            "4 answers per item need at least 4 annotators",
        ),
    ];
    for (spec, want) in cases {
        let res = app.create_study(&researcher, &spec).await;
        assert_eq!(res.status(), 422);
        let body = res.text().await.unwrap();
        assert!(body.contains(want), "{body}");
    }
    let spec = format!("{}{ADAPTIVE}\n", link_spec("with copies", 5, &["copies = 2"]));
    let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("link.copies"));
}

/// `stop = "posterior"`: an item stops once its leading value's posterior,
/// under each person's earned reliability, reaches the threshold and two
/// people gave it; an item that never does goes to `max` and is settled by
/// `resolve`. Every stopped item has a posterior; the export carries it.
#[tokio::test]
async fn posterior_stop_needs_two_agreeing_and_exports_every_posterior() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "12"]);
    app.add_user("ann3", "annotator", "a long password three");
    app.add_user("ann4", "annotator", "a long password four");
    let researcher = app.login("researcher").await;
    let spec = Spec::new("adaptive posterior")
        .annotators(&["annotator1", "annotator2", "ann3", "ann4"])
        .seed(5)
        .line("[assignment.adaptive]\nmin = 2\nmax = 4\nstop = \"posterior\"\nthreshold = 0.95");
    let study = app.create_study_ok(&researcher, &spec).await;
    // Unanimous items: everyone picks the same image (the one with the first
    // URL), so they pass Step 3 and are exported. Split ones: that image from
    // the 1st and 4th annotator, None from the 2nd and 3rd.
    let pick = |image: bool| {
        move |t: &TaskView| {
            let first_image = t.options.iter().filter(|o| o.image_url.is_some()).min_by_key(|o| o.image_url.clone());
            if agreed(&key(t)) || image {
                first_image.unwrap().id.clone()
            } else {
                "none".to_string()
            }
        }
    };
    let first = app.work_through("annotator1", study, pick(true)).await;
    assert_eq!(first.len(), 12);
    assert_eq!(app.work_through("annotator2", study, pick(false)).await.len(), 12);
    let split: HashSet<String> = first.iter().map(key).filter(|k| !agreed(k)).collect();
    assert!(!split.is_empty() && split.len() < 12);
    // Two different values never stop: every split item gets a third answer
    // (unanimous ones may too, while nobody has earned much trust).
    let third: HashSet<String> = app.work_through("ann3", study, pick(false)).await.iter().map(key).collect();
    assert!(split.is_subset(&third), "split items get a third answer: {third:?}");
    let fourth: HashSet<String> = app.work_through("ann4", study, pick(true)).await.iter().map(key).collect();
    assert!(fourth.is_subset(&third), "{fourth:?}");

    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let warning = report["calibration_warning"].as_str().unwrap_or_default();
    assert!(warning.starts_with("12 items (under 100) and a median of"), "a small study is told so: {report}");
    let items = report["items"].as_array().unwrap();
    let by_answers = |n: i64| items.iter().filter(|i| i["answers"] == n).count();
    assert_eq!(
        (by_answers(3) + by_answers(4), by_answers(4)),
        (third.len(), fourth.len()),
        "answers per item follow who got it: {report}"
    );
    let mut spent = 0;
    for item in items {
        let (answers, posterior) = (item["answers"].as_i64().unwrap(), item["posterior"].as_f64());
        spent += answers;
        match item["reason"].as_str().unwrap() {
            "confident" => {
                let posterior = posterior.unwrap_or_else(|| panic!("a confident stop has its posterior: {item}"));
                assert!(posterior >= 0.95, "stopped only once confident: {item}");
                assert_eq!(item["posterior_model"], "earned_reliability", "{item}");
            }
            // Left at max under `resolve = "adjudication"`: not settled yet, so no value and no posterior.
            "max" => {
                assert_eq!(answers, 4, "{item}");
                assert!(item["value"].is_null() && posterior.is_none(), "{item}");
            }
            other => panic!("{other}: {item}"),
        }
    }
    assert_eq!(by_answers(2), 12 - third.len());
    assert_eq!(report["stopped"]["collecting"], 0);
    assert_eq!(report["answers_spent"], spent);
    assert_eq!(report["fixed_answers"], 48);

    // The export: an item settled on the value it stopped on carries the
    // posterior it stopped at, unanimous or not.
    let out = tmp.path().join("posterior-export");
    let res = app.cli(&["export", "demo", "--out", out.to_str().unwrap(), "--format", "jsonl", "--stage", "step3"]);
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    let rows: Vec<Value> = std::fs::read_to_string(out.join("data.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    for row in &rows {
        let item = items.iter().find(|i| i["instance_id"] == row["instance_id"]).unwrap();
        if item["reason"] == "confident" {
            let p: f64 = row["step3_posterior"].as_str().unwrap().parse().unwrap();
            assert!((p - item["posterior"].as_f64().unwrap()).abs() < 1e-6, "{row} vs {item}");
        }
    }
}

/// A round whose decision never committed (the answer stored, the item
/// still `collecting` with all its wanted answers) is decided by the sweep
/// at the next start-up: agreed items stop, split ones ask one more.
#[tokio::test]
async fn complete_rounds_left_undecided_are_decided_at_start_up() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "12"]);
    app.add_user("ann3", "annotator", "a long password three");
    let researcher = app.login("researcher").await;
    let spec = Spec::new("adaptive sweep")
        .annotators(&["annotator1", "annotator2", "ann3"])
        .seed(5)
        .line("[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"");
    let study = app.create_study_ok(&researcher, &spec).await;
    let pick = |none: bool| move |t: &TaskView| if agreed(&key(t)) || none { "none" } else { "A" }.to_string();
    let first = app.work_through("annotator1", study, pick(true)).await;
    app.work_through("annotator2", study, pick(false)).await;
    let split: HashSet<String> = first.iter().map(key).filter(|k| !agreed(k)).collect();
    let s = split.len() as i64;
    assert!(s > 0 && s < 12);

    // As if every decision had failed after its answer was stored.
    let passwords = app.accounts.clone();
    app.kill();
    let db = crate::helpers::db_at(tmp.path()).await;
    sqlx::query(
        "UPDATE adaptive_items SET state = 'collecting', wanted = 2, reason = NULL, answers = NULL, value = NULL,
                posterior = NULL WHERE study_id = $1",
    )
    .bind(study)
    .execute(&db)
    .await
    .unwrap();
    let stopped: i64 =
        sqlx::query_scalar("SELECT count(*) FROM adaptive_items WHERE study_id = $1 AND state = 'stopped'")
            .bind(study)
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(stopped, 0);
    db.close().await;

    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "12"]);
    app.accounts = passwords;
    let researcher = app.login("researcher").await;
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    assert_eq!(report["stopped"], serde_json::json!({"agreed": 12 - s, "confident": 0, "max": 0, "collecting": s}));
    // The split items now want a third answer: the next annotator gets exactly those.
    let third: HashSet<String> = app.work_through("ann3", study, pick(true)).await.iter().map(key).collect();
    assert_eq!(third, split);
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    assert_eq!(report["stopped"], serde_json::json!({"agreed": 12 - s, "confident": 0, "max": s, "collecting": 0}));
}
