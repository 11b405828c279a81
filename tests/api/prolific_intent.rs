//! The researcher's last word stands (audit AY): a PAUSE whose answer was
//! lost, or one throttled between two resumes in the same second, never
//! pauses a study resumed since; auto-increase never reopens a study the
//! researcher stopped; and a bonus pay throttled while another round of the
//! same amount was paid is read back against what the submission showed
//! just before its own send.
use crate::prolific_bonus_doubt::{payments, SPEC};
use crate::prolific_kit::{post, Published};
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

async fn status(p: &Published) -> Value {
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific", p.study));
    p.researcher.get(url).send().await.unwrap().json().await.unwrap()
}

/// The answers Prolific gave to the study's transitions, in order.
async fn transitions(p: &Published) -> Vec<Value> {
    p.fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["method"] == "POST" && q["path"].as_str().is_some_and(|path| path.ends_with("/transition/")))
        .map(|q| q["status"].clone())
        .collect()
}

/// Pay calls Prolific was sent, answered or not.
async fn pay_calls(p: &Published) -> usize {
    let state = p.fake.state().await;
    let reqs = state["requests"].as_array().unwrap().clone();
    reqs.into_iter().filter(|q| q["path"].as_str().is_some_and(|s| s.ends_with("/pay/"))).count()
}

async fn fake_status(p: &Published) -> Value {
    let state = p.fake.state().await;
    state["studies"].as_array().unwrap().iter().find(|s| s["id"] == p.pid.as_str()).unwrap()["status"].clone()
}

#[tokio::test]
async fn a_pause_whose_answer_was_lost_does_not_pause_a_study_resumed_since() {
    // The lost PAUSE is read back only after 3 s: the resume comes first.
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BACKOFF_MS", "3000")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/transition", p.study));
    p.fake.fault("POST", "/api/v1/studies/*/transition/", "503", 1).await;
    let pause = {
        let (r, url) = (p.researcher.clone(), url.clone());
        tokio::spawn(async move { post(&r, &url, Some(json!({ "action": "PAUSE" }))).await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while transitions(&p).await.len() < 2 {
        assert!(Instant::now() < deadline, "the PAUSE never reached Prolific");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "START" }))).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{v}");
    let _ = pause.await.unwrap();
    // Past the PAUSE's read-back: it was not sent again.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(transitions(&p).await, [json!(200), json!(503)], "PUBLISH, then the lost PAUSE, never again");
    assert_eq!(fake_status(&p).await, "ACTIVE");
    let open: Vec<Value> = status(&p).await["outbox"].as_array().unwrap().clone();
    assert!(open.iter().all(|l| l["action"] != "transition"), "a transition is still queued: {open:?}");
}

#[tokio::test]
async fn two_resumes_in_one_second_are_two_intents() {
    // A backoff whose cap keeps the hour's Retry-After past the command's minute.
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BACKOFF_MS", "200")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/transition", p.study));
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "PAUSE" }))).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("PAUSED")), "{v}");
    // Resume, a PAUSE throttled for an hour, resume again: all in one second.
    while SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_millis() > 100 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "START" }))).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{v}");
    let rule = json!({"method": "POST", "path": "/api/v1/studies/*/transition/", "fault": "429", "retry_after": 3600});
    p.fake.fault_with(rule).await;
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "PAUSE" }))).await;
    assert_eq!(s, 422, "{v}");
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "START" }))).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{v}");
    // The throttled PAUSE was replaced by the second resume, not kept to be sent.
    let open: Vec<Value> = status(&p).await["outbox"].as_array().unwrap().clone();
    assert!(open.iter().all(|l| l["action"] != "transition"), "the PAUSE is still queued: {open:?}");
    assert_eq!(transitions(&p).await, [json!(200), json!(200), json!(200), json!(429)]);
    assert_eq!(fake_status(&p).await, "ACTIVE");
}

#[tokio::test]
async fn auto_increase_never_reopens_a_study_the_researcher_stopped() {
    let spec = format!("{SPEC}auto_increase = true\n");
    let p = Published::start_with(&spec, &[], &[("HARDNEG_PROLIFIC_WAIT_MS", "200")]).await;
    let before = p.fake.state().await["studies"][0]["total_available_places"].clone();
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/transition", p.study));
    let (s, v) = post(&p.researcher, &url, Some(json!({ "action": "STOP" }))).await;
    assert_eq!(s, 200, "{v}");
    let stopped = fake_status(&p).await;
    // Every copy is still wanted: hardneg would buy places, and did before.
    let sync = p.app.url(&format!("/api/v1/studies/{}/prolific/sync", p.study));
    for _ in 0..2 {
        let (s, v) = post(&p.researcher, &sync, None).await;
        assert_eq!((s, &v["places_raised_to"]), (200, &Value::Null), "{v}");
    }
    let state = p.fake.state().await;
    assert_eq!(state["studies"][0]["total_available_places"], before, "places bought after the researcher's stop");
    assert_eq!(fake_status(&p).await, stopped);
    assert_ne!(stopped, "ACTIVE");
}

#[tokio::test]
async fn a_throttled_pay_reads_what_was_paid_again_before_it_is_sent() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "2")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let person = p.submitted(1).await.remove(0);
    let round = |name: &str| {
        let url = p.app.url(&format!("/api/v1/studies/{}/prolific/bonuses?round={name}", p.study));
        let r = p.researcher.clone();
        let body = format!("{},0.50\n", person.participant_id);
        async move {
            let res = r.post(url).body(body).send().await.unwrap();
            assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        }
    };
    // Round v1's pay is throttled for 4 s; round v2, the same amount to the same person, is paid meanwhile.
    let rule =
        json!({"method": "POST", "path": "/api/v1/bulk-bonus-payments/*/pay/", "fault": "429", "retry_after": 4});
    p.fake.fault_with(rule).await;
    round("v1").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while pay_calls(&p).await < 1 {
        assert!(Instant::now() < deadline, "v1's pay was never tried");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    round("v2").await;
    while payments(&p.fake).await < 1 {
        assert!(Instant::now() < deadline, "v2 was never paid");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p.fake.tick().await;
    // v1's next send is answered 503 (not applied): read back, it must not take v2's bonus for its own.
    p.fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "503", 1).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        p.fake.tick().await;
        if status(&p).await["bonuses"] == json!([0, 0, 2, 100]) {
            break;
        }
        assert!(Instant::now() < deadline, "v1 was never paid: {}", status(&p).await);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    p.fake.tick().await;
    let state = p.fake.state().await;
    let sub = state["submissions"].as_array().unwrap().iter().find(|s| s["id"] == person.submission_id.as_str());
    assert_eq!(sub.unwrap()["bonus_payments"], json!([50, 50]), "paid once per round");
    assert_eq!(payments(&p.fake).await, 2);
}
