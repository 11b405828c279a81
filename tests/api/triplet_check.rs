//! SugarCrepe++'s expert triplet check over the real binary: two experts
//! answer the demo triplets over HTTP (one by the no-JS form post), bad
//! corrections are refused with the field named and nothing stored, the
//! disagreements (verdict, tag, two different corrections) reach the
//! adjudication queue, a third person settles them, and the report, the CLI
//! and the export carry the verdicts, the corrected P2s and the tags.
use crate::helpers::{text, TestApp};
use crate::odd_one_out::export_candidates;
use hardneg::api_types::{AnswerRequest, TaskView};
use hardneg::demo::triplets::generate;
use hardneg::kinds::triplet_check::read_prompt;
use reqwest::Client;
use serde_json::{json, Value};
use std::collections::HashMap;

const STUDY: &str = "Demo: SugarCrepe++ triplet check";
pub(crate) const FIXED: &str = "A blue square to the right of a red circle, nothing else.";
pub(crate) const OTHER_FIX: &str = "A square, blue, right of a red circle.";

/// What each expert answers on demo triplet `i`: (value, correction).
pub(crate) fn plan(who: &str, i: usize) -> (&'static str, Option<&'static str>) {
    let first = who == "annotator1";
    match i {
        // Both correct P2 the same way, up to spaces.
        1 if first => ("valid:hallucination", Some(FIXED)),
        1 => ("valid:hallucination", Some("  A blue square to the  right of a red circle, nothing else. ")),
        // The verdict differs.
        2 if first => ("valid", None),
        2 => ("not_valid:change_of_meaning", None),
        // The tag differs.
        3 if first => ("not_valid:hallucination", None),
        3 => ("not_valid:spatial_mismatch", None),
        // Both correct P2, differently.
        4 if first => ("valid:hallucination", Some(FIXED)),
        4 => ("valid:hallucination", Some(OTHER_FIX)),
        _ => ("valid", None),
    }
}

pub(crate) async fn post_answer(
    app: &TestApp,
    c: &Client,
    task: i64,
    option: &str,
    text: Option<&str>,
) -> reqwest::Response {
    let body = AnswerRequest {
        option: option.into(),
        elapsed_ms: Some(900),
        text: text.map(str::to_string),
        texts: Default::default(),
    };
    c.post(app.url(&format!("/api/v1/tasks/{task}/answer"))).json(&body).send().await.unwrap()
}

/// The demo triplet's index a task shows, found by its P1.
pub(crate) fn index_of(task: &TaskView, p1s: &HashMap<String, usize>) -> usize {
    let (p1, _, _) = read_prompt(&task.prompt.text).expect("the prompt is the triplet");
    p1s[p1]
}

