//! Human-baseline studies over real HTTP: every baseline study keeps its own
//! Human row, a sample larger than the survivors is refused, and progress
//! totals count the questions each annotator will really get.
mod common;
use common::TestApp;
use serde_json::{json, Value};

async fn work_through(app: &TestApp, who: &str, study: i64) -> usize {
    let client = app.login(who).await;
    let mut n = 0;
    loop {
        let res = client.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
        if res.status() == 204 {
            return n;
        }
        let task: Value = res.json().await.unwrap();
        let url = app.url(&format!("/api/v1/tasks/{}/answer", task["task_id"]));
        let res = client.post(url).json(&json!({ "option": "A" })).send().await.unwrap();
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        n += 1;
    }
}

async fn create(researcher: &reqwest::Client, app: &TestApp, spec: &str) -> reqwest::Response {
    researcher.post(app.url("/api/v1/studies")).body(spec.to_string()).send().await.unwrap()
}

async fn get(client: &reqwest::Client, app: &TestApp, path: &str) -> (u16, Value) {
    let res = client.get(app.url(path)).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn baseline(name: &str, annotators: &str, sample: &str, group_size: usize) -> String {
    format!(
        "name = \"{name}\"\nkind = \"human_baseline\"\ndataset = \"demo\"\nsource = \"S3\"\nannotators = {annotators}\n\
         seed = 3\n[assignment]\nrule = \"groups\"\nsample = {sample}\ngroup_size = {group_size}\n"
    )
}

#[tokio::test]
async fn each_baseline_study_has_its_row_samples_are_checked_and_totals_are_real() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let step3 = "name = \"S3\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = [\"annotator1\"]\nseed = 1\n";
    let s3 = create(&researcher, &app, step3).await.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    assert_eq!(work_through(&app, "annotator1", s3).await, 63, "every demo item kept (an image each)");

    // More than the 63 survivors: refused with both numbers; "all" takes them all.
    let res = create(&researcher, &app, &baseline("too many", "[\"annotator1\"]", "74", 25)).await;
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("74") && msg.contains("63") && msg.contains("assignment.sample"), "{msg}");

    // Progress totals before anyone starts: 2 instances x 4 questions each.
    let pair = "[\"annotator1\", \"annotator2\"]";
    let res = create(&researcher, &app, &baseline("B1", pair, "4", 2)).await;
    assert_eq!(res.status(), 201);
    let b1 = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (_, progress) = get(&researcher, &app, &format!("/api/v1/studies/{b1}/progress")).await;
    assert_eq!(progress["items"], 4);
    let totals: Vec<i64> =
        progress["annotators"].as_array().unwrap().iter().map(|a| a["total"].as_i64().unwrap()).collect();
    assert_eq!(totals, [8, 8], "{progress}");
    assert_eq!(work_through(&app, "annotator1", b1).await, 8, "the total announced is the work given");

    let res = create(&researcher, &app, &baseline("B all", "[\"annotator2\"]", "\"all\"", 25)).await;
    assert_eq!(res.status(), 201);
    let b_all = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (_, progress) = get(&researcher, &app, &format!("/api/v1/studies/{b_all}/progress")).await;
    assert_eq!(progress["items"], 63, "sample = \"all\" takes every survivor");
    assert_eq!(progress["annotators"][0]["total"], 100, "a group of 25 instances is 100 questions");

    // A second, unanswered baseline does not erase the first one's row.
    let (status, report) = get(&researcher, &app, "/api/v1/compare?dataset=demo").await;
    assert_eq!(status, 200);
    let humans = report["humans"].as_array().unwrap();
    assert_eq!(humans.len(), 2, "one row per baseline study, no pooled row yet: {report}");
    assert_eq!(humans[0]["label"], "Human: B1");
    assert_eq!(humans[0]["study_id"], b1);
    assert_eq!((humans[0]["people"].as_u64(), humans[0]["instances"].as_u64()), (Some(1), Some(2)));
    assert_eq!(humans[0]["report"]["overall"]["n"], 2);
    assert_eq!(humans[1]["label"], "Human: B all");
    assert!(humans[1]["report"].is_null(), "listed with no complete answers yet");

    // Both answered: a pooled row over every complete (annotator, instance) pair.
    assert_eq!(work_through(&app, "annotator2", b1).await, 8);
    assert_eq!(work_through(&app, "annotator2", b_all).await, 100);
    let (_, report) = get(&researcher, &app, "/api/v1/compare?dataset=demo").await;
    let humans = report["humans"].as_array().unwrap();
    assert_eq!(humans.len(), 3, "{report}");
    assert_eq!(humans[0]["report"]["overall"]["n"], 4);
    assert_eq!(humans[1]["report"]["overall"]["n"], 25);
    assert_eq!(humans[2]["label"], "Human (all)");
    assert!(humans[2]["study_id"].is_null());
    assert_eq!(humans[2]["people"], 2);
    assert_eq!(humans[2]["report"]["overall"]["n"], 29);

    // Naming the source: only that study's row; a study of another kind is refused.
    let (_, only) = get(&researcher, &app, &format!("/api/v1/compare?dataset=demo&baseline={b_all}")).await;
    let labels: Vec<&str> = only["humans"].as_array().unwrap().iter().map(|h| h["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Human: B all"]);
    let (_, both) =
        get(&researcher, &app, &format!("/api/v1/compare?dataset=demo&baseline={b1}&baseline={b_all}")).await;
    assert_eq!(both["humans"].as_array().unwrap().len(), 3);
    let (status, err) = get(&researcher, &app, &format!("/api/v1/compare?dataset=demo&baseline={s3}")).await;
    assert_eq!(status, 422);
    assert!(err["error"].as_str().unwrap().contains("not a human-baseline study"), "{err}");
}
