//! The curation pipeline over real HTTP: a Step 3 study with a pair overlap,
//! the adjudication queue, Step 4 built from the survivors, and the funnel.
mod common;
use common::TestApp;
use serde_json::{json, Value};
use std::collections::HashSet;

const STEP3: &str = r#"
name = "S3 pairs"
kind = "four_image"
dataset = "demo"
seed = 11
[assignment]
rule = "pairs"
pairs = [["annotator1", "annotator2"]]
overlap = 10
"#;

/// Every task of the caller's queue; `choose` picks the option from the task.
async fn work_through(app: &TestApp, who: &str, study: i64, mut choose: impl FnMut(&Value) -> String) -> Vec<Value> {
    let client = app.login(who).await;
    let mut seen = Vec::new();
    loop {
        let res = client.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
        if res.status() == 204 {
            return seen;
        }
        assert_eq!(res.status(), 200);
        let task: Value = res.json().await.unwrap();
        let option = choose(&task);
        let res = client
            .post(app.url(&format!("/api/v1/tasks/{}/answer", task["task_id"])))
            .json(&json!({ "option": option }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        seen.push(task);
    }
}

async fn create(researcher: &reqwest::Client, app: &TestApp, spec: &str) -> reqwest::Response {
    researcher.post(app.url("/api/v1/studies")).body(spec.to_string()).send().await.unwrap()
}

async fn get(client: &reqwest::Client, app: &TestApp, path: &str) -> Value {
    let res = client.get(app.url(path)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res.json().await.unwrap()
}

#[tokio::test]
async fn step3_pairs_adjudication_step4_and_the_funnel() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let annotator = app.login("annotator1").await;
    assert_eq!(create(&annotator, &app, STEP3).await.status(), 403, "annotators cannot create studies");
    let res = create(&researcher, &app, STEP3).await;
    assert_eq!(res.status(), 201);
    let s3 = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    assert_eq!(create(&researcher, &app, STEP3).await.status(), 422, "names are unique");

    // annotator1 always takes A (an image), annotator2 always None: the ten
    // shared items are all disagreements.
    let t1 = work_through(&app, "annotator1", s3, |_| "A".into()).await;
    let t2 = work_through(&app, "annotator2", s3, |_| "none".into()).await;
    let ids =
        |ts: &[Value]| ts.iter().map(|t| t["prompt"]["text"].as_str().unwrap().to_string()).collect::<HashSet<_>>();
    let shared = ids(&t1).intersection(&ids(&t2)).count();
    assert_eq!(shared, 10);
    assert_eq!(t1.len() + t2.len(), 63 + 10, "every item once, the overlap twice");
    let candidate_urls: HashSet<String> = t1
        .iter()
        .chain(&t2)
        .flat_map(|t| t["options"].as_array().unwrap().iter().filter_map(|o| o["image_url"].as_str().map(String::from)))
        .collect();

    // Agreement uses the spec's default mapping for Step 3: binary.
    let agreement = get(&researcher, &app, &format!("/api/v1/studies/{s3}/agreement")).await;
    assert_eq!(agreement["mapping"], "binary");
    assert_eq!(agreement["pairs"][0]["n"], 10);
    assert_eq!(agreement["pairs"][0]["observed"], 0.0);

    let f = get(&researcher, &app, "/api/v1/datasets/demo/funnel").await;
    let kept_alone = (t1.len() - 10) as u64;
    let dropped_alone = (t2.len() - 10) as u64;
    assert_eq!(f["overall"]["candidates"], 63);
    assert_eq!(f["overall"]["step3_kept"], kept_alone);
    assert_eq!(f["overall"]["step3_discarded"], dropped_alone);
    assert_eq!(f["overall"]["step3_open"], 10, "disputes wait for adjudication");
    assert_eq!(f["step3_study"], "S3 pairs");

    let step4 = "name = \"S4\"\nkind = \"ambiguity\"\ndataset = \"demo\"\nsource = \"S3 pairs\"\nannotators = [\"annotator1\"]\nseed = 5\n".to_string();
    let res = create(&researcher, &app, &step4).await;
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("10 for adjudication"), "{msg}");
    // The research page's "Start Step 4" route checks the same.
    let res = researcher.post(app.url(&format!("/api/v1/studies/{s3}/step4"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("10 for adjudication"), "{msg}");

    // The queue lists each disagreement with who chose what; settle half
    // for the image annotator1 chose and half for None.
    let res = annotator.get(app.url(&format!("/api/v1/studies/{s3}/disputes"))).send().await.unwrap();
    assert_eq!(res.status(), 403, "annotators do not adjudicate");
    let disputes = get(&researcher, &app, &format!("/api/v1/studies/{s3}/disputes")).await;
    let disputes = disputes.as_array().unwrap();
    assert_eq!(disputes.len(), 10);
    let mut kept_by_adjudication = 0;
    for (i, d) in disputes.iter().enumerate() {
        let choices = d["choices"].as_array().unwrap();
        assert_eq!(choices.len(), 5);
        let none = choices.iter().find(|c| c["value"] == "none").unwrap();
        assert_eq!(none["chosen_by"], json!(["annotator2"]));
        let image = choices.iter().find(|c| c["chosen_by"] == json!(["annotator1"])).unwrap();
        assert!(candidate_urls.contains(image["image_url"].as_str().unwrap()));
        let value = if i % 2 == 0 {
            kept_by_adjudication += 1;
            image["value"].clone()
        } else {
            json!("none")
        };
        let res = researcher
            .post(app.url(&format!("/api/v1/studies/{s3}/adjudicate")))
            .json(&json!({ "instance_id": d["instance_id"], "value": value }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204);
    }
    let bad = researcher
        .post(app.url(&format!("/api/v1/studies/{s3}/adjudicate")))
        .json(&json!({"instance_id": 1, "value": "7"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    assert_eq!(get(&researcher, &app, &format!("/api/v1/studies/{s3}/disputes")).await, json!([]));

    // Step 4 over the survivors: the real image against the chosen one.
    let res = create(&researcher, &app, &step4).await;
    assert_eq!(res.status(), 201);
    let s4 = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let mut n = 0;
    let (mut real, mut generated, mut both) = (0u64, 0u64, 0u64);
    let t4 = work_through(&app, "annotator1", s4, |task| {
        n += 1;
        assert_eq!(task["kind"], "ambiguity");
        let opts = task["options"].as_array().unwrap();
        assert_eq!(opts.len(), 3);
        let is_generated = |o: &Value| candidate_urls.contains(o["image_url"].as_str().unwrap_or(""));
        assert_eq!(opts.iter().filter(|o| is_generated(o)).count(), 1, "exactly one generated image");
        match n % 3 {
            0 => {
                both += 1;
                "both".into()
            }
            1 => {
                real += 1;
                opts.iter().find(|o| o["image_url"].is_string() && !is_generated(o)).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .into()
            }
            _ => {
                generated += 1;
                opts.iter().find(|o| is_generated(o)).unwrap()["id"].as_str().unwrap().into()
            }
        }
    })
    .await;
    assert_eq!(t4.len() as u64, kept_alone + kept_by_adjudication);
    let f = get(&researcher, &app, "/api/v1/datasets/demo/funnel").await;
    let o = &f["overall"];
    assert_eq!(o["step3_kept"], kept_alone + kept_by_adjudication);
    assert_eq!(o["step3_open"], 0);
    assert_eq!(
        (o["step4_kept"].as_u64(), o["step4_ambiguous"].as_u64(), o["step4_both"].as_u64()),
        (Some(real), Some(generated), Some(both))
    );
    assert_eq!(f["step4_study"], "S4");
    let per_type: u64 = f["by_type"].as_object().unwrap().values().map(|c| c["step4_kept"].as_u64().unwrap()).sum();
    assert_eq!(per_type, real);

    // The CLI lists the same figures.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hardneg"))
        .args(["datasets", "--json", "--data-dir"])
        .arg(&app.data_dir)
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["overall"], f["overall"]);

    // "Start Step 4" over the finished Step 3: a study over its survivors.
    let step4_route = format!("/api/v1/studies/{s3}/step4");
    assert_eq!(annotator.post(app.url(&step4_route)).send().await.unwrap().status(), 403);
    let res = researcher.post(app.url(&step4_route)).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    assert_eq!(created["name"], "S3 pairs - Step 4");
    let progress = get(&researcher, &app, &format!("/api/v1/studies/{}/progress", created["id"])).await;
    assert_eq!(progress["items"], kept_alone + kept_by_adjudication, "{progress}");
    assert_eq!(progress["kind"], "ambiguity");
}
