//! "Start Step 4" on a link (Prolific-style) Step 3 study: Step 4 is a link
//! study too, with Step 3's link settings, its own completion code, and
//! none of Step 3's task-specific settings.
use crate::crowd_kit::{arrive, create_link_study, start};
use crate::helpers::TestApp;
use serde_json::Value;

#[tokio::test]
async fn a_link_step3_study_starts_a_link_step4_with_its_settings() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = "name = \"S3 link\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 11\naccess = \"link\"\nresolve = \"first\"\n\
                [link]\nbundle_size = 500\ntime_limit_minutes = 45\nhourly_wage = 13.5\nconsent = \"I agree to take part.\"\n\
                completion_code = \"STEP3CODE\"\n";
    let (s3, token) = create_link_study(&app, &researcher, spec).await;
    let before: Value = app.get(&researcher, &format!("/api/v1/studies/{s3}/link")).await;
    // One participant settles every item on an image (`resolve = "first"`).
    let p = arrive(&app, &token, s3, "p1").await;
    start(&app, &p, s3).await;
    let answered = crate::crowd_kit::answer_n(&app, &p, s3, 10_000, "A").await;
    assert!(answered > 0);

    let res = researcher.post(app.url(&format!("/api/v1/studies/{s3}/step4"))).send().await.unwrap();
    let status = res.status();
    let created: Value = res.json().await.unwrap();
    assert_eq!(status, 201, "{created}");
    let s4 = created["id"].as_i64().unwrap();
    let link: Value = app.get(&researcher, &format!("/api/v1/studies/{s4}/link")).await;
    assert_ne!(link["token"], before["token"], "{link}");
    assert_eq!(before["completion_code"], "STEP3CODE", "{before}");
    let code = link["completion_code"].as_str().unwrap_or_default();
    assert!(code.len() == 8 && code != "STEP3CODE", "Step 4 has its own code: {link}");
    assert_eq!(link["time_limit_minutes"], 45, "Step 3's settings carry over: {link}");
    // Step 3's outcomes are final now: its copies are not discarded (a
    // refit would move items Step 4 already shows), by the API or the CLI.
    let res = researcher.post(app.url(&format!("/api/v1/studies/{s3}/participants/1/discard"))).send().await.unwrap();
    let status = res.status();
    let said = res.text().await.unwrap();
    assert_eq!(status, 422, "{said}");
    assert!(said.contains("was built from this study's outcomes"), "{said}");
    let out = app.cli(&["participants", &s3.to_string(), "--discard", "1"]);
    assert!(!out.status.success(), "the CLI refuses it too");
    // A participant arrives by Step 4's link and is asked Step 4's question.
    let q = arrive(&app, link["token"].as_str().unwrap(), s4, "p2").await;
    start(&app, &q, s4).await;
    let task = app.next_task(&q, s4).await.expect("a Step 4 task");
    assert_eq!(task.kind.name(), "ambiguity", "{task:?}");
    assert_eq!(task.progress.total as usize, answered, "every survivor is an item of Step 4's one bundle");
}
