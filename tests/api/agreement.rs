//! Agreement over a study's real answers, through the API and the CLI.
use crate::helpers::{demo_study, text, Spec, TestApp};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Answers every item; `none_if` decides from the caption shown.
async fn annotate_all(app: &TestApp, user: &str, none_if: fn(&str) -> bool) -> HashMap<String, bool> {
    let study = demo_study(&app.login(user).await, app).await;
    let mut said_none = HashMap::new();
    app.work_through(user, study, |task| {
        let none = none_if(&task.prompt.text);
        said_none.insert(task.prompt.text.clone(), none);
        if none { "none" } else { "A" }.into()
    })
    .await;
    said_none
}
#[tokio::test]
async fn cohen_kappa_of_two_annotators_matches_the_hand_computed_table() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let url = app.url("/api/v1/studies/1/agreement?mapping=binary");
    let empty: Value = researcher.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(empty["pairs"], json!([]));
    assert!(empty["mean_kappa"].is_null() && empty["mean_kappa_reason"].is_string(), "{empty}");

    let a = annotate_all(&app, "annotator1", |c| c.len() % 3 == 0).await;
    let b = annotate_all(&app, "annotator2", |c| c.len() % 3 == 0 || c.len() % 4 == 0).await;
    assert_eq!(a.len(), 63);
    // The 2×2 table by hand (category 0 = image, 1 = none, in the mapping's order).
    let mut t = [[0f64; 2]; 2];
    for (caption, &na) in &a {
        t[na as usize][b[caption] as usize] += 1.0;
    }
    let n = 63.0;
    let po = (t[0][0] + t[1][1]) / n;
    let pe = ((t[0][0] + t[0][1]) * (t[0][0] + t[1][0]) + (t[1][0] + t[1][1]) * (t[0][1] + t[1][1])) / (n * n);
    let kappa = (po - pe) / (1.0 - pe);

    let r: Value = researcher.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(r["categories"], json!(["image", "none"]));
    let pair = &r["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str(), pair["n"].as_u64()),
        (Some("annotator1"), Some("annotator2"), Some(63))
    );
    assert!((pair["observed"].as_f64().unwrap() - po).abs() < 1e-12);
    assert!((pair["expected"].as_f64().unwrap() - pe).abs() < 1e-12);
    assert!((pair["kappa"].as_f64().unwrap() - kappa).abs() < 1e-12);
    assert_eq!(pair["confusion"], json!([[t[0][0] as u64, t[0][1] as u64], [t[1][0] as u64, t[1][1] as u64]]));
    assert!((r["mean_kappa"].as_f64().unwrap() - kappa).abs() < 1e-12);
    assert!(r["fleiss_kappa"].is_number() && r["krippendorff_alpha"].is_number());

    // The researcher page shows it too.
    let page = researcher.get(app.url("/research")).send().await.unwrap().text().await.unwrap();
    let row = page.split("data-mapping=\"binary\"").nth(1).expect("a binary agreement row");
    assert!(row.split("</tr>").next().unwrap().contains(&format!("{kappa:.3}")), "kappa {kappa:.3} not on the page");

    // The CLI prints the same JSON; the full mapping has five categories.
    let out = app.cli(&["agreement", "1", "--mapping", "binary", "--json"]);
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), r);
    let default: Value =
        researcher.get(app.url("/api/v1/studies/1/agreement")).send().await.unwrap().json().await.unwrap();
    assert_eq!(default, r, "a four_image study reports the binary mapping unless asked otherwise");
    let full: Value =
        researcher.get(app.url("/api/v1/studies/1/agreement?mapping=full")).send().await.unwrap().json().await.unwrap();
    assert_eq!(full["categories"].as_array().unwrap().len(), 5);
    assert_eq!(researcher.get(app.url("/api/v1/studies/1/agreement?mapping=odd")).send().await.unwrap().status(), 422);
    let annotator = app.login("annotator1").await;
    assert_eq!(annotator.get(&url).send().await.unwrap().status(), 403);
}

/// annotator1 says None on some captions, annotator2 on more; "A" is a
/// different candidate for each (shuffles are per annotator), so they disagree.
async fn two_annotators_answer(app: &TestApp, study: i64) {
    app.work_through("annotator1", study, |t| if t.prompt.text.len() % 3 == 0 { "none" } else { "A" }.into()).await;
    app.work_through("annotator2", study, |t| {
        if t.prompt.text.len() % 3 == 0 || t.prompt.text.len() % 4 == 0 { "none" } else { "A" }.into()
    })
    .await;
}

