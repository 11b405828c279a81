//! Reading the next task has no side effect (issue 10): an annotator's
//! tasks are created by `POST /api/v1/studies/{id}/start`, never by a GET a
//! cross-site link could trigger.
use crate::helpers::{demo_study, TestApp};
use hardneg::api_types::{Progress, TaskView};

#[tokio::test]
async fn only_the_post_starts_a_study_and_it_is_idempotent() {
    let app = TestApp::spawn();
    let annotator = app.login("annotator1").await;
    let study = demo_study(&annotator, &app).await;
    let next = format!("/api/v1/studies/{study}/next");

    for _ in 0..2 {
        let res = annotator.get(app.url(&next)).send().await.unwrap();
        assert_eq!(res.status(), 409);
        let body: serde_json::Value = res.json().await.unwrap();
        let msg = body["error"].as_str().unwrap();
        assert!(msg.contains(&format!("POST /api/v1/studies/{study}/start")), "{msg}");
    }
    // The survey page itself, opened by a link, starts nothing either.
    let page = annotator.get(app.url(&format!("/annotate/{study}"))).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let summary = app.studies(&annotator).await.into_iter().find(|s| s.id.get() == study).unwrap();
    assert_eq!(summary.progress, None, "a GET created the participation");

    let first: Progress = app.start(&annotator, study).await.json().await.unwrap();
    assert!(first.total > 0 && first.done == 0, "{first:?}");
    let task: TaskView = annotator.get(app.url(&next)).send().await.unwrap().json().await.unwrap();
    assert_eq!(app.answer(&annotator, task.task_id, "A").await.status(), 200);
    let again: Progress = app.start(&annotator, study).await.json().await.unwrap();
    assert_eq!(again, Progress { done: 1, total: first.total }, "a second start changes nothing");
}
