//! A study hardneg needs nobody more for is stopped on Prolific by the sync
//! (once), so Prolific stops handing places to people who would only be told
//! the study is full; its submissions are still decided afterwards, and a
//! copy freed after the stop buys a place (`auto_increase`), which makes the
//! study recruit again until the copy is done.
use crate::prolific_kit::{answer_all, join, post, Published, Way};
use serde_json::Value;

const SPEC: &str = r#"name = "wind down"
kind = "four_image"
dataset = "demo"
seed = 5
access = "link"
[link]
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]
completion_code = "DONE0001"
bundle_size = 500
copies = 1
min_seconds_per_item = 0.0
straight_line_run = 1000
consent = "I agree to take part."
[prolific]
estimated_minutes = 5
hourly_rate = 9.0
budget_cap = "100.00"
auto_increase = true
"#;

/// Transitions Prolific took: the publication, then any stop.
fn transitions(state: &Value) -> usize {
    let stop = |q: &&Value| q["method"] == "POST" && q["path"].as_str().unwrap_or("").ends_with("/transition/");
    state["requests"].as_array().unwrap().iter().filter(stop).filter(|q| q["status"] == 200).count()
}

#[tokio::test]
async fn a_study_that_needs_nobody_more_is_stopped_on_prolific_once() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    let sync = || async { post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await };

    // One bundle, one copy: while its participant works, the study stays open.
    let a = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &a.study_url, Way::Careful).await;
    let (s, report) = sync().await;
    assert_eq!((s, report["stopped"].as_bool()), (200, Some(false)), "{report}");
    assert_eq!(fake.state().await["studies"][0]["status"], "ACTIVE");

    let code = answer_all(&app.base, &client, hstudy, Way::Careful).await;
    fake.submit(&a.submission_id, Some(&code)).await;
    let (s, report) = sync().await;
    assert_eq!((s, report["stopped"].as_bool()), (200, Some(true)), "{report}");
    let st = fake.state().await;
    assert_eq!(st["studies"][0]["status"], "COMPLETED", "{}", st["studies"][0]);
    assert_eq!(transitions(&st), 2, "published, then stopped");
    let (s, report) = sync().await;
    assert_eq!((s, report["stopped"].as_bool()), (200, Some(false)), "stopped once: {report}");
    assert_eq!(transitions(&fake.state().await), 2);

    // The finisher is still approved.
    let (s, d) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!((s, d["lines"][0]["action"].as_str()), (200, Some("approve")), "{d}");
    fake.until_first_approved(|| async {}).await;

    // Its copy discarded after the stop: the stopped study's unused places hand out nobody,
    // so the sync buys one, and the study recruits again until the new copy is done.
    let discard = r.post(app.url(&format!("/api/v1/studies/{study}/participants/1/discard"))).send().await.unwrap();
    assert!(discard.status().is_success(), "{}", discard.text().await.unwrap());
    let places = fake.state().await["studies"][0]["total_available_places"].as_i64().unwrap();
    let (s, report) = sync().await;
    assert_eq!((s, report["places_raised_to"].as_i64()), (200, Some(places + 1)), "{report}");
    assert_eq!(fake.state().await["studies"][0]["status"], "ACTIVE");
    let b = fake.arrive(&pid, None).await;
    let (client, _, _) = join(&app.base, &b.study_url, Way::Careful).await;
    let code = answer_all(&app.base, &client, hstudy, Way::Careful).await;
    fake.submit(&b.submission_id, Some(&code)).await;
    let (s, report) = sync().await;
    assert_eq!((s, report["stopped"].as_bool()), (200, Some(true)), "{report}");
    assert_eq!(transitions(&fake.state().await), 3, "published, stopped, stopped again once done");
}

/// Prolific refuses a STOP while the study is AWAITING REVIEW (full, all
/// submitted), and a return then makes it ACTIVE again with the same places:
/// the next sync must stop it then (audit 47/D: "once" had become "never").
/// The STOP reads the study's status first, so the one that would be refused
/// is not sent at all.
#[tokio::test]
async fn a_stop_refused_while_awaiting_review_is_sent_again_once_the_study_is_active() {
    let p = Published::start(SPEC).await;
    let (fake, app, r, study, pid) = (&p.fake, &p.app, &p.researcher, p.study, p.pid.clone());
    let sync_url = app.url(&format!("/api/v1/studies/{study}/prolific/sync"));
    let places = fake.state().await["studies"][0]["total_available_places"].as_u64().unwrap();
    assert!(places >= 2, "a margin of places beside the one copy: {places}");

    // One finishes the one copy; the others hold Prolific's other places without opening the link.
    let a = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &a.study_url, Way::Careful).await;
    let code = answer_all(&app.base, &client, hstudy, Way::Careful).await;
    fake.submit(&a.submission_id, Some(&code)).await;
    let mut others = Vec::new();
    for _ in 1..places {
        others.push(fake.arrive(&pid, None).await.submission_id);
    }
    // The sync reads the study ACTIVE, but its answer comes late: meanwhile everyone submits.
    let path = format!("/api/v1/studies/{pid}/");
    let reads = || async {
        let state = fake.state().await;
        let read = |q: &&Value| q["method"] == "GET" && q["path"] == path.as_str();
        state["requests"].as_array().unwrap().iter().filter(read).count()
    };
    let before = reads().await;
    fake.fault_with(serde_json::json!({"method": "GET", "path": path, "fault": "timeout", "delay_ms": 3000})).await;
    let late = tokio::spawn({
        let (r, url) = (r.clone(), sync_url.clone());
        async move { post(&r, &url, None).await }
    });
    // Once Prolific has read the study for the sync (its answer held back), not before.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while reads().await == before {
        assert!(std::time::Instant::now() < deadline, "the sync never read the study");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for sub in &others {
        fake.submit(sub, None).await;
    }
    late.await.unwrap();
    assert_eq!(fake.state().await["studies"][0]["status"], "AWAITING REVIEW", "no STOP applies there");

    // A return frees a place: Prolific's study is ACTIVE again, and a sync (the
    // server's own, woken by the last one, or this one) stops it, once.
    fake.return_(&others[0]).await;
    let mut status = Value::Null;
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let (s, report) = post(r, &sync_url, None).await;
        assert_eq!(s, 200, "{report}");
        status = fake.state().await["studies"][0]["status"].clone();
        if status == "COMPLETED" {
            break;
        }
    }
    let log = p.log();
    assert_eq!(status, "COMPLETED", "{log}");
    let stops: Vec<i64> = fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["method"] == "POST" && q["path"].as_str().unwrap_or("").ends_with("/transition/"))
        .map(|q| q["status"].as_i64().unwrap())
        .collect();
    assert_eq!(stops, [200, 200], "published, then stopped once active again, nothing refused: {log}");
}
