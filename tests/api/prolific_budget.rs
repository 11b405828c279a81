//! A late submission (timed out on Prolific, then finished) takes a place
//! past the study's total and is paid, so it is committed money: the budget
//! cap must count it (audit 47/D: committed stayed at the places bought).
use crate::prolific_kit::{post, Published};
use serde_json::Value;

const SPEC: &str = r#"name = "late"
kind = "four_image"
dataset = "demo"
seed = 5
access = "link"
[link]
bundle_size = 21
copies = 1
consent = "I agree to take part."
[prolific]
estimated_minutes = 5
hourly_rate = 12.0
extra_places = 0
budget_cap = "100.00"
"#;

#[tokio::test]
async fn late_submissions_past_the_total_are_committed() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    let places = fake.state().await["studies"][0]["total_available_places"].as_u64().unwrap() as usize;
    let committed = || async {
        let url = app.url(&format!("/api/v1/studies/{study}/prolific"));
        let s: Value = r.get(url).send().await.unwrap().json().await.unwrap();
        (s["budget"]["committed"].as_i64().unwrap(), s["reward_cents"].as_i64().unwrap())
    };
    let (bought, reward) = committed().await;

    // Every place taken; one times out and is replaced, then finishes late: one more than the total.
    let mut subs = Vec::new();
    for _ in 0..places {
        subs.push(fake.arrive(&pid, None).await.submission_id);
    }
    fake.timeout(&subs[0]).await;
    subs.push(fake.arrive(&pid, None).await.submission_id);
    for sub in &subs {
        fake.submit(sub, Some("DONE")).await;
    }
    let (s, report) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{report}");
    let (late, _) = committed().await;
    // One reward more, with Prolific's fee and tax on it (to the cent).
    let one_more = late - bought;
    assert!(one_more > reward && one_more <= reward * 2, "bought {bought}, with the late one {late}, reward {reward}");
    assert!((one_more * places as i64 - bought).abs() <= places as i64, "one place's share: {one_more} of {bought}");
}

/// A total past any study (or one whose money would overflow) is refused
/// with the reason, not a 500 or a wrapped cost (audit R).
#[tokio::test]
async fn an_absurd_total_of_places_is_refused_not_wrapped() {
    let p = Published::start(SPEC).await;
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/places", p.study));
    for total in [i64::MAX as u64, 3_443_392_227_092_449_649, 1_000_001] {
        let (s, v) = post(&p.researcher, &url, Some(serde_json::json!({ "total": total }))).await;
        assert_eq!(s, 422, "{total}: {v}");
        assert!(v["error"].as_str().unwrap().contains("more than the 1000000"), "{v}");
    }
    let before = p.fake.state().await["studies"][0]["total_available_places"].clone();
    let status = p.researcher.get(p.app.url(&format!("/api/v1/studies/{}/prolific", p.study))).send().await.unwrap();
    assert_eq!(status.status(), 200);
    assert_eq!(p.fake.state().await["studies"][0]["total_available_places"], before, "nothing was sent");
}
