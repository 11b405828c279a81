//! The worked example kind, `caption_match` (README, "How to add a survey
//! kind"), over the real binary: a study on the demo triplets, two
//! annotators answering yes or no, and the accuracy report per subset
//! against the known answer (yes for the positive caption, no for the negative).
use crate::helpers::{text, Spec, TestApp};
use hardneg::api_types::TaskView;
use hardneg::demo::triplets::{generate, DemoTriplet};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The demo triplet a task shows and whether it shows its positive caption.
fn shown<'a>(task: &TaskView, demo: &'a [DemoTriplet]) -> (&'a DemoTriplet, bool) {
    let text = task.prompt.text.as_str();
    let t = demo.iter().find(|t| t.p1 == text || t.negative == text).expect("a demo caption as the prompt");
    (t, t.p1 == text)
}

#[tokio::test]
async fn a_caption_match_study_is_answered_and_reports_accuracy_against_the_known_answer() {
    let app = TestApp::spawn();
    let demo = generate(10, 2024);
    let researcher = app.login("researcher").await;
    // A fixed seed: each task's caption is a seeded coin, and a seed from the
    // clock showed one annotator only one kind of caption about once in 250 runs.
    let spec = Spec::new("Caption match").kind("caption_match").dataset("demo-triplets").seed(7);
    let id = app.create_study_ok(&researcher, &spec).await;
    // annotator1 says yes to everything; annotator2 is right except on swap/att.
    let mut right: HashMap<&str, Vec<(String, bool)>> = HashMap::new();
    for who in ["annotator1", "annotator2"] {
        let tasks = app
            .work_through(who, id, |task| {
                assert!(task.prompt.image_url.is_some(), "the image is shown");
                let ids: Vec<&str> = task.options.iter().map(|o| o.id.as_str()).collect();
                assert_eq!(ids, ["yes", "no"]);
                let (t, positive) = shown(task, &demo);
                let yes = match who {
                    "annotator1" => true,
                    _ => positive != (t.category.to_string() == "swap/att"),
                };
                right.entry(who).or_default().push((t.category.to_string(), yes == positive));
                if yes { "yes" } else { "no" }.to_string()
            })
            .await;
        assert_eq!(tasks.len(), 10);
        assert!(tasks.iter().any(|t| shown(t, &demo).1) && tasks.iter().any(|t| !shown(t, &demo).1), "both captions");
    }

    // Yes and No as shown, counted (annotator1 said yes to all ten).
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/progress")).await;
    let dist: Vec<(&str, i64)> = progress["distribution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["option"].as_str().unwrap(), d["count"].as_i64().unwrap()))
        .collect();
    assert_eq!((dist.len(), dist[0].0, dist[1].0, dist[0].1 + dist[1].1), (2, "yes", "no", 20), "{progress}");
    assert!(dist[0].1 >= 10, "{progress}");

    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!(
        (r["kind"].as_str(), r["statistic"].as_str(), r["setting"].as_str(), r["answers"].as_i64()),
        (Some("caption_match"), Some("accuracy"), Some("yes/no"), Some(20))
    );
    let rows = r["rows"].as_array().unwrap();
    let swap_att = rows.iter().find(|row| row["subset"] == json!({"neg_type": "swap", "subtype": "att"})).unwrap();
    let count = |who: &str, subset: Option<&str>| {
        right[who].iter().filter(|(s, ok)| *ok && subset.is_none_or(|want| s == want)).count() as i64
    };
    assert_eq!(swap_att["answers"].as_i64(), Some(4));
    assert_eq!(swap_att["correct"].as_i64(), Some(count("annotator1", Some("swap/att"))), "annotator2: none there");
    let all = rows.last().unwrap();
    assert!(all["subset"].is_null());
    assert_eq!(count("annotator2", None), 8);
    let mean = (count("annotator1", None) as f64 / 10.0 + 0.8) / 2.0;
    assert!((all["accuracy"].as_f64().unwrap() - mean).abs() < 1e-9, "{mean}: {all}");
    let cli = app.cli(&["report", &id.to_string()]);
    assert!(
        text(&cli.stdout).contains("caption_match") && text(&cli.stdout).contains("swap/att"),
        "{}",
        text(&cli.stdout)
    );
}