async fn status(app: &TestApp, researcher: &reqwest::Client, study: i64) -> Value {
    let all: Value = app.get(researcher, "/api/v1/studies/overview").await;
    all.as_array().unwrap().iter().find(|s| s["status"]["study_id"] == study).unwrap()["status"].clone()
}

#[tokio::test]
async fn model_rules_settle_disagreements_and_the_report_gives_intervals_and_reliabilities() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let both = ["annotator1", "annotator2"];
    let adj = app.create_study_ok(&researcher, &Spec::new("Adjudicated").seed(3).annotators(&both)).await;
    let ds = app.create_study_ok(&researcher, &Spec::new("DS").seed(3).annotators(&both).resolve("dawid_skene")).await;
    let mace = app.create_study_ok(&researcher, &Spec::new("MACE").seed(3).annotators(&both).resolve("mace")).await;
    for study in [adj, ds, mace] {
        two_annotators_answer(&app, study).await;
    }
    let disputed = status(&app, &researcher, adj).await["disputed"].as_u64().unwrap();
    assert!(disputed > 5, "the same answers leave {disputed} items to adjudication");
    // The models settle most disputes; one whose most probable value under
    // the model is a value neither gave waits for adjudication (no guess).
    let mut left = Vec::new();
    for study in [ds, mace] {
        let s = status(&app, &researcher, study).await;
        let (fin, waiting) = (s["final_items"].as_u64().unwrap(), s["disputed"].as_u64().unwrap());
        assert!(fin + waiting == 63 && waiting < disputed, "{s}");
        left.push(waiting);
    }

    // Against the outcome: under adjudication only agreed items are settled,
    // so each annotator agrees with every settled outcome.
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{adj}/agreement?mapping=full&resamples=0")).await;
    assert!(r.get("bootstrap").is_none(), "resamples=0 leaves the intervals out");
    let settled = 63 - disputed;
    for a in r["annotators"].as_array().unwrap() {
        assert_eq!(
            (a["answers"].as_u64(), a["settled"].as_u64(), a["agreed"].as_u64()),
            (Some(63), Some(settled), Some(settled))
        );
        assert_eq!(a["accuracy_vs_outcome"], 1.0);
        let diagonal: u64 = (0..5).map(|c| a["confusion_vs_outcome"][c][c].as_u64().unwrap()).sum();
        assert_eq!(diagonal, settled);
    }

    // Adjudications are gold in the per-person model figures, as in the fit
    // that settles a study: settling every dispute as None moves them.
    let ds_accuracy = |r: &Value| -> Vec<f64> {
        r["annotators"].as_array().unwrap().iter().map(|a| a["dawid_skene"]["accuracy"].as_f64().unwrap()).collect()
    };
    let before = ds_accuracy(&r);
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{adj}/disputes")).await;
    for d in &disputes {
        let body = serde_json::json!({ "instance_id": d["instance_id"], "value": "none" });
        let url = app.url(&format!("/api/v1/studies/{adj}/adjudicate"));
        assert_eq!(researcher.post(url).json(&body).send().await.unwrap().status(), 204);
    }
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{adj}/agreement?mapping=full&resamples=0")).await;
    let after = ds_accuracy(&r);
    assert!(after[0] < before[0] && after[1] > after[0], "annotator2's Nones were right: {before:?} -> {after:?}");

    let url = format!("/api/v1/studies/{ds}/agreement?mapping=binary&resamples=200&seed=9");
    let r: Value = app.get(&researcher, &url).await;
    let b = &r["bootstrap"];
    assert_eq!((b["resamples"].as_u64(), b["seed"].as_u64(), b["level"].as_f64()), (Some(200), Some(9), Some(0.95)));
    for (ci, point) in [
        (&b["mean_kappa"], &r["mean_kappa"]),
        (&b["krippendorff_alpha"], &r["krippendorff_alpha"]),
        (&b["pairs"][0]["kappa"], &r["pairs"][0]["kappa"]),
    ] {
        let (low, high, point) = (ci["low"].as_f64().unwrap(), ci["high"].as_f64().unwrap(), point.as_f64().unwrap());
        assert!(low < point && point < high, "{low} < {point} < {high}");
        assert_eq!(ci["defined"], 200);
    }
    assert_eq!((b["pairs"][0]["a"].as_str(), b["pairs"][0]["b"].as_str()), (Some("annotator1"), Some("annotator2")));
    let people = r["annotators"].as_array().unwrap();
    assert_eq!(people.iter().map(|a| a["name"].as_str().unwrap()).collect::<Vec<_>>(), both);
    for a in people {
        let settled = 63 - left[0];
        assert_eq!(a["settled"], settled, "every item the model settled");
        let agreed = a["agreed"].as_f64().unwrap();
        assert!((a["accuracy_vs_outcome"].as_f64().unwrap() - agreed / settled as f64).abs() < 1e-12);
        let ds_acc = a["dawid_skene"]["accuracy"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&ds_acc));
        assert_eq!(a["dawid_skene"]["confusion"].as_array().unwrap().len(), 2);
        assert!(a["mace"]["competence"].is_number() && a["mace"].get("confusion").is_none());
    }
    assert!(r.get("dawid_skene_reason").is_none() && r.get("mace_reason").is_none());
    assert_eq!(app.get::<Value>(&researcher, &url).await, r, "seeded: the same request, the same figures");

    let out =
        app.cli(&["agreement", &ds.to_string(), "--mapping", "binary", "--resamples", "200", "--seed", "9", "--json"]);
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), r);
    let table = app.cli(&["agreement", &ds.to_string(), "--mapping", "binary", "--resamples", "200", "--seed", "9"]);
    let table = text(&table.stdout);
    assert!(table.contains("95% bootstrap intervals (200 resamples of the items, seed 9)"), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("annotator2")
            && l.contains(&format!("{:.3}", people[1]["dawid_skene"]["accuracy"].as_f64().unwrap()))),
        "{table}"
    );
    let too_many =
        researcher.get(app.url(&format!("/api/v1/studies/{ds}/agreement?resamples=10001"))).send().await.unwrap();
    assert_eq!(too_many.status(), 422);
    assert!(too_many.text().await.unwrap().contains("resamples: at most 10000"));
}

