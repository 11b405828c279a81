//! Cutting an account off on a running server (audit AZ: there was no way):
//! `hardneg user sign-out | role | password | disable` end the account's
//! sessions within seconds, and a disabled account logs in nowhere.
use crate::helpers::{command_on, TestApp};
use reqwest::Client;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

async fn overview(app: &TestApp, c: &Client) -> u16 {
    c.get(app.url("/api/v1/studies/overview")).send().await.unwrap().status().as_u16()
}

/// The status `c` gets once the server has read the account's standing
/// (it trusts a read for two seconds).
async fn settles_on(app: &TestApp, c: &Client, want: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = overview(app, c).await;
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "still {got}, not {want}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn user(app: &TestApp, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut cmd = command_on(&app.data_dir)
        .arg("user")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = cmd.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    cmd.wait_with_output().unwrap()
}

async fn log_in(app: &TestApp, name: &str, password: &str) -> (u16, Client) {
    let c = TestApp::client();
    let body = serde_json::json!({"username": name, "password": password});
    let res = c.post(app.url("/api/v1/session")).json(&body).send().await.unwrap();
    (res.status().as_u16(), c)
}

#[tokio::test]
async fn an_account_signed_out_given_another_role_or_password_or_disabled_loses_its_sessions() {
    let mut app = TestApp::spawn();
    app.add_user("ra", "researcher", "first-password");
    let (s, first) = log_in(&app, "ra", "first-password").await;
    assert_eq!((s, overview(&app, &first).await), (204, 200));
    let other = app.login("researcher").await;

    assert!(user(&app, &["sign-out", "ra"], None).status.success());
    settles_on(&app, &first, 401).await;
    assert_eq!(overview(&app, &other).await, 200, "another account's session is untouched");
    let (s, second) = log_in(&app, "ra", "first-password").await;
    assert_eq!((s, overview(&app, &second).await), (204, 200), "a new login counts");

    assert!(user(&app, &["role", "ra", "annotator"], None).status.success());
    settles_on(&app, &second, 401).await;
    let (s, third) = log_in(&app, "ra", "first-password").await;
    assert_eq!((s, overview(&app, &third).await), (204, 403), "an annotator now");

    let out = user(&app, &["password", "ra", "--password-stdin"], Some("second-password\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    settles_on(&app, &third, 401).await;
    assert_eq!(log_in(&app, "ra", "first-password").await.0, 401, "the old password is gone");
    let (s, fourth) = log_in(&app, "ra", "second-password").await;
    assert_eq!((s, overview(&app, &fourth).await), (204, 403));

    assert!(user(&app, &["disable", "ra"], None).status.success());
    settles_on(&app, &fourth, 401).await;
    assert_eq!(log_in(&app, "ra", "second-password").await.0, 401, "a disabled account logs in nowhere");
    assert!(user(&app, &["enable", "ra"], None).status.success());
    assert_eq!(overview(&app, &fourth).await, 401, "enabling brings no old session back");
    assert_eq!(log_in(&app, "ra", "second-password").await.0, 204);

    let out = user(&app, &["disable", "nobody"], None);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no account \"nobody\""));
    let out = user(&app, &["password", "ra", "--password-stdin"], Some("short\n"));
    assert!(!out.status.success(), "a short password is refused");
}
