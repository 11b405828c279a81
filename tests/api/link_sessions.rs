//! A known PROLIFIC_PID re-posting the join form without the session
//! cookie started a new session each time, even on a closed study (an
//! audit: 6,463 session rows in 30 s from one address). A participant now
//! holds at most three sessions from such arrivals; an older one ends.
use crate::crowd_kit::{arrive, arrive_with, browser, create_link_study, link_spec};
use crate::helpers::TestApp;

const PID: &str = "5f0000000000000000000001";

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
    let first = arrive(&app, &token, study, PID).await;
    let take = format!("/api/v1/take/{study}");
    assert_eq!(first.get(app.url(&take)).send().await.unwrap().status(), 200);
    let before = sessions(&app).await;
    // The researcher closes the link: a known participant still comes back.
    let closed = researcher.post(app.url(&format!("/api/v1/studies/{study}/close"))).send().await.unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    let mut browsers = Vec::new();
    for _ in 0..12 {
        let b = browser();
        let (status, location) = arrive_with(&app, &b, &token, PID).await;
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

    // Four at once: a session ended while its own arrival was still being
    // answered is not saved back at that request's end (it once was: 100 rows).
    let floods: Vec<_> = (0..4)
        .map(|_| {
            let url = app.url(&format!("/join/{token}"));
            tokio::spawn(async move {
                for _ in 0..15 {
                    let res = browser()
                        .post(&url)
                        .form(&[("PROLIFIC_PID", PID), ("STUDY_ID", "S1"), ("SESSION_ID", "X1"), ("consent", "yes")])
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), 303);
                }
            })
        })
        .collect();
    for f in floods {
        f.await.unwrap();
    }
    assert_eq!(sessions(&app).await, before + 3, "still three, however they came");
}
