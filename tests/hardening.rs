//! Hardening against hostile clients (issue 10): the real binary on a
//! temporary data dir, attacked over real HTTP.
mod common;
use common::TestApp;
use reqwest::StatusCode;
use serde_json::json;
use std::time::Duration;

/// The server process serving `app` (found by its data dir, so the shared
/// harness need not expose it).
fn server_pid(app: &TestApp) -> u32 {
    let dir = app.data_dir.to_string_lossy().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmd.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).to_string()).collect();
        if args.iter().any(|a| a == "serve") && args.iter().any(|a| *a == dir) {
            return pid;
        }
    }
    panic!("no server process for {dir}");
}

/// The peak resident memory of the server so far, in MB.
fn peak_mb(app: &TestApp) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server_pid(app))).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

fn spawn_fresh() -> (TestApp, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    (TestApp::spawn_on(tmp.path(), &[]), tmp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_login_flood_stays_small_and_the_right_password_works_after() {
    let (app, _tmp) = spawn_fresh();
    let url = app.url("/api/v1/session");
    let flood = (0..256).map(|i| {
        let url = url.clone();
        tokio::spawn(async move {
            let body = json!({"username": "admin", "password": format!("wrong guess {i}")});
            let res = TestApp::client().post(url).json(&body).send().await.unwrap();
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
            (res.status(), retry)
        })
    });
    let mut answers = Vec::new();
    for task in flood.collect::<Vec<_>>() {
        answers.push(task.await.unwrap());
    }
    let peak = peak_mb(&app);
    eprintln!("server peak after 256 parallel wrong logins: {peak} MB");
    assert!(peak < 300, "the server peaked at {peak} MB during the flood");
    assert!(answers.iter().all(|(s, _)| [401, 429, 503].contains(&s.as_u16())), "{answers:?}");
    let throttled = answers.iter().filter(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS).count();
    assert!(throttled > 200, "only {throttled} of 256 were throttled");
    assert!(answers.iter().filter(|(s, _)| *s != StatusCode::UNAUTHORIZED).all(|(_, r)| r.is_some()));

    // The backoff ends: the right password works once it has passed.
    let right = json!({"username": "admin", "password": app.password("admin")});
    let mut status = StatusCode::TOO_MANY_REQUESTS;
    for _ in 0..5 {
        let res = TestApp::client().post(&url).json(&right).send().await.unwrap();
        status = res.status();
        if status != StatusCode::TOO_MANY_REQUESTS {
            break;
        }
        let wait: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        let body: serde_json::Value = res.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("too many failed logins"), "{body}");
        assert!(wait <= 60, "a flood locks the account for at most a minute, not {wait} s");
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
    assert_eq!(status, 204, "the right password after the flood");
}
