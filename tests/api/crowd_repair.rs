//! What an answer sets off after its commit, cut short by a database fault
//! (docs/crowd.md, docs/deploy.md): the fault is a table or view of the
//! consequence taken away for one answer, as a cut connection would fail
//! it. An attention check's screen-out is redone by the answer's repeat and
//! by the servers' sweep; an adaptive round's decision by the sweep, with
//! no further answer at that server and no restart.
use crate::crowd_checks::named_option;
use crate::crowd_kit::{arrive, create_link_study, link_spec, stage, start};
use crate::helpers::{on_postgres, TestApp};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Takes the view or table `name` away (`cut`) or brings it back, on either backend.
async fn cut(app: &TestApp, name: &str, view: bool, away: bool) {
    let db = app.db().await;
    let hidden = format!("{name}_cut");
    let (from, to) = if away { (name, hidden.as_str()) } else { (hidden.as_str(), name) };
    if view && !on_postgres() {
        // SQLite renames no views: keep its definition aside in a table.
        if away {
            let sql: String = sqlx::query_scalar("SELECT sql FROM sqlite_master WHERE name = $1")
                .bind(name)
                .fetch_one(&db)
                .await
                .unwrap();
            sqlx::query(&format!("CREATE TABLE {hidden} (sql TEXT)")).execute(&db).await.unwrap();
            sqlx::query(&format!("INSERT INTO {hidden} VALUES ($1)")).bind(sql).execute(&db).await.unwrap();
            sqlx::query(&format!("DROP VIEW {name}")).execute(&db).await.unwrap();
        } else {
            let sql: String = sqlx::query_scalar(&format!("SELECT sql FROM {hidden}")).fetch_one(&db).await.unwrap();
            sqlx::query(&sql).execute(&db).await.unwrap();
            sqlx::query(&format!("DROP TABLE {hidden}")).execute(&db).await.unwrap();
        }
        return;
    }
    let what = if view { "VIEW" } else { "TABLE" };
    sqlx::query(&format!("ALTER {what} {from} RENAME TO {to}")).execute(&db).await.unwrap();
}

/// Answers `who`'s queue, attention checks wrongly, until the second wrong
/// one, which is sent while `check_answers` is away: its status (the answer
/// stored, its consequence failed), and the task and option to repeat.
async fn fail_two_checks_under_a_fault(app: &TestApp, who: &Client, study: i64) -> (StatusCode, String, String) {
    let mut failed = 0;
    while let Some(t) = app.next_task(who, study).await {
        let choice = match named_option(&t) {
            Some(named) => {
                failed += 1;
                t.options.iter().map(|o| o.id.clone()).find(|o| *o != named).unwrap()
            }
            None => "A".to_string(),
        };
        if failed == 2 {
            cut(app, "check_answers", true, true).await;
            let status = app.answer(who, t.task_id, &choice).await.status();
            cut(app, "check_answers", true, false).await;
            return (status, t.task_id.to_string(), choice);
        }
        let res = app.answer(who, t.task_id, &choice).await;
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    }
    panic!("the bundle had fewer than two attention checks");
}

const CHECKS: &[&str] = &["attention_checks = 2", "screen_out_code = \"SCREEN01\""];

/// Waits (up to 20 s) until `done` holds of what `read` returns.
async fn eventually<F: std::future::Future<Output = Value>>(
    read: impl Fn() -> F,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let v = read().await;
        if done(&v) || Instant::now() > until {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_screen_out_cut_short_is_redone_by_the_answers_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let hour = [("HARDNEG_SWEEP_SECS", Path::new("3600"))];
    let app = TestApp::spawn_with_env(&tmp.path().join("data"), &[], &hour);
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("repeat", 9, CHECKS)).await;
    let who = arrive(&app, &token, study, "RETRY").await;
    start(&app, &who, study).await;
    let (status, task, choice) = fail_two_checks_under_a_fault(&app, &who, study).await;
    assert_eq!(status, 500, "the screen-out failed after the answer's commit");
    assert_eq!(stage(&app, &who, study).await["stage"], "working", "not ended yet");
    // The page sends it again, as api.md says to after a 500.
    let url = app.url(&format!("/api/v1/tasks/{task}/answer"));
    let res = who.post(url).json(&serde_json::json!({ "option": choice })).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["duplicate"], true);
    let s = stage(&app, &who, study).await;
    assert_eq!((s["stage"].as_str(), s["code"].as_str()), (Some("screened_out"), Some("SCREEN01")), "{s}");
}

