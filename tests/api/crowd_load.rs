//! Exactly K completed copies per bundle under a crowd: 500 participants
//! arrive at once over real HTTP on 20 bundles wanting 2 copies each.
use crate::crowd_kit::{answer_n, arrive_with, browser, create_link_study, link_spec, start};
use crate::helpers::TestApp;
use serde_json::Value;

#[tokio::test]
async fn five_hundred_simultaneous_arrivals_fill_forty_places_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    // 60 demo items in bundles of 3: 20 bundles.
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "60"]);
    let researcher = app.login("researcher").await;
    let spec = link_spec("crowd load", 3, &["copies = 2", "full_code = \"FULL0001\""]);
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    let arrivals = (0..500).map(|i| {
        let token = &token;
        let app = &app;
        async move {
            let client = browser();
            let (status, body) = arrive_with(app, &client, token, &format!("P{i:03}")).await;
            (client, status.as_u16(), body)
        }
    });
    let mut admitted = Vec::new();
    let mut full = 0;
    for a in futures_util::future::join_all(arrivals).await {
        let (client, status, body) = a;
        match status {
            303 => admitted.push(client),
            200 if body.contains("This study is full") && body.contains("FULL0001") => full += 1,
            other => panic!("arrival answered {other}: {body}"),
        }
    }
    assert_eq!((admitted.len(), full), (40, 460));
    let bundles: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/bundles")).await;
    assert_eq!(bundles.len(), 20);
    assert!(bundles.iter().all(|b| b["active"] == 2), "{bundles:?}");

    // All 40 finish at once; late arrivals still find the study full.
    let work = admitted.iter().map(|client| async {
        start(&app, client, study).await;
        answer_n(&app, client, study, 10, "A").await
    });
    for n in futures_util::future::join_all(work).await {
        assert_eq!(n, 3);
    }
    let (status, body) = arrive_with(&app, &browser(), &token, "LATE").await;
    assert!(status == 200 && body.contains("This study is full"));
    let bundles: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/bundles")).await;
    assert!(bundles.iter().all(|b| b["completed"] == 2 && b["active"] == 0), "{bundles:?}");
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], 120, "20 bundles x 3 items x 2 copies");
}
