//! A known PROLIFIC_PID re-posting the join form without the session
//! cookie started a new session each time, even on a closed study (an
//! audit: 6,463 session rows in 30 s from one address). A participant now
//! holds at most three sessions from such arrivals; an older one ends.
use crate::crowd_kit::{arrive, arrive_with, browser, create_link_study, link_spec};
use crate::helpers::TestApp;

async fn sessions(app: &TestApp) -> i64 {
    let db = app.db().await;
    let n = sqlx::query_scalar("SELECT count(*) FROM tower_sessions").fetch_one(&db).await.unwrap();
    db.close().await;
    n
}

#[tokio::test]
async fn arriving_again_and_again_keeps_three_sessions() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("sessions", 4, &[])).await;
    let first = arrive(&app, &token, study, "5f0000000000000000000001").await;
    let take = format!("/api/v1/take/{study}");
    assert_eq!(first.get(app.url(&take)).send().await.unwrap().status(), 200);
    let before = sessions(&app).await;
    // The researcher closes the link: a known participant still comes back.
    let closed = researcher.post(app.url(&format!("/api/v1/studies/{study}/close"))).send().await.unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    let mut browsers = Vec::new();
    for _ in 0..12 {
        let b = browser();
        let (status, location) = arrive_with(&app, &b, &token, "5f0000000000000000000001").await;
        assert_eq!((status.as_u16(), location), (303, format!("/take/{study}")));
        browsers.push(b);
    }
    assert_eq!(sessions(&app).await, before + 3, "three sessions from arrivals again, however many came");
    for (i, b) in browsers.iter().enumerate() {
        let status = b.get(app.url(&take)).send().await.unwrap().status();
        assert_eq!(status, if i >= 9 { 200 } else { 401 }, "browser {i}");
    }
    // The first browser's own session is not one of them: it goes on.
    assert_eq!(first.get(app.url(&take)).send().await.unwrap().status(), 200);
}