#[tokio::test]
async fn two_experts_disagree_a_third_settles_and_the_export_carries_p2_and_tags() {
    let app = TestApp::spawn();
    let demo = generate(10, 2024);
    let p1s: HashMap<String, usize> = demo.iter().enumerate().map(|(i, t)| (t.p1.clone(), i)).collect();
    let researcher = app.login("researcher").await;
    let study = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).expect("the demo study").id;
    let no_redirects =
        Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();

    for who in ["annotator1", "annotator2"] {
        let c = if who == "annotator2" {
            app.log_in(&no_redirects, who).await;
            no_redirects.clone()
        } else {
            app.login(who).await
        };
        let mut answered = 0;
        while let Some(task) = app.next_task(&c, study.get()).await {
            let i = index_of(&task, &p1s);
            let t = &demo[i];
            assert_eq!(read_prompt(&task.prompt.text), Some((t.p1.as_str(), t.p2.as_str(), t.negative.as_str())));
            assert!(task.prompt.image_url.is_some(), "the expert sees the image");
            if answered == 0 && who == "annotator1" {
                // Bad corrections: refused with the field named, nothing stored.
                let long = "x".repeat(301);
                for (option, text, says) in [
                    ("valid:hallucination", Some(long.as_str()), "301 characters; at most 300"),
                    ("valid:hallucination", Some("a\u{1b}[31m red"), "control character U+001B"),
                    ("valid:hallucination", None, "required with this answer"),
                    ("valid", Some(FIXED), "must be empty"),
                    ("not_valid:hallucination", Some(FIXED), "must be empty"),
                ] {
                    let res = post_answer(&app, &c, task.task_id.get(), option, text).await;
                    assert_eq!(res.status(), 422, "{option} {text:?}");
                    let body = res.text().await.unwrap();
                    assert!(
                        body.contains("Corrected P2 (field") && body.contains("corrected_p2") && body.contains(says),
                        "{body}"
                    );
                }
                // The same text sent two ways, one of them to be dropped: refused.
                let both = json!({"option": "valid:hallucination", "text": FIXED, "texts": {"corrected_p2": "a cat"}});
                let res = c.post(app.url(&format!("/api/v1/tasks/{}/answer", task.task_id))).json(&both).send();
                let res = res.await.unwrap();
                assert_eq!(res.status(), 422);
                assert!(res.text().await.unwrap().contains("`text` or in `texts`, not both"));
                let res = post_answer(&app, &c, task.task_id.get(), "not_valid", None).await;
                assert_eq!(res.status(), 422, "not valid needs a tag");
                let body = res.text().await.unwrap();
                assert!(
                    body.contains("Not valid needs an error tag: one of Negligible change (negligible_change)"),
                    "{body}"
                );
                let again = app.next_task(&c, study.get()).await.unwrap();
                assert_eq!((again.task_id, again.progress.done), (task.task_id, 0), "nothing was stored");
            }
            let (option, correction) = plan(who, i);
            if who == "annotator2" && i == 1 {
                // The no-JS form: verdict button, tag radio and text box in one post.
                let (verdict, tag) = option.split_once(':').unwrap();
                // Not valid with no tag picked: the page says the rule, in the card's words.
                let untagged =
                    [("task_id", task.task_id.to_string()), ("option", "not_valid".into()), ("tag", "".into())];
                let url = app.url(&format!("/annotate/{study}/answer"));
                let res = c.post(&url).header("origin", app.base.clone()).form(&untagged).send().await.unwrap();
                assert_eq!(res.status(), 422);
                let page = res.text().await.unwrap();
                assert!(page.contains("Not valid needs an error tag"), "{page}");
                let form = [
                    ("task_id", task.task_id.to_string()),
                    ("option", verdict.to_string()),
                    ("tag", tag.to_string()),
                    ("text", correction.unwrap().to_string()),
                ];
                let res = c
                    .post(app.url(&format!("/annotate/{study}/answer")))
                    .header("origin", app.base.clone())
                    .form(&form)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 303);
            } else {
                let res = post_answer(&app, &c, task.task_id.get(), option, correction).await;
                assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
            }
            answered += 1;
        }
        assert_eq!(answered, 10, "{who} checks every triplet");
    }

    // The disagreements wait for a decision, with both corrections to pick from.
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    let id_of = |i: usize| -> i64 {
        disputes
            .iter()
            .find(|d| read_prompt(d["prompt"].as_str().unwrap()).unwrap().0 == demo[i].p1)
            .unwrap_or_else(|| panic!("triplet {i} is not disputed: {disputes:?}"))["instance_id"]
            .as_i64()
            .unwrap()
    };
    assert_eq!(disputes.len(), 3, "verdict, tag and corrections differ: {disputes:#?}");
    let (verdict, tag, texts) = (id_of(2), id_of(3), id_of(4));
    let d4 = disputes.iter().find(|d| d["instance_id"] == texts).unwrap();
    assert_eq!(d4["text_label"], "Corrected P2");
    let offered: Vec<(&str, &str)> = d4["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["annotator"].as_str().unwrap(), t["text"].as_str().unwrap()))
        .collect();
    assert_eq!(offered, [("annotator1", FIXED), ("annotator2", OTHER_FIX)]);

    // A third person settles them; the final P2 obeys the answers' rules.
    let settle = |instance: i64, value: &str, text: Option<&str>| {
        let body = json!({ "instance_id": instance, "value": value, "text": text });
        researcher.post(app.url(&format!("/api/v1/studies/{study}/adjudicate"))).json(&body).send()
    };
    let res = settle(texts, "valid:hallucination", None).await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("corrected_p2"));
    assert_eq!(settle(tag, "not_valid:spatial_mismatch", Some("x")).await.unwrap().status(), 422);
    for (instance, value, text) in [
        (verdict, "valid:superfluous_detail", Some("A red circle left of a blue square.")),
        (tag, "not_valid:spatial_mismatch", None),
        (texts, "valid:hallucination", Some(OTHER_FIX)),
    ] {
        let res = settle(instance, value, text).await.unwrap();
        assert_eq!(res.status(), 204, "{}", res.text().await.unwrap());
    }
    let left: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert!(left.is_empty(), "{left:?}");

    // The report: valid share, tag counts, kappa on the verdict.
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/report")).await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("validation"), Some(20)));
    let all = r["rows"].as_array().unwrap().last().unwrap();
    assert!(all["subset"].is_null());
    let counts: Vec<i64> =
        ["items", "settled", "valid", "corrected", "not_valid"].iter().map(|k| all[k].as_i64().unwrap()).collect();
    assert_eq!(counts, [10, 10, 6, 3, 1]);
    assert!((all["valid_share"].as_f64().unwrap() - 0.9).abs() < 1e-12);
    let tag_count = |t: &str| {
        let c = r["tags"].as_array().unwrap().iter().find(|c| c["tag"] == t).unwrap();
        (c["settled"].as_i64().unwrap(), c["answers"].as_i64().unwrap())
    };
    assert_eq!(tag_count("hallucination"), (2, 5));
    assert_eq!(tag_count("spatial_mismatch"), (1, 1));
    assert_eq!(tag_count("superfluous_detail"), (1, 0));
    // Verdicts: annotator1 not valid on 3 only, annotator2 on 2 and 3: p_o = 9/10,
    // p_e = 0.9·0.8 + 0.1·0.2 = 0.74, kappa = 0.16 / 0.26.
    let kappa = r["mean_kappa"].as_f64().unwrap();
    assert!((kappa - 0.16 / 0.26).abs() < 1e-12, "{kappa}");
    let cli = app.cli(&["report", &study.to_string()]);
    let out = text(&cli.stdout);
    assert!(out.contains("mean kappa on the verdict: 0.615") && out.contains("hallucination"), "{out}");

    // The export: per triplet the final verdict, P2, tag and who settled it how.
    let dir = export_candidates(&app, "demo-triplets");
    let mut reader = csv::Reader::from_path(dir.join(format!("study-{study}-triplets.csv"))).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: HashMap<String, csv::StringRecord> =
        reader.records().map(Result::unwrap).map(|r| (r[col("caption")].to_string(), r)).collect();
    assert_eq!(rows.len(), 10);
    let row = |i: usize, c: &str| rows[&demo[i].p1][col(c)].to_string();
    assert_eq!(
        (row(0, "verdict"), row(0, "final_p2"), row(0, "p2_corrected")),
        ("valid".into(), demo[0].p2.clone(), "false".into())
    );
    assert_eq!(row(0, "settled_by"), "unanimous");
    assert_eq!(
        (row(1, "tag"), row(1, "final_p2"), row(1, "p2_corrected")),
        ("hallucination".into(), FIXED.into(), "true".into())
    );
    assert_eq!((row(4, "final_p2"), row(4, "settled_by")), (OTHER_FIX.into(), "adjudication by researcher".into()));
    assert_eq!(
        (row(3, "verdict"), row(3, "tag"), row(3, "final_p2")),
        ("not_valid".into(), "spatial_mismatch".into(), String::new())
    );
    assert_eq!(row(2, "final_value"), "valid:superfluous_detail");
    let given: Value = serde_json::from_str(&row(4, "answers")).unwrap();
    assert_eq!(given[1], json!({ "annotator": "annotator2", "value": "valid:hallucination", "text": OTHER_FIX }));
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains(STUDY) && card.contains("mean kappa on the verdict"), "{card}");
}
