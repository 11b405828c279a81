//! The benchmark's block group: the approved finishers join it as soon as
//! their approvals apply; one who finished in hardneg and never submitted on
//! Prolific (an audit's study) holds nobody else out of it.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{answer_all, join, post, Hardneg, Way};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

const SPEC: &str = r#"name = "grouped"
kind = "four_image"
dataset = "demo"
seed = 5
access = "link"

[link]
bundle_size = 7
copies = 1
consent = "I agree to take part."
completion_code = "GRP00001"
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]

[prolific]
estimated_minutes = 5
hourly_rate = 9.0
"#;

#[tokio::test]
async fn approved_finishers_join_the_group_without_waiting_for_one_who_never_submits() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start_with(&["--async-delay-ms", "50"]).await;
    let data = tmp.path().join("data");
    let env = vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "0.5".to_string()),
        ("HARDNEG_PROLIFIC_WAIT_MS", "200".to_string()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".to_string()),
    ];
    let app = Hardneg::start(&data, &env, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let res = r.post(app.url("/api/v1/studies")).body(SPEC).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();

    // Three finish in hardneg; two submit their code, the third never submits.
    let mut submitted = HashSet::new();
    for n in 0..3 {
        let a = fake.arrive(&pid, None).await;
        let (c, _, _) = join(&app.base, &a.study_url, Way::Careful).await;
        let code = answer_all(&app.base, &c, study, Way::Careful).await;
        if n < 2 {
            fake.submit(&a.submission_id, Some(&code)).await;
            submitted.insert(a.participant_id.clone());
        }
    }
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!(s, 200, "{v}");
    let mut members = HashSet::new();
    for _ in 0..100 {
        let st = fake.state().await;
        members = st["groups"][0]["members"]
            .as_array()
            .map(|m| m.iter().map(|p| p.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        if !members.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(members, submitted, "the two approved joined; the one who never submitted holds nobody out");
    let url = app.url(&format!("/api/v1/studies/{study}/prolific"));
    let status: Value = r.get(url).send().await.unwrap().json().await.unwrap();
    let open: Vec<&Value> =
        status["outbox"].as_array().unwrap().iter().filter(|o| o["action"] == "group_add").collect();
    assert_eq!(open.len(), 1, "the third waits in a row of its own: {status}");
}
