//! Leases over time, with the server's test clock moved instead of waiting
//! an hour, and a participant's answers across a SIGKILL.
use crate::crowd_kit::{answer_n, arrive, create_link_study, lease_states, link_spec, post_ok, stage, start};
use crate::helpers::TestApp;
use serde_json::Value;
use std::path::Path;

#[tokio::test]
async fn an_expired_bundle_goes_to_a_new_participant_and_the_late_one_is_an_extra_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock-offset");
    let app = TestApp::spawn_with_env(&tmp.path().join("data"), &[], &[("HARDNEG_TEST_CLOCK_FILE", &clock)]);
    let researcher = app.login("researcher").await;
    // One bundle of all 63 items, one copy, 60 minutes.
    let (study, token) = create_link_study(&app, &researcher, &link_spec("crowd expiry", 63, &[])).await;
    let late = arrive(&app, &token, study, "LATE").await;
    start(&app, &late, study).await;
    assert_eq!(answer_n(&app, &late, study, 10, "none").await, 10);
    let full = crate::crowd_kit::arrive_with(&app, &crate::crowd_kit::browser(), &token, "EARLY").await;
    assert!(full.1.contains("This study is full"), "the place is held within the hour");

    std::fs::write(&clock, "3601").unwrap();
    assert_eq!(stage(&app, &late, study).await["late"], true);
    // The next arrival reclaims the overdue place.
    let fresh = arrive(&app, &token, study, "FRESH").await;
    assert_eq!(lease_states(&app, &researcher, study).await, ["timed_out", "active"]);
    // Coming back by the link, the late one is told so, not that it holds a place.
    let back = reqwest::get(app.url(&format!("/join/{token}?PROLIFIC_PID=LATE"))).await.unwrap();
    let page = back.text().await.unwrap();
    assert!(page.contains("Your time limit has passed") && !page.contains("You have a place"), "{page}");
    start(&app, &fresh, study).await;
    assert_eq!(answer_n(&app, &fresh, study, 100, "A").await, 63);
    // The timed-out participant may still finish, and is given the code.
    assert_eq!(answer_n(&app, &late, study, 100, "none").await, 53);
    let code: Value = app.get(&late, &format!("/api/v1/take/{study}/completion")).await;
    let link: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/link")).await;
    assert_eq!(code["code"], link["completion_code"]);
    assert_eq!(lease_states(&app, &researcher, study).await, ["extra", "completed"]);
    let bundles: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/bundles")).await;
    assert_eq!((bundles[0]["completed"].as_i64(), bundles[0]["extra"].as_i64()), (Some(1), Some(1)));

    // Its answers are kept but left out: no agreement pair, one copy's answers.
    let agreement: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/agreement")).await;
    assert_eq!(agreement["pairs"].as_array().unwrap().len(), 0, "{agreement}");
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], 63);
    let none = progress["distribution"].as_array().unwrap().iter().find(|o| o["option"] == "none").unwrap().clone();
    assert_eq!(none["count"], 0, "the extra copy's None answers are not counted");
    assert_eq!(stored_answers(&tmp.path().join("data"), study), 126, "both copies' answers are stored");
}

