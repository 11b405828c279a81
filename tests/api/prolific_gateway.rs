//! What Prolific's gateways do besides Prolific: a throttle with a long
//! `Retry-After` (or none), and a 5xx page after the origin applied the
//! call (audit AU: the fake could not make them). Money moves once, and a
//! throttled transition does not undo the researcher's next one.
use crate::prolific_bonus_doubt::{payments, SPEC};
use crate::prolific_kit::{post, Published};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn status(p: &Published) -> Value {
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific", p.study));
    p.researcher.get(url).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn a_pay_applied_behind_a_gateway_error_is_read_back_and_never_sent_twice() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "2")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let people = p.submitted(2).await;
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "504_applied", 1).await;
    let csv: String = people.iter().map(|p| format!("{},0.75\n", p.participant_id)).collect();
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=gateway"));
    let res = r.post(url).body(csv).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    while status(&p).await["bonuses"] != json!([0, 0, 2, 150]) {
        fake.tick().await;
        assert!(Instant::now() < deadline, "the round was never read back as paid: {}", status(&p).await);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // Past the grace period: a read-back that missed it would have paid again by now.
    tokio::time::sleep(Duration::from_secs(3)).await;
    fake.tick().await;
    assert_eq!(payments(fake).await, 1, "one pay call, applied behind the 504");
    let state = fake.state().await;
    for person in &people {
        let sub = state["submissions"].as_array().unwrap().iter().find(|s| s["id"] == person.submission_id.as_str());
        assert_eq!(sub.unwrap()["bonus_payments"], json!([75]), "{}", person.submission_id);
    }
}

#[tokio::test]
async fn a_throttled_pause_is_replaced_by_the_researchers_next_transition() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BACKOFF_MS", "200")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let rule = json!({"method": "POST", "path": "/api/v1/studies/*/transition/", "fault": "429", "retry_after": 3600});
    fake.fault_with(rule).await;
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/transition"));
    let (s, v) = post(r, &url, Some(json!({ "action": "PAUSE" }))).await;
    assert_eq!(s, 422, "{v}");
    let why = v["error"].as_str().unwrap_or_default();
    assert!(why.contains("is pending") && why.contains("unless a later pause, resume or stop replaces it"), "{v}");
    // The researcher keeps the study running: it is active, so nothing is sent,
    // and the throttled PAUSE will not be either.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (s, v) = post(r, &url, Some(json!({ "action": "START" }))).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{v}");
    let open: Vec<Value> = status(&p).await["outbox"].as_array().unwrap().clone();
    assert!(open.iter().all(|l| l["action"] != "transition"), "the PAUSE is still queued: {open:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let sent: Vec<Value> = fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["method"] == "POST" && q["path"].as_str().is_some_and(|path| path.ends_with("/transition/")))
        .map(|q| q["status"].clone())
        .collect();
    assert_eq!(sent, [json!(200), json!(429)], "PUBLISH, then the throttled PAUSE, never sent again: {sent:?}");
    assert_eq!(status(&p).await["status"], "ACTIVE");
}

/// `prolific bonus` waits on its own set-up and pay only: another row of
/// the study left open (here a PAUSE throttled for an hour) neither holds
/// it for a minute nor is printed as if it were the payment's (audit AU).
#[tokio::test]
async fn a_bonus_round_does_not_wait_on_the_studys_other_open_rows() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BACKOFF_MS", "200")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let person = p.submitted(1).await.remove(0);
    let rule = json!({"method": "POST", "path": "/api/v1/studies/*/transition/", "fault": "429", "retry_after": 3600});
    fake.fault_with(rule).await;
    let (s, v) =
        post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/transition")), Some(json!({"action": "PAUSE"})))
            .await;
    assert_eq!(s, 422, "the PAUSE waits for an hour: {v}");
    let csv = p.tmp.path().join("bonus.csv");
    std::fs::write(&csv, format!("{},0.40\n", person.participant_id)).unwrap();
    let started = Instant::now();
    let out = crate::helpers::command_on(&app.data_dir)
        .args(["prolific", "bonus", &study.to_string(), "--round", "own", "--csv", csv.to_str().unwrap()])
        .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
        .env("HARDNEG_PROLIFIC_URL", &fake.base)
        .env("HARDNEG_PROLIFIC_BACKOFF_MS", "200")
        .output()
        .unwrap();
    let (stdout, stderr) = (crate::helpers::text(&out.stdout), crate::helpers::text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "waited {:?} on another row: {stdout}", started.elapsed());
    assert!(!stdout.contains("transition"), "{stdout}");
    assert_eq!(status(&p).await["bonuses"], json!([0, 0, 1, 40]));
}

/// A round whose pay Prolific throttles for an hour says so at once, and a
/// round for someone else waits on neither that pay nor prints it (audit
/// AY: both waited out the command's minute).
#[tokio::test]
async fn a_bonus_round_throttled_past_its_minute_says_so_at_once() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BACKOFF_MS", "200")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app) = (&p.fake, &p.app);
    let people = p.submitted(2).await;
    let rule =
        json!({"method": "POST", "path": "/api/v1/bulk-bonus-payments/*/pay/", "fault": "429", "retry_after": 3600});
    fake.fault_with(rule).await;
    let round = |name: &str, person: &crate::prolific_fake::Arrival, amount: &str| {
        let csv = p.tmp.path().join(format!("{name}.csv"));
        std::fs::write(&csv, format!("{},{amount}\n", person.participant_id)).unwrap();
        let started = Instant::now();
        let out = crate::helpers::command_on(&app.data_dir)
            .args(["prolific", "bonus", &p.study.to_string(), "--round", name, "--csv", csv.to_str().unwrap()])
            .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
            .env("HARDNEG_PROLIFIC_URL", &fake.base)
            .env("HARDNEG_PROLIFIC_BACKOFF_MS", "200")
            .output()
            .unwrap();
        let stdout = crate::helpers::text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", crate::helpers::text(&out.stderr));
        (started.elapsed(), stdout)
    };
    let (took, out) = round("slow", &people[0], "0.40");
    assert!(took < Duration::from_secs(30), "waited {took:?} for an hour's throttle: {out}");
    assert!(out.contains("bonus_pay is pending") && out.contains("Too Many Requests"), "{out}");
    let (took, out) = round("other", &people[1], "0.60");
    assert!(took < Duration::from_secs(30), "waited {took:?} on another round's pay: {out}");
    assert!(out.contains("the round's bonuses are all confirmed"), "{out}");
}
