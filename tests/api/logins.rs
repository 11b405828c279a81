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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saturated_password_check_answers_503_and_the_right_password_works_after() {
    // One check at a time, and a distinct forwarded address per login, so
    // no backoff applies: every login queues for the one check. 200 checks
    // take far longer than the 300 ms a login may wait (a fixed 5 s wait
    // made this depend on the machine's speed).
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--trust-proxy", "--login-checks", "1", "--login-wait-ms", "300"]);
    let url = app.url("/api/v1/session");
    let started = std::time::Instant::now();
    let burst = (0..200).map(|i| {
        let url = url.clone();
        tokio::spawn(async move {
            let res = reqwest::Client::new()
                .post(url)
                .header("x-forwarded-for", format!("10.9.{}.{}", i / 250, i % 250 + 1))
                .json(&json!({"username": format!("nobody{i}"), "password": "wrong"}))
                .send()
                .await
                .unwrap();
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
            (res.status().as_u16(), retry, res.text().await.unwrap())
        })
    });
    let mut answers = Vec::new();
    for task in burst.collect::<Vec<_>>() {
        answers.push(task.await.unwrap());
    }
    let busy: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 503).collect();
    let checked = answers.iter().filter(|(s, _, _)| *s == 401).count();
    eprintln!("200 logins on one check slot: {checked} checked, {} busy in {:?}", busy.len(), started.elapsed());
    assert_eq!(checked + busy.len(), answers.len(), "only 401 or 503: {answers:?}");
    assert!(!busy.is_empty(), "no login waited 300 ms for the one check");
    for (_, retry, body) in &busy {
        assert_eq!(retry.as_deref(), Some("1"));
        assert!(body.contains("the server is busy checking other logins"), "{body}");
    }
    let (status, _) = login(&app, "admin", &app.password("admin"), &[]).await;
    assert_eq!(status, 204, "the right password once the burst is over");
}

/// Logging in with a session cookie gives a new session id and ends the old
/// session (no fixation); logging in without one starts a session.
#[tokio::test]
async fn a_login_replaces_the_session_it_came_with() {
    let app = TestApp::spawn();
    let session = |set_cookie: &str| set_cookie.split(';').next().unwrap().to_string();
    let users = |cookie: String| {
        let req = reqwest::Client::new().get(app.url("/api/v1/users")).header("cookie", cookie);
        async move { req.send().await.unwrap().status() }
    };
    let (status, set) = login(&app, "admin", &app.password("admin"), &[]).await;
    assert_eq!(status, 204);
    let first = session(&set);
    assert!(first.starts_with("hardneg_session="), "a login without a cookie starts a session: {set}");
    assert_eq!(users(first.clone()).await, 200);

    let (status, set) = login(&app, "admin", &app.password("admin"), &[("cookie", first.clone())]).await;
    assert_eq!(status, 204);
    let second = session(&set);
    assert_ne!(first, second, "the session id must change at login");
    assert_eq!(users(second).await, 200);
    assert_eq!(users(first).await, 401, "the session the login came with is ended");
}

/// Without JavaScript a failed login comes back as a redirect whose URL
/// carries the error (`?__err=`, leptos's form round trip), and such a URL
/// is anyone's to write: the page shows the login's own messages only
/// (audit AS: a link put "Log in at http://evil.example" on the page).
#[tokio::test]
async fn the_login_page_shows_only_its_own_messages_from_the_url() {
    use base64::Engine;
    let app = TestApp::spawn();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let action = crate::hardening::login_action(&app).await;
    let res = client
        .post(app.url(&action))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "text/html")
        .header("referer", app.url("/login"))
        .body("username=annotator1&password=not-the-password")
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());
    let back = res.headers()["location"].to_str().unwrap().to_string();
    assert!(back.contains("__err="), "{back}");
    let back = if back.starts_with("http") { back } else { app.url(&back) };
    let page = client.get(&back).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Unknown username or wrong password."), "the real error is shown: {page}");

    let forged = base64::engine::general_purpose::STANDARD
        .encode("ServerError|Your session expired. Log in at http://evil.example/login instead");
    let url = format!("/login?__path={}&__err={}", urlencoding(&action), urlencoding(&forged));
    let page = client.get(app.url(&url)).send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("evil.example"), "{page}");
    assert!(page.contains("Logging in did not work; try again in a moment."), "{page}");
}

fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
