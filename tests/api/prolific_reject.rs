//! A submission `prolific decide` rejects for failed attention checks is
//! not used: with `max_failed_checks = 3`, a participant who fails two
//! checks finishes its bundle, and its answers counted until the rejection
//! (an audit: they settled items in the export). The rejection discards the
//! copy with it, so its answers leave agreement and its bundle goes to
//! someone new.
use crate::prolific_kit::{answer_all, join, post, Published, Way};
use serde_json::Value;

const SPEC: &str = r#"name = "reject discards"
kind = "four_image"
dataset = "demo"
seed = 5
access = "link"

[link]
bundle_size = 40
copies = 2
consent = "I agree to take part."
completion_code = "DONE0001"
attention_checks = 3
max_failed_checks = 3
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]

[prolific]
estimated_minutes = 6
hourly_rate = 9.0
"#;

#[tokio::test]
async fn a_rejection_for_failed_checks_discards_the_copy_and_frees_its_bundle() {
    let clock = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(clock.path(), "0").unwrap();
    let clock_path = clock.path().display().to_string();
    let p = Published::start_with(SPEC, &[], &[("HARDNEG_TEST_CLOCK_FILE", clock_path.as_str())]).await;
    let (r, study) = (&p.researcher, p.study);
    let url = |path: &str| p.app.url(&format!("/api/v1/studies/{study}{path}"));

    // A careful participant and one who fails two checks, each taking ten
    // minutes (Prolific allows the rejection).
    let careful = p.fake.arrive(&p.pid, None).await;
    let careless = p.fake.arrive(&p.pid, None).await;
    let (c1, s1, _) = join(&p.app.base, &careful.study_url, Way::Careful).await;
    let (c2, s2, _) = join(&p.app.base, &careless.study_url, Way::FailChecks(2)).await;
    std::fs::write(clock.path(), "600").unwrap();
    assert_eq!(answer_all(&p.app.base, &c1, s1, Way::Careful).await, "DONE0001");
    assert_eq!(answer_all(&p.app.base, &c2, s2, Way::FailChecks(2)).await, "DONE0001", "two of three: it finishes");
    p.fake.submit(&careful.submission_id, Some("DONE0001")).await;
    p.fake.submit(&careless.submission_id, Some("DONE0001")).await;
    // Whose answers agreement reads (the participants in arrival order: p<study>-1, -2, …).
    let annotators = || async {
        let a: Value = r.get(url("/agreement")).send().await.unwrap().json().await.unwrap();
        a["annotators"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let name = |n: i64| format!("p{study}-{n}");
    assert_eq!(annotators().await, [name(1), name(2)], "both copies count before the decision");

    let places = || async {
        let (s, v) = post(r, &url("/prolific/sync"), None).await;
        assert_eq!(s, 200, "{v}");
        let status: Value = r.get(url("/prolific")).send().await.unwrap().json().await.unwrap();
        (status["hardneg_completed"].as_i64().unwrap(), status["hardneg_free"].as_i64().unwrap())
    };
    let (completed, free) = places().await;
    assert_eq!(completed, 2);

    let (s, d) = post(r, &url("/prolific/decide"), None).await;
    assert_eq!(s, 200, "{d}");
    let line = |sub: &str| d["lines"].as_array().unwrap().iter().find(|l| l["submission"] == sub).unwrap().clone();
    assert_eq!(line(&careless.submission_id)["action"], "reject", "{d}");
    assert_eq!(d["discarded"], serde_json::json!([line(&careless.submission_id)["participant"]]), "{d}");
    // (One who always gives the first option is flagged for review: nothing is sent.)
    assert_ne!(line(&careful.submission_id)["action"], "reject", "{d}");

    let rows: Vec<Value> = r.get(url("/participants?platform_ids=true")).send().await.unwrap().json().await.unwrap();
    let status_of = |sub: &str| rows.iter().find(|row| row["platform_session"] == sub).unwrap()["status"].clone();
    assert_eq!(status_of(&careless.submission_id), "discarded");
    assert_eq!(status_of(&careful.submission_id), "completed");
    assert_eq!(annotators().await, [name(1)], "the rejected copy's answers no longer count");
    assert_eq!(places().await, (1, free + 1), "its place is free again");

    // A second decision sends nothing new and changes no copy.
    let (s, again) = post(r, &url("/prolific/decide"), None).await;
    assert_eq!(
        (s, again["written"].as_u64(), again["discarded"].as_array().map(Vec::len)),
        (200, Some(0), Some(0)),
        "{again}"
    );
    let rows: Vec<Value> = r.get(url("/participants")).send().await.unwrap().json().await.unwrap();
    let states: Vec<&str> = rows.iter().map(|row| row["status"].as_str().unwrap()).collect();
    assert_eq!(states.iter().filter(|s| **s == "discarded").count(), 1, "{states:?}");
    // Once Prolific has the rejection, a bonus list naming that person is refused, line named.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let st = p.fake.state().await;
        let sub = st["submissions"].as_array().unwrap().iter().find(|s| s["id"] == careless.submission_id.as_str());
        if sub.is_some_and(|s| s["status"] == "REJECTED") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the rejection was never sent: {st}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    post(r, &url("/prolific/sync"), None).await;
    let csv = format!("{},1.00\n{},1.00\n", careful.participant_id, careless.participant_id);
    let res = r.post(url("/prolific/bonuses?round=best&dry_run=true")).body(csv).send().await.unwrap();
    let (s, text) = (res.status(), res.text().await.unwrap());
    assert_eq!(s, 422, "{text}");
    assert!(text.contains("line 2:") && text.contains("REJECTED") && !text.contains("line 1"), "{text}");
    // The bundle goes to the next arrival.
    let next = p.fake.arrive(&p.pid, None).await;
    let (c3, s3, _) = join(&p.app.base, &next.study_url, Way::Careful).await;
    assert_eq!(answer_all(&p.app.base, &c3, s3, Way::Careful).await, "DONE0001");
    assert_eq!(annotators().await, [name(1), name(3)]);
}