/// Only the curation kinds have a binary reading: another kind's binary
/// agreement is a clear 422 from the API and the CLI (it was a 500), and a
/// spec asking for it is refused.
#[tokio::test]
async fn a_binary_reading_is_refused_where_the_kind_has_none() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let studies: Vec<Value> = app.get(&researcher, "/api/v1/studies").await;
    let ab = studies.iter().find(|s| s["name"] == "Demo: SugarCrepe A/B/Tie").expect("the demo A/B/Tie study");
    let id = ab["id"].as_i64().unwrap();
    let res = researcher.get(app.url(&format!("/api/v1/studies/{id}/agreement?mapping=binary"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("ab_tie has no binary reading"));
    let full = researcher.get(app.url(&format!("/api/v1/studies/{id}/agreement?mapping=full"))).send().await.unwrap();
    assert_eq!(full.status(), 200);
    let out = app.cli(&["agreement", &id.to_string(), "--mapping", "binary"]);
    assert!(!out.status.success() && text(&out.stderr).contains("no binary reading"), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("internal error"));
    let spec = "name = \"AB binary\"\nkind = \"ab_tie\"\ndataset = \"demo-ab-pairs\"\nannotators = \"all\"\nagreement = \"binary\"\n";
    let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("agreement") && body.contains("no binary reading"), "{body}");
}

/// Everyone answers None everywhere: MACE cannot tell a competence (any
/// fits), so it says why instead of printing its start; Dawid–Skene's rows
/// for the truths no item was fitted to are null, not zeros.
#[tokio::test]
async fn undefined_model_figures_are_null_with_their_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let spec = Spec::new("all none").annotators(&["annotator1", "annotator2"]).seed(3);
    let study = app.create_study_ok(&researcher, &spec).await;
    for who in ["annotator1", "annotator2"] {
        assert_eq!(app.work_through(who, study, |_| "none".into()).await.len(), 6);
    }
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/agreement?mapping=full&resamples=0")).await;
    let none = r["categories"].as_array().unwrap().iter().position(|c| c == "none").unwrap();
    assert!(r["mace_reason"].as_str().unwrap().starts_with("every answer is the same value"), "{r}");
    for a in r["annotators"].as_array().unwrap() {
        assert!(a["mace"].is_null(), "{a}");
        let rows = a["dawid_skene"]["confusion"].as_array().unwrap();
        for (truth, row) in rows.iter().enumerate() {
            assert_eq!(row.is_null(), truth != none, "only the None row is defined: {a}");
        }
        assert_eq!(rows[none][none], 1.0, "{a}");
    }
}
