//! Prolific answers a bulk approval "in progress" and approves later: the
//! submissions still awaiting review at the read-back are not a lost call
//! to send again until its grace has passed (audit R: 25 bulk approvals of
//! three submissions in two minutes).
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{answer_all, join, post, Hardneg, Way};
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

const SPEC: &str = r#"name = "approve once"
kind = "four_image"
dataset = "demo"
seed = 13
access = "link"
[link]
bundle_size = 3
copies = 2
consent = "I agree to take part."
completion_code = "DONE0003"
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]
[prolific]
estimated_minutes = 6
hourly_rate = 9.0
budget_cap = "500.00"
"#;

#[tokio::test]
async fn a_bulk_approval_in_progress_is_sent_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start_with(&["--async-delay-ms", "600000"]).await;
    let env = vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "3600".into()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".into()),
        ("HARDNEG_PROLIFIC_WAIT_MS", "200".into()),
    ];
    let app = Hardneg::start(&tmp.path().join("data"), &env, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let res = r.post(app.url("/api/v1/studies")).body(SPEC).send().await.unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let a = fake.arrive(&pid, None).await;
        let (c, hs, _) = join(&app.base, &a.study_url, Way::Careful).await;
        let code = answer_all(&app.base, &c, hs, Way::Careful).await;
        fake.submit(&a.submission_id, Some(&code)).await;
    }
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!(s, 200, "{v}");
    let approvals = || async { fake.state().await["bulk_approvals"].as_array().unwrap().len() };
    let deadline = Instant::now() + Duration::from_secs(30);
    while approvals().await == 0 {
        assert!(Instant::now() < deadline, "the approval was never sent");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(approvals().await, 1, "an approval in progress was sent again");

    // Prolific applies it: the read-back confirms both, and nothing is open.
    fake.tick().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s: Value =
            r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
        if s["outbox"].as_array().unwrap().iter().all(|l| l["state"] == "done") {
            break;
        }
        assert!(Instant::now() < deadline, "the approvals were not confirmed: {}", s["outbox"]);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(approvals().await, 1);
}
