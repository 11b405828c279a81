//! The SESSION_ID in the join link is only what the link said: a
//! participant who opens it with someone else's SESSION_ID must not be
//! decided on that person's submission (audit R: an honest worker was
//! rejected for another's failed checks). Decisions go by PROLIFIC_PID.
use crate::prolific_kit::{answer_all, join, post, Published, Way};

pub const SPEC: &str = r#"name = "sessions"
kind = "four_image"
dataset = "demo"
seed = 12
access = "link"
[link]
bundle_size = 3
copies = 2
consent = "I agree to take part."
completion_code = "DONE0002"
attention_checks = 2
max_failed_checks = 2
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]
[prolific]
estimated_minutes = 6
hourly_rate = 9.0
budget_cap = "500.00"
"#;

#[tokio::test]
async fn a_borrowed_session_id_is_decided_on_the_borrowers_own_submission() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    let honest = fake.arrive(&pid, None).await;
    let borrower = fake.arrive(&pid, None).await;
    // The borrower opens hardneg's link with its own PID and the honest one's SESSION_ID.
    let swapped = borrower.study_url.replace(&borrower.submission_id, &honest.submission_id);
    assert_ne!(swapped, borrower.study_url, "the study URL carries the SESSION_ID");
    let (hc, hs, _) = join(&app.base, &honest.study_url, Way::Careful).await;
    let honest_code = answer_all(&app.base, &hc, hs, Way::Careful).await;
    let (bc, bs, _) = join(&app.base, &swapped, Way::Careful).await;
    let borrower_code = answer_all(&app.base, &bc, bs, Way::FailChecks(2)).await;
    fake.submit(&honest.submission_id, Some(&honest_code)).await;
    fake.submit(&borrower.submission_id, Some(&borrower_code)).await;

    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let (s, dry) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide?dry_run=true")), None).await;
    assert_eq!(s, 200, "{dry}");
    let lines = dry["lines"].as_array().unwrap();
    let line_of = |who: &str| lines.iter().find(|l| l["platform_id"] == who).unwrap_or_else(|| panic!("{who}: {dry}"));
    assert_eq!(line_of(&honest.participant_id)["submission"], honest.submission_id.as_str(), "{dry}");
    assert_eq!(line_of(&borrower.participant_id)["submission"], borrower.submission_id.as_str(), "{dry}");
    // The borrower failed two checks (flagged for review at this pace):
    // nothing but the approval names the honest one's submission.
    let requests = dry["requests"].as_array().unwrap();
    let approved = requests.iter().find(|q| q["path"] == "/api/v1/submissions/bulk-approve/").expect("an approval");
    assert_eq!(approved["body"]["submission_ids"], serde_json::json!([honest.submission_id]), "{approved}");
    assert_eq!(requests.iter().filter(|q| q.to_string().contains(&honest.submission_id)).count(), 1, "{dry}");
}
