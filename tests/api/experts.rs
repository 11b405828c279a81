//! Kinds whose protocol fixes the people on every item (SugarCrepe++'s two
//! experts): a spec that would leave items to one person is refused at
//! creation, and under `annotators = "all"` a third annotator is turned
//! away instead of reopening what the two settled.
use crate::helpers::{Spec, TestApp};
use serde_json::Value;

async fn status_and_error(res: reqwest::Response) -> (u16, String) {
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap();
    (status, body["error"].as_str().unwrap_or_default().to_string())
}

#[tokio::test]
async fn pairs_that_share_only_some_items_are_refused_for_two_experts() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let partial = Spec::new("triplets shared in part").kind("triplet_check").dataset("demo-triplets");
    let res = app.create_study(&researcher, &partial.pairs(&[["annotator1", "annotator2"]], 3)).await;
    let (status, said) = status_and_error(res).await;
    assert_eq!(status, 422, "{said}");
    assert!(
        said.starts_with("field `assignment.overlap`: triplet_check wants 2 people on every item; 1 pair(s) sharing 3 items each leave"),
        "{said}"
    );
    let studies: Vec<Value> = app.get(&researcher, "/api/v1/studies").await;
    assert!(studies.iter().all(|s| s["name"] != "triplets shared in part"), "nothing was created");
    // One pair sharing every item is the two experts.
    let whole = Spec::new("triplets shared whole").kind("triplet_check").dataset("demo-triplets");
    app.create_study_ok(&researcher, &whole.pairs(&[["annotator1", "annotator2"]], 100_000)).await;
}

#[tokio::test]
async fn under_all_a_third_annotator_is_turned_away_and_the_two_keep_their_items() {
    let mut app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    // Two annotator accounts now: "all" is the two experts.
    let spec = Spec::new("experts by all").kind("triplet_check").dataset("demo-triplets");
    let study = app.create_study_ok(&researcher, &spec).await;
    app.add_user("late", "annotator", "late-password-1");
    let (first, late, second) = (app.login("annotator1").await, app.login("late").await, app.login("annotator2").await);
    let start = |c: &reqwest::Client| c.post(app.url(&format!("/api/v1/studies/{study}/start"))).send();
    assert_eq!(start(&first).await.unwrap().status(), 200);
    assert_eq!(start(&late).await.unwrap().status(), 200, "whoever comes second is the second expert");
    let (status, said) = status_and_error(start(&second).await.unwrap()).await;
    assert_eq!(status, 409);
    assert_eq!(
        said,
        "triplet_check wants 2 people on every item, and 2 have started this study, so it takes no one else"
    );
    // Starting again is still fine for the two who did.
    assert_eq!(start(&first).await.unwrap().status(), 200);
    let tasks: i64 = sqlx::query_scalar("SELECT count(DISTINCT user_id) FROM tasks WHERE study_id = $1")
        .bind(study)
        .fetch_one(&app.db().await)
        .await
        .unwrap();
    assert_eq!(tasks, 2, "nobody else holds tasks");
    // Nobody has answered yet: there is nothing for a third person to settle.
    let item: i64 = sqlx::query_scalar("SELECT min(instance_id) FROM study_items WHERE study_id = $1")
        .bind(study)
        .fetch_one(&app.db().await)
        .await
        .unwrap();
    let decide = serde_json::json!({"instance_id": item, "value": "valid"});
    let res = researcher.post(app.url(&format!("/api/v1/studies/{study}/adjudicate"))).json(&decide).send();
    let (status, said) = status_and_error(res.await.unwrap()).await;
    assert_eq!(status, 422);
    assert_eq!(said, format!("instance {item} has 0 of its 2 people's answers; it is decided once all have answered"));
}
