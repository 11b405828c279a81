//! Adaptive stopping that keeps its promise (issue 34), over real HTTP: a
//! person's trust is earned, so one answer never settles an item; what the
//! stop rule settled stands under a model `resolve`, which settles only
//! items left at `max` and only on a value somebody gave; every item's
//! posterior, None included, is in the adaptive endpoint and the export.
use crate::helpers::{untar, Spec, TestApp};
use hardneg::api_types::TaskView;
use serde_json::Value;
use std::collections::HashMap;

/// The item's content as shown (caption and sorted image URLs), to choose by.
pub(crate) fn key(t: &TaskView) -> String {
    let mut images: Vec<String> = t.options.iter().filter_map(|o| o.image_url.clone()).collect();
    images.sort();
    format!("{}|{}", t.prompt.text, images.join(","))
}

fn hash(key: &str) -> u32 {
    key.bytes().map(u32::from).fold(7, |h, b| h.wrapping_mul(31).wrapping_add(b))
}

/// The option with the first image URL, or None: what a careful person
/// picks for the item (a fixed function of its content).
pub(crate) fn careful(t: &TaskView) -> String {
    if hash(&key(t)).is_multiple_of(3) {
        return "none".into();
    }
    let first = t.options.iter().filter(|o| o.image_url.is_some()).min_by_key(|o| o.image_url.clone());
    first.unwrap().id.clone()
}

/// The export's `study-<id>-adaptive.csv`, as rows of column -> value.
async fn adaptive_csv(app: &TestApp, researcher: &reqwest::Client, study: i64) -> Vec<HashMap<String, String>> {
    let res = researcher.get(app.url("/api/v1/datasets/demo/export?format=jsonl&stage=step3")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let files = untar(&res.bytes().await.unwrap());
    let name = files.keys().find(|k| k.ends_with(&format!("study-{study}-adaptive.csv"))).expect("the adaptive file");
    let mut reader = csv::Reader::from_reader(files[name].as_slice());
    let head: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    reader.records().map(|r| head.iter().cloned().zip(r.unwrap().iter().map(str::to_string)).collect()).collect()
}

/// Someone whose every answer so far agrees with themselves has earned
/// nothing: with `min = 1`, each item still wants a second person, where
/// the old one-coin rule trusted a lone annotator at 0.99 after two answers.
#[tokio::test]
async fn one_answer_never_settles_an_item_however_consistent_its_giver() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "12"]);
    app.add_user("ann3", "annotator", "a long password three");
    let researcher = app.login("researcher").await;
    let spec = Spec::new("thin evidence")
        .annotators(&["annotator1", "annotator2", "ann3"])
        .line("[assignment.adaptive]\nmin = 1\nmax = 3\nstop = \"posterior\"\nthreshold = 0.9");
    let study = app.create_study_ok(&researcher, &spec).await;
    assert_eq!(app.work_through("annotator1", study, careful).await.len(), 12);
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    assert_eq!(report["stopped"]["collecting"], 12, "no item stops on one answer: {report}");
    assert!(report["items"].as_array().unwrap().iter().all(|i| i["wanted"] == 2 && i["answers"] == 1), "{report}");
    // So the next annotator gets every item.
    assert_eq!(app.work_through("annotator2", study, careful).await.len(), 12);
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    for item in report["items"].as_array().unwrap() {
        assert!(item["answers"].as_i64().unwrap() >= 2, "{item}");
    }
}

