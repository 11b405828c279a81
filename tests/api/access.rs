//! Who may do what: every API route and page against each role, and logins.
use crate::helpers::{demo_study, TestApp};
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn every_route_checks_the_role() {
    let app = TestApp::spawn();
    let annotator = app.login("annotator1").await;
    let study = demo_study(&annotator, &app).await;
    let task = app.next_task(&annotator, study).await.expect("a task").task_id;
    let image = app.next_task(&annotator, study).await.expect("a task").options[0].image_url.clone().expect("an image");
    let clients = [
        ("anonymous", TestApp::client()),
        ("annotator", app.login("annotator2").await),
        ("researcher", app.login("researcher").await),
        ("admin", app.login("admin").await),
    ];
    // Expected status per role, in the order of `clients`.
    let table: Vec<(Method, String, Option<Value>, [u16; 4])> = vec![
        (Method::GET, "/api/v1/studies".into(), None, [401, 200, 200, 200]),
        (Method::POST, format!("/api/v1/studies/{study}/start"), None, [401, 200, 403, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/next"), None, [401, 200, 403, 403]),
        // annotator2 may answer, but not annotator1's task.
        (Method::POST, format!("/api/v1/tasks/{task}/answer"), Some(json!({"option": "A"})), [401, 403, 403, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/progress"), None, [401, 403, 200, 200]),
        (Method::GET, format!("/api/v1/studies/{study}/agreement"), None, [401, 403, 200, 200]),
        (Method::GET, "/api/v1/compare?dataset=demo".into(), None, [401, 403, 200, 200]),
        (Method::GET, "/api/v1/datasets".into(), None, [401, 403, 200, 200]),
        (Method::GET, "/api/v1/datasets/demo/funnel".into(), None, [401, 403, 200, 200]),
        (Method::GET, format!("/api/v1/studies/{study}/disputes"), None, [401, 403, 200, 200]),
        // A valid decision (the instance is an item of the demo study).
        (
            Method::POST,
            format!("/api/v1/studies/{study}/adjudicate"),
            Some(json!({"instance_id": 1, "value": "none"})),
            [401, 403, 204, 204],
        ),
        (Method::GET, "/api/v1/studies/overview".into(), None, [401, 403, 200, 200]),
        (Method::GET, "/api/v1/compare/datasets".into(), None, [401, 403, 200, 200]),
        (Method::GET, "/api/v1/users".into(), None, [401, 403, 403, 200]),
        // The demo study is not finished: Step 4 cannot start yet.
        (Method::POST, format!("/api/v1/studies/{study}/step4"), None, [401, 403, 422, 422]),
        (Method::GET, image.clone(), None, [401, 200, 200, 200]),
        (Method::GET, format!("{image}/original"), None, [401, 200, 200, 200]),
        (Method::DELETE, "/api/v1/session".into(), None, [204, 204, 204, 204]),
    ];
    for (method, path, body, expected) in table {
        for ((role, client), want) in clients.iter().zip(expected) {
            let mut req = client.request(method.clone(), app.url(&path));
            if let Some(b) = &body {
                req = req.json(b);
            }
            let got = req.send().await.unwrap().status().as_u16();
            assert_eq!(got, want, "{method} {path} as {role}");
        }
    }
}

#[tokio::test]
async fn pages_are_guarded_by_role() {
    let app = TestApp::spawn();
    let no_redirect =
        |c: reqwest::ClientBuilder| c.cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let anon = no_redirect(Client::builder());
    let res = anon.get(app.url("/annotate")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()["location"], "/login");
    let researcher = no_redirect(Client::builder());
    researcher
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": "researcher", "password": app.password("researcher")}))
        .send()
        .await
        .unwrap();
    assert_eq!(researcher.get(app.url("/annotate")).send().await.unwrap().status(), 403);
    assert_eq!(researcher.get(app.url("/admin")).send().await.unwrap().status(), 403);
    assert_eq!(researcher.get(app.url("/research")).send().await.unwrap().status(), 200);
    assert_eq!(anon.get(app.url("/login")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn bad_login_is_401_and_sets_no_session() {
    let app = TestApp::spawn();
    let client = TestApp::client();
    for (user, pw) in [("annotator1", "wrong password"), ("nobody", "whatever1")] {
        let res = client
            .post(app.url("/api/v1/session"))
            .json(&json!({"username": user, "password": pw}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401, "{user}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"], "unknown username or wrong password");
    }
    assert_eq!(client.get(app.url("/api/v1/studies")).send().await.unwrap().status(), 401);
    // The cookie a good login sets is HttpOnly and SameSite.
    let res = client
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": "annotator1", "password": app.password("annotator1")}))
        .send()
        .await
        .unwrap();
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
}
