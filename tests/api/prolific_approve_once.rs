//! Prolific answers a bulk approval "in progress" and approves later: the
//! submissions still awaiting review at the read-back are not a lost call
//! to send again until its grace has passed (audit R: 25 bulk approvals of
//! three submissions in two minutes). Nor is one whose answer was lost: right
//! after, it reads the same (audit AQ: sent twice).
use crate::prolific_kit::{answer_all, join, post, Published, Way};
// The same link study: bundles of 3, two copies, a comprehension question, 6 minutes.
use crate::prolific_session::SPEC;
use serde_json::Value;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_bulk_approval_in_progress_is_sent_once() {
    approved_once(false).await;
}

#[tokio::test]
async fn a_bulk_approval_whose_answer_was_lost_is_sent_once() {
    approved_once(true).await;
}

async fn approved_once(lost: bool) {
    let env = [("HARDNEG_PROLIFIC_WAIT_MS", "200")];
    let p = Published::start_with(SPEC, &["--async-delay-ms", "600000"], &env).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    for _ in 0..2 {
        let a = fake.arrive(&pid, None).await;
        let (c, hs, _) = join(&app.base, &a.study_url, Way::Careful).await;
        let code = answer_all(&app.base, &c, hs, Way::Careful).await;
        fake.submit(&a.submission_id, Some(&code)).await;
    }
    if lost {
        fake.fault("POST", "/api/v1/submissions/bulk-approve/", "drop_response", 1).await;
    }
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
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