/// Under `resolve = "dawid_skene"` the stop rule's stops are what gets
/// settled (never re-decided by the model); the model settles only items
/// left at `max`, on a value one of their answers gave. Every item, None
/// ones included, has its posterior in the endpoint and in the export.
#[tokio::test]
async fn a_model_resolve_settles_only_what_reached_max_and_every_item_has_a_posterior() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "24"]);
    app.add_user("ann3", "annotator", "a long password three");
    let researcher = app.login("researcher").await;
    let spec = Spec::new("model after stops")
        .annotators(&["annotator1", "annotator2", "ann3"])
        .resolve("dawid_skene")
        .seed(3)
        .line("[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"posterior\"\nthreshold = 0.9");
    let study = app.create_study_ok(&researcher, &spec).await;
    // Two careful people who differ on one item in five.
    let split = |t: &TaskView| hash(&key(t)) % 5 == 1;
    app.work_through("annotator1", study, careful).await;
    app.work_through("annotator2", study, |t| if split(t) { "none".into() } else { careful(t) }).await;
    // A third who picks yet another image where they split: three values, so
    // those items reach `max` and the model settles them.
    let last_image = |t: &TaskView| {
        let last = t.options.iter().filter(|o| o.image_url.is_some()).max_by_key(|o| o.image_url.clone());
        last.unwrap().id.clone()
    };
    app.work_through("ann3", study, |t| if split(t) { last_image(t) } else { careful(t) }).await;

    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let items = report["items"].as_array().unwrap();
    assert_eq!(report["stopped"]["collecting"], 0, "{report}");
    let stop: HashMap<i64, &Value> = items.iter().map(|i| (i["instance_id"].as_i64().unwrap(), i)).collect();
    for item in items {
        let p = item["posterior"].as_f64().unwrap_or_else(|| panic!("every item has a posterior: {item}"));
        assert!(p > 0.0 && p <= 1.0, "{item}");
    }
    assert!(items.iter().any(|i| i["value"] == "none"), "some items settle as None: {report}");
    assert!(report["stopped"]["confident"].as_i64().unwrap() >= 3, "{report}");

    let rows = adaptive_csv(&app, &researcher, study).await;
    assert_eq!(rows.len(), 24);
    let (mut kept, mut by_model) = (0, 0);
    for row in &rows {
        let item = stop[&row["instance_id"].parse::<i64>().unwrap()];
        assert_eq!(row["study"], study.to_string(), "the study's id, as in the file's name");
        // The endpoint reports the settled value, as the export does (issue 52).
        assert_eq!(row["settled_value"], item["value"].as_str().unwrap(), "{row:?}");
        let p: f64 = row["settled_posterior"].parse().unwrap_or_else(|_| panic!("a posterior, None included: {row:?}"));
        assert!((p - item["posterior"].as_f64().unwrap()).abs() < 1e-6, "{row:?}");
        assert_eq!(row["settled_posterior_model"], item["posterior_model"].as_str().unwrap(), "{row:?}");
        let given: Vec<&str> = row["votes"].split(';').filter_map(|v| v.split_once(':').map(|(_, v)| v)).collect();
        assert!(given.contains(&row["settled_value"].as_str()), "settled on a value somebody gave: {row:?}");
        if item["reason"] == "confident" {
            kept += 1;
            assert_eq!(row["settled_value"], row["stop_value"], "a confident stop is what gets settled: {row:?}");
            assert_eq!(row["settled_posterior"], row["stop_posterior"], "{row:?}");
            assert_eq!(row["settled_posterior_model"], "earned_reliability", "{row:?}");
            assert_ne!(row["resolved_by"], "dawid_skene", "{row:?}");
        } else {
            by_model += 1;
            assert_eq!(row["resolved_by"], "dawid_skene", "{row:?}");
            assert_eq!(row["settled_posterior_model"], "dawid_skene", "{row:?}");
            assert_eq!(
                (row["stop_value"].as_str(), row["stop_posterior"].as_str()),
                ("", ""),
                "at max the rule chose nothing"
            );
        }
    }
    assert!(kept > 0 && by_model > 0, "both kinds of items: {rows:?}");
}

#[tokio::test]
async fn allow_unchosen_is_a_named_option_for_model_resolves_only() {
    let mut app = TestApp::spawn();
    app.add_user("ann3", "annotator", "a long password three");
    let researcher = app.login("researcher").await;
    let table = |extra: &str| format!("[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n{extra}");
    let three = ["annotator1", "annotator2", "ann3"];
    let cases = [
        (
            Spec::new("u1").annotators(&three).line(&table("allow_unchosen = true")),
            "assignment.adaptive.allow_unchosen",
        ),
        (Spec::new("u2").annotators(&three).resolve("mace").line(&table("allow_unchosen = \"yes\"")), "allow_unchosen"),
        (Spec::new("u3").annotators(&three).resolve("mace").line(&table("allow_unchosn = true")), "allow_unchosn"),
    ];
    for (spec, want) in cases {
        let res = app.create_study(&researcher, &spec).await;
        assert_eq!(res.status(), 422);
        let body = res.text().await.unwrap();
        assert!(body.contains(want), "{want}: {body}");
    }
    let spec = Spec::new("u4").annotators(&three).resolve("dawid_skene").line(&table("allow_unchosen = true"));
    let study = app.create_study_ok(&researcher, &spec).await;
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    assert_eq!(report["settings"]["allow_unchosen"], true, "{report}");
}