/// With every Prolific place taken by people who left nobody arrives to
/// reclaim an overdue place (an audit's study waited for ever): past the time
/// limit it counts as free in the Prolific status, so its places proposal
/// brings the arrival that reclaims it; until then the late one's copy counts.
#[tokio::test]
async fn an_overdue_place_counts_as_free_for_the_places_proposal() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock-offset");
    let app = TestApp::spawn_with_env(&tmp.path().join("data"), &[], &[("HARDNEG_TEST_CLOCK_FILE", &clock)]);
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("overdue", 63, &[])).await;
    let db = crate::helpers::db_at(&app.data_dir).await;
    sqlx::query("INSERT INTO prolific_studies (study_id, prolific_id, internal_name, places, reward_cents, created_at) VALUES ($1, 'p1', 'overdue', 1, 150, 0)")
        .bind(study)
        .execute(&db)
        .await
        .unwrap();
    // The one Prolific place is held by one who gave up and submitted without a code.
    sqlx::query("INSERT INTO prolific_submissions (study_id, submission_id, participant_id, status, return_requested, seen_at) VALUES ($1, 's1', 'GONE', 'AWAITING REVIEW', 0, 0)")
        .bind(study)
        .execute(&db)
        .await
        .unwrap();
    let gone = arrive(&app, &token, study, "GONE").await;
    start(&app, &gone, study).await;
    assert_eq!(answer_n(&app, &gone, study, 2, "none").await, 2);
    let url = format!("/api/v1/studies/{study}/prolific");
    let s: Value = app.get(&researcher, &url).await;
    let free_working = |s: &Value| (s["hardneg_free"].as_i64(), s["hardneg_working"].as_i64());
    assert_eq!((free_working(&s), s["propose_more_places"].as_u64()), ((Some(0), Some(1)), None), "{s}");
    std::fs::write(&clock, "3601").unwrap();
    let s: Value = app.get(&researcher, &url).await;
    assert_eq!((free_working(&s), s["propose_more_places"].as_u64()), ((Some(1), Some(0)), Some(1)), "{s}");
    assert_eq!(lease_states(&app, &researcher, study).await, ["active"], "nobody has reclaimed it yet");
    assert_eq!(answer_n(&app, &gone, study, 100, "none").await, 61, "the late one may still finish");
    assert_eq!(lease_states(&app, &researcher, study).await, ["completed"], "and its copy counts");
}

/// The bundle's last answer sent again (its response lost): the place has
/// completed with it, and the repeat is answered as a repeat, not refused.
#[tokio::test]
async fn the_last_answer_of_a_bundle_may_be_sent_again() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("last again", 9, &[])).await;
    let p = arrive(&app, &token, study, "AGAIN").await;
    start(&app, &p, study).await;
    let mut last = None;
    while let Some(task) = app.next_task(&p, study).await {
        assert_eq!(app.answer(&p, task.task_id, "none").await.status(), 200);
        last = Some(task.task_id);
    }
    assert_eq!(lease_states(&app, &researcher, study).await, ["completed"]);
    for option in ["none", "A"] {
        let res = app.answer(&p, last.unwrap(), option).await;
        assert_eq!(res.status(), 200, "{option}");
        let ack: Value = res.json().await.unwrap();
        assert_eq!((ack["duplicate"].as_bool(), ack["option"].as_str()), (Some(true), Some("none")), "{ack}");
    }
}

/// The answers stored for the study's participants, counted or not (`hardneg participants --csv`).
fn stored_answers(data: &Path, study: i64) -> i64 {
    let out = crate::helpers::cli(data, &["participants", &study.to_string(), "--csv"]);
    let text = crate::helpers::text(&out.stdout);
    text.lines().skip(1).map(|l| l.split(',').nth(4).unwrap().parse::<i64>().unwrap()).sum()
}

#[tokio::test]
async fn a_participant_resumes_after_sigkill_by_cookie_and_by_id() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &[]);
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("crowd kill", 21, &[])).await;
    let p = arrive(&app, &token, study, "KILLED").await;
    start(&app, &p, study).await;
    assert_eq!(answer_n(&app, &p, study, 7, "B").await, 7, "seven acknowledged answers");
    let accounts = app.accounts.clone();
    app.kill();
    drop(app);
    let mut app = TestApp::spawn_on(tmp.path(), &[]);
    app.accounts = accounts;
    // The same cookie: the session is stored, and so is every acknowledged answer.
    let s = stage(&app, &p, study).await;
    assert_eq!((s["stage"].as_str(), s["done"].as_i64()), (Some("working"), Some(7)), "{s}");
    // Arriving again by PID from another browser resumes the same bundle.
    let again = arrive(&app, &token, study, "KILLED").await;
    assert_eq!(stage(&app, &again, study).await["done"], 7);
    assert_eq!(answer_n(&app, &again, study, 100, "B").await, 14);
    assert_eq!(post_ok(&app, &p, &format!("/api/v1/take/{study}/instructions")).await["stage"], "complete");
    let researcher = app.login("researcher").await;
    assert_eq!(lease_states(&app, &researcher, study).await, ["completed"]);
}