#[tokio::test]
async fn the_servers_sweep_ends_a_failed_place_and_decides_a_round_nobody_answers_again() {
    let tmp = tempfile::tempdir().unwrap();
    let often = [("HARDNEG_SWEEP_SECS", Path::new("0.5"))];
    let app = TestApp::spawn_with_env(&tmp.path().join("data"), &["--demo-size", "6"], &often);
    let researcher = app.login("researcher").await;

    // The attention checks: no repeat, and the participant goes on.
    let (study, token) = create_link_study(&app, &researcher, &link_spec("sweep", 3, CHECKS)).await;
    let who = arrive(&app, &token, study, "NORETRY").await;
    start(&app, &who, study).await;
    assert_eq!(fail_two_checks_under_a_fault(&app, &who, study).await.0, 500);
    let s = eventually(|| stage(&app, &who, study), |s| s["stage"] == "screened_out").await;
    assert_eq!((s["stage"].as_str(), s["reason"].as_str()), (Some("screened_out"), Some("attention_checks")), "{s}");

    // The adaptive round: the study's last answer, its decision failed.
    let spec = format!("{}[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n", link_spec("rounds", 6, &[]));
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    let path = format!("/api/v1/studies/{study}/adaptive");
    let adaptive = || app.get::<Value>(&researcher, &path);
    for (pid, n) in [("FIRST", 6), ("SECOND", 5)] {
        let p = arrive(&app, &token, study, pid).await;
        start(&app, &p, study).await;
        for _ in 0..n {
            let t = app.next_task(&p, study).await.unwrap();
            assert_eq!(app.answer(&p, t.task_id, "none").await.status(), 200);
        }
        if pid == "SECOND" {
            let t = app.next_task(&p, study).await.unwrap();
            cut(&app, "adaptive_items", false, true).await;
            let res = app.answer(&p, t.task_id, "none").await;
            cut(&app, "adaptive_items", false, false).await;
            assert_eq!(res.status(), 200, "the answer stands; its decision failed");
        }
    }
    let a = eventually(adaptive, |a| a["stopped"]["agreed"] == 6).await;
    assert_eq!((a["stopped"]["agreed"].as_i64(), a["stopped"]["collecting"].as_i64()), (Some(6), Some(0)), "{a}");
}

/// A session the server cannot read for a moment (its table away, as a
/// PostgreSQL restart cuts the read) is 503 with Retry-After, never "not
/// logged in": a participant has no password to log in again with.
#[tokio::test]
async fn a_session_that_cannot_be_read_is_a_503_not_a_logout() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &[]);
    let cookie = crate::hardening::session_cookie(&app, "annotator1").await;
    drop(app);
    // Restarted: the session is read from the database, not a process's cache.
    let app = TestApp::spawn_on(tmp.path(), &[]);
    let studies = || reqwest::Client::new().get(app.url("/api/v1/studies")).header("cookie", cookie.clone()).send();
    cut(&app, "tower_sessions", false, true).await;
    let res = studies().await.unwrap();
    assert_eq!(res.status(), 503);
    assert!(res.headers().get("retry-after").is_some());
    let said = res.json::<Value>().await.unwrap()["error"].as_str().unwrap().to_string();
    assert!(said.contains("cannot read your session right now"), "{said}");
    cut(&app, "tower_sessions", false, false).await;
    assert_eq!(studies().await.unwrap().status(), 200, "the same cookie works again");
}
