//! Connections on the open internet: a client that never finishes its
//! headers is closed after the header timeout, one address holds only its
//! share of connections, and a stop does not wait on idle sockets.
use crate::helpers::TestApp;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// A connection that sends half a request and never the rest.
fn half_request(app: &TestApp) -> TcpStream {
    let mut s = TcpStream::connect(app.base.trim_start_matches("http://")).unwrap();
    s.write_all(b"GET /login HTTP/1.1\r\nHost: x\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Seconds until the server closes `s` (reads to the end, whatever it answered).
fn closed_after(mut s: TcpStream) -> f64 {
    let t = Instant::now();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    t.elapsed().as_secs_f64()
}

#[tokio::test]
async fn slow_headers_are_cut_off_and_one_address_cannot_take_every_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let env: [(&str, &Path); 2] =
        [("HARDNEG_HEADER_TIMEOUT_SECS", Path::new("1")), ("HARDNEG_MAX_CONNECTIONS_PER_ADDRESS", Path::new("4"))];
    let mut app = TestApp::spawn_with_env(&tmp.path().join("data"), &[], &env);
    let held: Vec<TcpStream> = (0..4).map(|_| half_request(&app)).collect();
    std::thread::sleep(Duration::from_millis(200));
    // A fifth from the same address is closed at once, before the timeout.
    assert!(closed_after(half_request(&app)) < 0.9, "over the address's share");
    // The four are closed by the header timeout, and the address is served again.
    for s in held {
        let waited = closed_after(s);
        assert!(waited < 5.0, "a half request held its connection {waited}s");
    }
    let res = reqwest::get(app.url("/login")).await.unwrap();
    assert_eq!(res.status(), 200);
    // An idle connection and a half request do not hold up a stop.
    let _idle = TcpStream::connect(app.base.trim_start_matches("http://")).unwrap();
    let _half = half_request(&app);
    let t = Instant::now();
    app.terminate();
    assert!(app.wait().success());
    assert!(t.elapsed() < Duration::from_secs(5), "the stop waited {:?}", t.elapsed());
}

/// A body sent a byte at a time is cut off once it falls behind the
/// minimum rate (after its grace), and the address is served again.
#[tokio::test]
async fn a_body_trickled_a_byte_at_a_time_is_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let env: [(&str, &Path); 1] = [("HARDNEG_BODY_GRACE_SECS", Path::new("1"))];
    let app = TestApp::spawn_with_env(&tmp.path().join("data"), &[], &env);
    let mut s = TcpStream::connect(app.base.trim_start_matches("http://")).unwrap();
    let head = format!(
        "POST /api/v1/session HTTP/1.1\r\nHost: {}\r\nOrigin: {}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n",
        app.base.trim_start_matches("http://"),
        app.base
    );
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        // 4,000 bytes at 5 a second would take 13 minutes.
        for _ in 0..100 {
            if writer.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let t = Instant::now();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let waited = t.elapsed().as_secs_f64();
    assert!(waited < 5.0, "a trickled body held its connection {waited}s");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    trickle.join().unwrap();
    // The same body sent at once is read (and refused for what it says).
    let res = reqwest::Client::new()
        .post(app.url("/api/v1/session"))
        .header("Origin", &app.base)
        .json(&serde_json::json!({"username": "nobody", "password": "wrong"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}

/// A request head well over 32 KiB is refused (431) instead of buffered, so an
/// unfinished one holds little memory; one of 20 KiB is served.
#[tokio::test]
async fn a_request_head_over_its_cap_is_refused() {
    let app = TestApp::spawn();
    let head = |bytes: usize| {
        let mut s = TcpStream::connect(app.base.trim_start_matches("http://")).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let filler = "a".repeat(bytes);
        s.write_all(
            format!("GET /login HTTP/1.1\r\nHost: x\r\nX-Filler: {filler}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.split(' ').nth(1).unwrap_or_default().to_string()
    };
    assert_eq!(head(20 * 1024), "200");
    assert_eq!(head(100 * 1024), "431");
}

/// A refusal that may leave the body unread says it closes the connection,
/// so a keep-alive client does not send its next request down it; one
/// without a body, or a success, keeps it.
#[tokio::test]
async fn a_refusal_with_a_body_left_unread_says_the_connection_closes() {
    let app = TestApp::spawn();
    let client = TestApp::client();
    let body = serde_json::json!({"option": "A"});
    let res = client.post(app.url("/api/v1/tasks/1/answer")).json(&body).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers().get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    let cross = client.post(app.url("/api/v1/tasks/1/answer")).header("origin", "http://evil.example").json(&body);
    let res = cross.send().await.unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(res.headers().get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    let res = client.get(app.url("/api/v1/studies")).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert!(res.headers().get("connection").is_none(), "no body, nothing left unread");
}
