//! `resolve = "first"` within one second: answers are stored to the second,
//! so the writer's arrival stamp, not the task id, says which came first.
//! The test clock is stopped, so every answer shares one second; the first
//! annotator to start (the lower task ids) is the last to answer.
use crate::helpers::{Spec, TestApp};

#[tokio::test]
async fn within_one_second_the_answer_that_arrived_first_settles_the_item() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    std::fs::write(&clock, format!("={now}")).unwrap();
    let app = TestApp::spawn_with_env(
        &tmp.path().join("data"),
        &["--demo-size", "4"],
        &[("HARDNEG_TEST_CLOCK_FILE", &clock)],
    );
    let researcher = app.login("researcher").await;
    let spec = Spec::new("F").seed(3).resolve("first").annotators(&["annotator1", "annotator2"]);
    let study = app.create_study_ok(&researcher, &spec).await;
    let late = app.login("annotator1").await;
    assert_eq!(app.start(&late, study).await.status(), 200);
    let early = app.work_through("annotator2", study, |_| "A".to_string()).await;
    let items = early.len();
    assert!(items >= 4, "{items} items");
    assert_eq!(app.work_through("annotator1", study, |_| "none".to_string()).await.len(), items);

    // Both annotators' answers share one second, and the late one's tasks
    // were handed out first: only the arrival stamp can tell them apart.
    let db = app.db().await;
    let stored: Vec<(String, i64, i64, i64)> = sqlx::query_as(
        "SELECT u.username, a.answered_at, a.arrival, a.task_id FROM answers a JOIN users u ON u.id = a.user_id
         WHERE a.study_id = $1 ORDER BY a.arrival",
    )
    .bind(study)
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(stored.len(), 2 * items);
    assert!(stored.iter().all(|s| s.1 == now as i64), "one second: {stored:?}");
    let (first, last) = stored.split_at(items);
    assert!(first.iter().all(|s| s.0 == "annotator2") && last.iter().all(|s| s.0 == "annotator1"), "{stored:?}");
    assert!(last.iter().map(|s| s.3).max() < first.iter().map(|s| s.3).min(), "annotator1's tasks came first");

    // "first" settles every item on annotator2's image, so each survives Step 3.
    let out = tmp.path().join("step3");
    let res = app.cli(&["export", "demo", "--stage", "step3", "--format", "csv", "--out", out.to_str().unwrap()]);
    let said = crate::helpers::text(&res.stdout) + &crate::helpers::text(&res.stderr);
    assert!(res.status.success(), "{said}");
    assert!(said.contains(&format!("exported {items} rows")), "{said}");
    let mut csv = csv::Reader::from_path(out.join("data.csv")).unwrap();
    let by = csv.headers().unwrap().iter().position(|h| h == "step3_resolved_by").unwrap();
    for row in csv.records() {
        assert_eq!(&row.unwrap()[by], "first");
    }
}
