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

/// One who finishes in hardneg and then returns the study on Prolific keeps
/// a counted copy that Prolific will never pay for: the status lists it, as
/// it lists one who finished and never submitted (audit AT: nothing said so).
#[tokio::test]
async fn a_finisher_who_then_returns_on_prolific_is_a_mismatch() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    let returner = fake.arrive(&pid, None).await;
    let unsubmitted = fake.arrive(&pid, None).await;
    for person in [&returner, &unsubmitted] {
        let (c, hs, _) = join(&app.base, &person.study_url, Way::Careful).await;
        answer_all(&app.base, &c, hs, Way::Careful).await;
    }
    fake.return_(&returner.submission_id).await;
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let status: serde_json::Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    let kind_of = |sub: &str| {
        let lines = status["mismatches"].as_array().unwrap();
        lines.iter().find(|m| m["submission"] == sub).map(|m| m["kind"].clone())
    };
    assert_eq!(kind_of(&returner.submission_id), Some("completed_then_returned".into()), "{status}");
    assert_eq!(kind_of(&unsubmitted.submission_id), Some("completed_not_submitted".into()), "{status}");
    assert_eq!(status["hardneg_completed"], 2, "the returner's copy is kept: {status}");
    // Paid with a bonus, as the advice says: settled, no longer listed (audit BA).
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=returned"));
    let res = r.post(url).body(format!("{},0.40\n", returner.participant_id)).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    // The other finisher submits and the researcher rejects it on Prolific's
    // site, not through `decide`: its copy still counts, and hardneg says so.
    fake.submit(&unsubmitted.submission_id, Some("DONE0002")).await;
    let reject = serde_json::json!({
        "action": "REJECT", "rejection_category": "LOW_EFFORT",
        "message": "Rejected by hand on Prolific's site: the answers did not follow the instructions given on the first page of the study."
    });
    let (s, v) = fake.post(&format!("/api/v1/submissions/{}/transition/", unsubmitted.submission_id), reject).await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{v}");
    let status: serde_json::Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    let line = status["mismatches"].as_array().unwrap().iter().find(|m| m["submission"] == unsubmitted.submission_id);
    assert_eq!(line.map(|m| m["kind"].clone()), Some("rejected_still_counted".into()), "{status}");
    assert!(line.unwrap()["advice"].as_str().unwrap().contains("participants --discard"), "{status}");
    let paid = status["mismatches"].as_array().unwrap().iter().find(|m| m["submission"] == returner.submission_id);
    assert!(paid.is_none(), "the returner was paid with a bonus: {status}");
}

/// PAUSE, START and STOP follow the reference's transition table: one the
/// study is already through is a success that sends nothing, and one
/// Prolific would refuse is refused at once, saying why, and leaves no
/// failed outbox row for every later command to show (audit AT).
#[tokio::test]
async fn a_transition_prolific_would_refuse_is_refused_at_once_and_leaves_no_row() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study) = (&p.fake, &p.app, &p.researcher, p.study);
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/transition"));
    let act = |action: &'static str| post(r, &url, Some(serde_json::json!({ "action": action })));
    // A transition's key names its second (a double click is one intent): a
    // second later, another PAUSE is a new one.
    let next_second = || tokio::time::sleep(std::time::Duration::from_millis(1100));
    let (s, v) = act("PAUSE").await;
    assert_eq!((s, v["status"].as_str()), (200, Some("PAUSED")), "{v}");
    next_second().await;
    let (s, v) = act("PAUSE").await;
    assert_eq!((s, v["status"].as_str()), (200, Some("PAUSED")), "already paused: {v}");
    let (s, v) = act("STOP").await;
    assert_eq!((s, v["status"].as_str()), (200, Some("COMPLETED")), "{v}");
    next_second().await;
    let (s, v) = act("PAUSE").await;
    assert_eq!(s, 422, "{v}");
    let why = v["error"].as_str().unwrap_or_default();
    assert!(why.contains("PAUSE is not available") && why.contains("COMPLETED") && why.contains("ACTIVE"), "{v}");
    let (s, v) = act("START").await;
    assert_eq!(s, 422, "a stopped study is made active by more places, not START: {v}");
    let transitions: Vec<i64> = fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["method"] == "POST" && q["path"].as_str().is_some_and(|path| path.ends_with("/transition/")))
        .map(|q| q["status"].as_i64().unwrap_or_default())
        .collect();
    assert_eq!(transitions, [200, 200, 200], "PUBLISH, PAUSE and STOP each sent once, nothing refused");
    let status: serde_json::Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    let open: Vec<_> = status["outbox"].as_array().unwrap().iter().filter(|l| l["state"] != "done").collect();
    assert!(open.is_empty(), "{status}");
}
