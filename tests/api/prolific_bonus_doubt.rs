//! Prolific lists a submission's bonus payments as bare amounts, so a pay
//! whose answer was lost is read back by counting amounts. A second round
//! of the same amount to the same people must wait while the first is in
//! doubt, or the read-back can take one round's payment for the other's
//! and pay twice (audit R).
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::Published;
use serde_json::Value;
use std::time::{Duration, Instant};

/// A Prolific link study with a budget cap (prolific_optional_fields.rs too).
pub const SPEC: &str = r#"name = "bonus rounds"
kind = "four_image"
dataset = "demo"
seed = 6
access = "link"
[link]
bundle_size = 21
copies = 1
consent = "I agree to take part."
[prolific]
estimated_minutes = 5
hourly_rate = 12.0
budget_cap = "100.00"
"#;

/// Pay calls the fake has had.
pub async fn payments(fake: &FakeProlific) -> usize {
    fake.state().await["payments"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_round_of_the_same_amount_waits_while_a_lost_pay_is_in_doubt() {
    // Prolific pays long after the call: only a tick makes the payments.
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "4")];
    let p = Published::start_with(SPEC, &["--async-delay-ms", "600000"], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let people = p.submitted(2).await;
    let csv: String = people.iter().map(|p| format!("{},0.50\n", p.participant_id)).collect();
    let pay_round = |round: &'static str| {
        let (r, csv, url) =
            (r, csv.clone(), app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round={round}")));
        async move {
            let res = r.post(url).body(csv).send().await.unwrap();
            assert_eq!(res.status(), 200, "{round}: {}", res.text().await.unwrap());
        }
    };

    // Round a's pay reaches Prolific, its answer does not: a is in doubt.
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "drop_response", 1).await;
    pay_round("a").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while payments(fake).await == 0 {
        assert!(Instant::now() < deadline, "round a's pay was never sent");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Round b, the same amount to the same people, is set up but not paid.
    pay_round("b").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(payments(fake).await, 1, "round b was paid while round a was in doubt");
    let status: Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    let notes = status["outbox"].to_string();
    assert!(notes.contains("another pay of the same amount"), "{notes}");

    // Prolific pays round a: a is read back as paid, then b goes.
    fake.tick().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while payments(fake).await < 2 {
        assert!(Instant::now() < deadline, "round b was never paid");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fake.tick().await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(payments(fake).await, 2, "one pay call per round");
    let state = fake.state().await;
    for p in &people {
        let sub =
            state["submissions"].as_array().unwrap().iter().find(|s| s["id"] == p.submission_id.as_str()).unwrap();
        let paid: Vec<f64> = sub["bonus_payments"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(paid == [50.0, 50.0] || paid == [0.5, 0.5], "{}: {paid:?}", p.participant_id);
    }
}

/// A bonus of the same amount paid outside hardneg (by hand on Prolific's
/// site) is not taken for hardneg's pay whose request was lost: the pay is
/// read back against what the submission showed before it was first sent,
/// and sent again (audit AU: the round was marked paid and never paid).
#[tokio::test]
async fn a_bonus_paid_by_hand_is_not_taken_for_a_lost_pay() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "2")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let person = p.submitted(1).await.remove(0);
    let sub = person.submission_id.clone();
    // By hand: set up and pay 0.50 on Prolific.
    let setup = serde_json::json!({ "study_id": p.pid, "csv_bonuses": format!("{sub},0.50") });
    let (s, v) = fake.post("/api/v1/submissions/bonus-payments/", setup).await;
    assert_eq!(s, 201, "{v}");
    let (s, v) =
        fake.post(&format!("/api/v1/bulk-bonus-payments/{}/pay/", v["id"].as_str().unwrap()), Value::Null).await;
    assert!((200..300).contains(&s), "{v}");
    fake.tick().await;
    let paid = |state: Value| {
        let subs = state["submissions"].as_array().unwrap().clone();
        let row = subs.into_iter().find(|s| s["id"] == sub.as_str()).unwrap();
        row["bonus_payments"].as_array().unwrap().len()
    };
    assert_eq!(paid(fake.state().await), 1, "the hand-paid bonus");

    // hardneg's round of the same amount: its first pay never reaches Prolific.
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "reset", 1).await;
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=thanks"));
    let res = r.post(url).body(format!("{},0.50\n", person.participant_id)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        fake.tick().await;
        if paid(fake.state().await) == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "hardneg's bonus was never paid");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    fake.tick().await;
    assert_eq!(paid(fake.state().await), 2, "paid once by hand, once by hardneg");
    let status: Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["bonuses"], serde_json::json!([0, 0, 1, 50]), "{status}");
}

/// A round's name is the researcher's own text: one named `seen_before`,
/// the pay row's own field name, is paid like any other
/// (audit AY: its pay waited for ever, "reading what the submissions were
/// paid before paying").
#[tokio::test]
async fn a_round_named_like_a_field_of_the_pay_is_paid() {
    let p = Published::start_with(SPEC, &[], &[("HARDNEG_PROLIFIC_WAIT_MS", "200")]).await;
    let (app, r, study) = (&p.app, &p.researcher, p.study);
    let person = p.submitted(1).await.remove(0);
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=seen_before"));
    let res = r.post(url).body(format!("{},0.50\n", person.participant_id)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status: Value =
            r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
        if status["bonuses"] == serde_json::json!([0, 0, 1, 50]) {
            break;
        }
        assert!(Instant::now() < deadline, "the round was never paid: {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(payments(&p.fake).await, 1, "paid once");
}
