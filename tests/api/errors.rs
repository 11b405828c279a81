//! Errors as clients see them: malformed requests are 422 saying what is
//! wrong, database failures 500 with nothing internal, and server functions
//! answer 401/403 like the API (and 400 for arguments that do not parse).
use crate::helpers::{demo_study, TestApp};
use reqwest::Client;
use serde_json::{json, Value};

/// The error of a JSON response, as text.
async fn error_of(res: reqwest::Response) -> String {
    let body: Value = res.json().await.unwrap();
    body["error"].as_str().unwrap_or_else(|| panic!("no error in {body}")).to_string()
}

#[tokio::test]
async fn malformed_bodies_and_queries_are_422_saying_what_is_wrong() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let study = demo_study(&researcher, &app).await;
    let adjudicate = app.url(&format!("/api/v1/studies/{study}/adjudicate"));
    let res = researcher.post(&adjudicate).body("{").header("content-type", "application/json").send().await.unwrap();
    assert_eq!(res.status(), 422);
    let msg = error_of(res).await;
    assert!(msg.starts_with("request body: Failed to parse the request body as JSON"), "{msg}");
    let res = researcher.post(&adjudicate).json(&json!({"instance_id": "one", "value": "none"})).send().await.unwrap();
    assert_eq!(res.status(), 422);
    let msg = error_of(res).await;
    assert!(
        msg.starts_with("request body: Failed to deserialize the JSON body") && msg.contains("instance_id"),
        "{msg}"
    );
    let res = researcher.get(app.url("/api/v1/compare")).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(error_of(res).await, "query parameter `dataset` is required");
    let res = researcher.get(app.url("/api/v1/compare/failures?dataset=demo")).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(error_of(res).await, "query: Failed to deserialize query string: missing field `model`");
}

#[tokio::test]
async fn a_database_failure_is_500_without_the_database_text() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = "name = \"Broken\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = \"all\"\n";
    // The items table goes away under the running server: the study row
    // is written, its items cannot be.
    let db = app.db().await;
    sqlx::query("ALTER TABLE study_items RENAME TO study_items_gone").execute(&db).await.unwrap();
    let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 500);
    let body = res.text().await.unwrap();
    assert_eq!(body, r#"{"error":"internal error"}"#);
    // Nothing half-made stays behind.
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM studies WHERE name = 'Broken'").fetch_one(&db).await.unwrap();
    assert_eq!(n, 0);
}

/// Calls a server function over HTTP as the hydrated page does.
async fn call_sfn(client: &Client, app: &TestApp, path: &str) -> (u16, String) {
    call_sfn_with(client, app, path, "").await
}

async fn call_sfn_with(client: &Client, app: &TestApp, path: &str, body: &str) -> (u16, String) {
    let res = client
        .post(app.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .header("origin", &app.base)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

#[tokio::test]
async fn server_functions_answer_401_and_403_like_the_api() {
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn();
    let (users, overview) = (hardneg::ui::admin::ListUsers::PATH, hardneg::ui::research_page::ResearchOverview::PATH);
    let anonymous = TestApp::client();
    let annotator = app.login("annotator1").await;
    let researcher = app.login("researcher").await;
    let admin = app.login("admin").await;
    let (status, body) = call_sfn(&anonymous, &app, users).await;
    assert_eq!((status, body.contains("not logged in")), (401, true), "{body}");
    let (status, body) = call_sfn(&annotator, &app, users).await;
    assert_eq!((status, body.contains("admins only")), (403, true), "{body}");
    assert_eq!(call_sfn(&researcher, &app, users).await.0, 403);
    let (status, body) = call_sfn(&admin, &app, users).await;
    assert_eq!(status, 200);
    assert!(body.contains("annotator1"), "{body}");
    let (status, body) = call_sfn(&annotator, &app, overview).await;
    assert_eq!((status, body.contains("researchers and admins only")), (403, true), "{body}");
    assert_eq!(call_sfn(&researcher, &app, overview).await.0, 200);
    // Arguments that do not parse are the client's fault: 400, not 500.
    let login = hardneg::ui::login::Login::PATH;
    let (status, body) = call_sfn_with(&anonymous, &app, login, "username=admin").await;
    assert_eq!(status, 400, "{body}");
}

/// A study's vocabulary is read by those who take part in it: a
/// participant of another study is refused, as by every other study route.
#[tokio::test]
async fn a_studys_vocabulary_is_for_its_own_participants_and_researchers() {
    use crate::crowd_kit::{arrive, create_link_study, link_spec};
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("words a", 9, &[])).await;
    let (other, other_token) = create_link_study(&app, &researcher, &link_spec("words b", 9, &[])).await;
    let own = arrive(&app, &token, study, "VOCAB-OWN").await;
    let stranger = arrive(&app, &other_token, other, "VOCAB-OTHER").await;
    let path = hardneg::kinds::caption_writing::ui::StudyVocabulary::PATH;
    let body = format!("study_id={study}");
    assert_eq!(call_sfn_with(&own, &app, path, &body).await, (200, "null".to_string()), "no vocabulary");
    assert_eq!(call_sfn_with(&researcher, &app, path, &body).await.0, 200);
    let (status, text) = call_sfn_with(&stranger, &app, path, &body).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains(&format!("another study than {study}")), "{text}");
    assert_eq!(call_sfn_with(&TestApp::client(), &app, path, &body).await.0, 401);
}

#[tokio::test]
async fn an_id_in_the_path_that_is_not_a_number_is_400_naming_the_id_and_the_value() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    // The annotator's routes check the role before the path: their ids are read for an annotator.
    let annotator = app.login("annotator1").await;
    let study = demo_study(&researcher, &app).await;
    let cases = [
        ("GET", "/api/v1/studies/abc/next".to_string(), "study id", "abc"),
        ("POST", "/api/v1/tasks/99999999999999999999/answer".to_string(), "task id", "99999999999999999999"),
        ("POST", format!("/api/v1/studies/{study}/adjudications/1.5/reopen"), "instance id", "1.5"),
        ("POST", "/api/v1/studies/x7/adjudications/1/reopen".to_string(), "study id", "x7"),
        ("POST", "/api/v1/studies/7/participants/-/discard".to_string(), "participant id", "-"),
        ("POST", format!("/api/v1/studies/{study}/bundles/b2/reopen"), "bundle id", "b2"),
    ];
    for (method, path, id, value) in cases {
        let caller = if path.contains("/next") || path.contains("/answer") { &annotator } else { &researcher };
        let req = match method {
            "GET" => caller.get(app.url(&path)),
            _ => caller.post(app.url(&path)).json(&json!({"option": "A"})),
        };
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 400, "{method} {path}");
        let body: Value = res.json().await.unwrap();
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.starts_with(&format!("path: {id} must be a whole number")), "{path}: {body}");
        assert!(error.ends_with(&format!("not \"{value}\"")), "{path}: {body}");
    }
    // Before the path, the login: an anonymous caller learns nothing about it.
    let res = TestApp::client().get(app.url("/api/v1/studies/abc/next")).send().await.unwrap();
    assert_eq!(res.status(), 401);
}
