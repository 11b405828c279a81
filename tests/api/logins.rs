//! Login limits behind a proxy (`--trust-proxy`) and when every password
//! check is busy (issue 10).
use crate::helpers::TestApp;
use reqwest::StatusCode;
use serde_json::json;

/// `POST /api/v1/session` with extra headers; the status and Set-Cookie.
async fn login(app: &TestApp, user: &str, password: &str, headers: &[(&str, String)]) -> (StatusCode, String) {
    let mut req = reqwest::Client::new().post(app.url("/api/v1/session"));
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let res = req.json(&json!({"username": user, "password": password})).send().await.unwrap();
    let cookie = res.headers().get("set-cookie").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (res.status(), cookie)
}

/// 12 wrong logins for 12 unknown accounts, the i-th sending
/// `X-Forwarded-For: forwarded(i)`; the statuses.
async fn flood(app: &TestApp, forwarded: impl Fn(usize) -> String) -> Vec<u16> {
    let mut statuses = Vec::new();
    for i in 0..12 {
        let xff = [("x-forwarded-for", forwarded(i))];
        statuses.push(login(app, &format!("nobody{i}"), "wrong", &xff).await.0.as_u16());
    }
    statuses
}

fn secure(cookie: &str) -> bool {
    cookie.split(';').any(|a| a.trim().eq_ignore_ascii_case("secure"))
}

#[tokio::test]
async fn forwarded_headers_count_only_with_trust_proxy() {
    let https = || ("x-forwarded-proto", "https".to_string());
    let tmp = tempfile::tempdir().unwrap();
    let (off, on) = (TestApp::spawn(), TestApp::spawn_on(tmp.path(), &["--trust-proxy"]));

    // Without the flag: neither header counts.
    let (status, cookie) = login(&off, "admin", &off.password("admin"), &[https()]).await;
    assert_eq!(status, 204);
    assert!(!secure(&cookie), "X-Forwarded-Proto from anyone must not mark cookies: {cookie}");
    let statuses = flood(&off, |i| format!("198.51.100.{i}")).await;
    assert!(statuses.contains(&429), "a rotating X-Forwarded-For escaped the address backoff: {statuses:?}");

    // With it: the proxy's HTTPS makes the cookie Secure, and each forwarded
    // address has its own backoff, keyed by the entry the proxy added.
    let (status, cookie) = login(&on, "admin", &on.password("admin"), &[https()]).await;
    assert_eq!(status, 204);
    assert!(secure(&cookie), "{cookie}");
    let (_, cookie) = login(&on, "admin", &on.password("admin"), &[]).await;
    assert!(!secure(&cookie), "plain HTTP behind the proxy: {cookie}");
    let statuses = flood(&on, |i| format!("198.51.100.{i}")).await;
    assert!(statuses.iter().all(|&s| s == 401), "one failure per forwarded address: {statuses:?}");
    let statuses = flood(&on, |i| format!("192.0.2.{i}, 203.0.113.9")).await;
    assert!(statuses.contains(&429), "the client's own entries must not rotate the key: {statuses:?}");
}
