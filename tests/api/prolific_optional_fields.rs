//! The reference marks most fields optional: `SubmissionDetail` requires only
//! `id, started_at, status, study_id`, and the cost answer none. An answer
//! without a field hardneg reads must not be taken as "nothing there": a
//! bonus pay is never sent twice on a missing `bonus_payments`, and a budget
//! cap is never passed on a cost without figures (audit AD).
use crate::prolific_bonus_doubt::{payments, SPEC};
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{post, Published};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_lost_pay_is_not_sent_again_while_submissions_leave_out_their_bonuses() {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200"), ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "1")];
    let p = Published::start_with(SPEC, &[], &env).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let people = p.submitted(2).await;
    // The pay reaches Prolific, its answer does not; every read of a
    // submission then leaves out `bonus_payments`.
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "drop_response", 1).await;
    fake.fault_with(json!({"method": "GET", "path": "/api/v1/submissions/", "fault": "omit", "fields": ["bonus_payments"], "times": 100000})).await;
    let csv: String = people.iter().map(|p| format!("{},0.30\n", p.participant_id)).collect();
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=thanks"));
    let res = r.post(url).body(csv).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while payments(fake).await == 0 {
        if Instant::now() > deadline {
            let outbox = r
                .get(app.url(&format!("/api/v1/studies/{study}/prolific")))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            panic!("the pay was never sent: {outbox}\n{}", fake.state().await["requests"]);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    fake.tick().await;
    // Well past the grace: read back again and again, never paid again.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(payments(fake).await, 1, "a missing field was read as nothing paid");
    let status = |r: &reqwest::Client| {
        let url = app.url(&format!("/api/v1/studies/{study}/prolific"));
        let r = r.clone();
        async move { r.get(url).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let open = status(r).await["outbox"].to_string();
    assert!(open.contains("bonus_pay"), "the pay is still in doubt: {open}");
    // With the field back, the read-back finds the bonus: done, still one pay.
    fake.clear_faults().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while status(r).await["outbox"].as_array().is_some_and(|rows| !rows.is_empty()) {
        assert!(Instant::now() < deadline, "the pay was never confirmed: {}", status(r).await["outbox"]);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(payments(fake).await, 1);
    assert_eq!(status(r).await["bonuses"][2], 2, "both bonuses paid once");
}

#[tokio::test]
async fn a_cost_without_figures_publishes_nothing_under_a_budget_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start_with(&[]).await;
    let env = vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "3600".to_string()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".to_string()),
    ];
    let app = crate::prolific_kit::Hardneg::start(
        &tmp.path().join("data"),
        &env,
        &tmp.path().join("log"),
        Default::default(),
    );
    let r = app.login("researcher").await;
    let res = r.post(app.url("/api/v1/studies")).body(SPEC.to_string()).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    fake.fault_with(json!({"method": "GET", "path": "/api/v1/studies/*/cost/", "fault": "omit", "fields": ["*"]}))
        .await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 422, "{v}");
    assert!(v["error"].as_str().unwrap().contains("could not be read"), "{v}");
    let state = fake.state().await;
    let statuses: Vec<&str> =
        state["studies"].as_array().unwrap().iter().filter_map(|s| s["status"].as_str()).collect();
    assert_eq!(statuses, ["UNPUBLISHED"], "the draft stays unpublished");
    // Read right the next time, it is published.
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
}

/// A pay Prolific refused (a 4xx: the workspace's balance too low, say) stays
/// failed, and the same round run again finds nothing new; once the cause is
/// fixed, `flush --retry-failed` sends it, once.
#[tokio::test]
async fn a_refused_pay_is_sent_again_only_when_asked_and_only_once() {
    let p = Published::start_with(SPEC, &[], &[("HARDNEG_PROLIFIC_WAIT_MS", "200")]).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let person = p.submitted(1).await.remove(0);
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "400", 1).await;
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=thanks"));
    let res = r.post(&url).body(format!("{},0.40\n", person.participant_id)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let outbox_url = app.url(&format!("/api/v1/studies/{study}/prolific"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v: Value = r.get(&outbox_url).send().await.unwrap().json().await.unwrap();
        if v["outbox"].as_array().unwrap().iter().any(|row| row["action"] == "bonus_pay" && row["state"] == "failed") {
            break;
        }
        assert!(Instant::now() < deadline, "the refused pay never failed: {}", v["outbox"]);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(payments(fake).await, 0);
    let data = p.tmp.path().join("data");
    let flush = |extra: &'static [&'static str]| {
        let mut cmd = crate::helpers::command_on(&data);
        cmd.args(["prolific", "flush", &study.to_string()]).args(extra);
        cmd.env("HARDNEG_PROLIFIC_TOKEN", &fake.token).env("HARDNEG_PROLIFIC_URL", &fake.base);
        cmd.env("HARDNEG_PROLIFIC_BACKOFF_MS", "20").output().unwrap()
    };
    let out = flush(&[]);
    assert!(
        crate::helpers::text(&out.stdout).contains("bonus_pay failed after 1 try"),
        "{}",
        crate::helpers::text(&out.stdout)
    );
    assert_eq!(payments(fake).await, 0, "a plain flush leaves a refused row alone");
    let out = flush(&["--retry-failed"]);
    let said = crate::helpers::text(&out.stdout);
    assert!(out.status.success() && said.contains("1 failed row(s) to send again"), "{said}");
    assert_eq!(payments(fake).await, 1);
    let out = flush(&["--retry-failed"]);
    assert!(crate::helpers::text(&out.stdout).contains("0 failed row(s)"));
    assert_eq!(payments(fake).await, 1, "paid once");
}

/// A submissions list whose rows leave out `status` or `participant_id`
/// (optional in a list's rows as in the reference's detail) does not
/// overwrite what an earlier sync read: statuses stay, and nobody is cut off
/// from a submission (audit AI: everything became UNKNOWN, and mismatches
/// appeared or vanished).
#[tokio::test]
async fn a_sync_that_leaves_out_fields_keeps_what_was_read() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    p.submitted(2).await;
    let status = || async {
        let url = app.url(&format!("/api/v1/studies/{study}/prolific"));
        r.get(url).send().await.unwrap().json::<Value>().await.unwrap()
    };
    let before = status().await;
    let lines = before["mismatches"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "two submissions nobody arrived for: {before}");
    assert!(lines.iter().all(|m| m["prolific_status"] == "AWAITING REVIEW"), "{before}");
    let fields = json!(["status", "participant_id", "return_requested", "study_code"]);
    fake.fault_with(
        json!({"method": "GET", "path": "/api/v1/submissions/", "fault": "omit", "fields": fields, "times": 1000}),
    )
    .await;
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let after = status().await;
    assert_eq!(after["mismatches"], before["mismatches"], "nothing read is forgotten");
    assert_eq!(after["budget"], before["budget"]);
    // A new submission first read without its participant id is nobody's:
    // a bonus line with a blank id cannot reach it.
    let late = fake.arrive(&p.pid, None).await;
    fake.submit(&late.submission_id, Some("DONE")).await;
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=blank"));
    let res = r.post(url).body("id,amount\n,0.50\n").send().await.unwrap();
    assert_eq!(res.status(), 422, "{}", res.text().await.unwrap());
}
