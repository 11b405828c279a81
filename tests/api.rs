//! The JSON API against a real server process and SQLite file.
mod common;
use common::{demo_study, TestApp};
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

async fn next(client: &Client, app: &TestApp, study: i64) -> Value {
    let res = client.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn answer(client: &Client, app: &TestApp, task: i64, option: &str) -> reqwest::Response {
    client
        .post(app.url(&format!("/api/v1/tasks/{task}/answer")))
        .json(&json!({"option": option, "elapsed_ms": 1500}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_route_checks_the_role() {
    let app = TestApp::spawn();
    let annotator = app.login("annotator1").await;
    let study = demo_study(&annotator, &app).await;
    let task = next(&annotator, &app, study).await["task_id"].as_i64().unwrap();
    let image = next(&annotator, &app, study).await["options"][0]["image_url"].as_str().unwrap().to_string();
    let clients = [
        ("anonymous", TestApp::client()),
        ("annotator", app.login("annotator2").await),
        ("researcher", app.login("researcher").await),
        ("admin", app.login("admin").await),
    ];
    // Expected status per role, in the order of `clients`.
    let table: Vec<(Method, String, Option<Value>, [u16; 4])> = vec![
        (Method::GET, "/api/v1/studies".into(), None, [401, 200, 200, 200]),
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

#[tokio::test]
async fn answers_are_idempotent_validated_and_counted() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let first = next(&ann, &app, study).await;
    assert_eq!(first["kind"], "four_image");
    let ids: Vec<&str> = first["options"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["A", "B", "C", "D", "none"]);
    assert_eq!(first["progress"]["done"], 0);
    assert_eq!(first["prefetch"].as_array().unwrap().len(), 4);
    let task = first["task_id"].as_i64().unwrap();

    let bad = answer(&ann, &app, task, "E").await;
    assert_eq!(bad.status(), 422);
    let msg: Value = bad.json().await.unwrap();
    assert!(msg["error"].as_str().unwrap().contains("A, B, C, D, none"), "{msg}");
    let malformed = ann
        .post(app.url(&format!("/api/v1/tasks/{task}/answer")))
        .body("{")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 422);
    assert_eq!(answer(&ann, &app, 999_999, "A").await.status(), 404);

    let ok: Value = answer(&ann, &app, task, "B").await.json().await.unwrap();
    assert_eq!(ok, json!({"task_id": task, "option": "B", "duplicate": false}));
    // A double submit, even with another option, keeps the first answer.
    let again = answer(&ann, &app, task, "C").await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap(), json!({"task_id": task, "option": "B", "duplicate": true}));

    let second = next(&ann, &app, study).await;
    assert_ne!(second["task_id"], first["task_id"]);
    assert_eq!(second["progress"]["done"], 1);

    let researcher = app.login("researcher").await;
    let progress: Value = researcher
        .get(app.url(&format!("/api/v1/studies/{study}/progress")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(progress["answers"], 1);
    let b = progress["distribution"].as_array().unwrap().iter().find(|c| c["option"] == "B").unwrap();
    assert_eq!(b["count"], 1);
    let ann1 = progress["annotators"].as_array().unwrap().iter().find(|a| a["username"] == "annotator1").unwrap();
    assert_eq!((ann1["done"].as_i64(), ann1["total"].as_i64()), (Some(1), Some(63)));
    let ann2 = progress["annotators"].as_array().unwrap().iter().find(|a| a["username"] == "annotator2").unwrap();
    assert_eq!(ann2["done"], 0);
}

#[tokio::test]
async fn an_annotator_finishes_with_204_and_later_accounts_join_all_studies() {
    let mut app = TestApp::spawn();
    app.add_user("latecomer", "annotator", "a long password");
    let ann = app.login("latecomer").await;
    let study = demo_study(&ann, &app).await;
    let mut seen = std::collections::HashSet::new();
    loop {
        let res = ann.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
        if res.status() == 204 {
            break;
        }
        let task: Value = res.json().await.unwrap();
        assert!(seen.insert(task["task_id"].as_i64().unwrap()), "a task came twice");
        assert_eq!(answer(&ann, &app, task["task_id"].as_i64().unwrap(), "none").await.status(), 200);
    }
    assert_eq!(seen.len(), 63);
}

#[tokio::test]
async fn images_are_immutable_typed_and_only_by_hash() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let url = next(&ann, &app, study).await["options"][0]["image_url"].as_str().unwrap().to_string();
    let res = ann.get(app.url(&url)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert!(res.headers()["cache-control"].to_str().unwrap().contains("immutable"));
    let bytes = res.bytes().await.unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    for bad in ["/img/..%2F..%2Fhardneg.sqlite", "/img/abc", &format!("/img/{}", "0".repeat(64))] {
        assert_eq!(ann.get(app.url(bad)).send().await.unwrap().status(), 404, "{bad}");
    }
}

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
    assert_eq!(error_of(res).await, "query: Failed to deserialize query string: missing field `dataset`");
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
    let db = hardneg::store::db::open_pool(&app.data_dir.join("hardneg.sqlite")).await.unwrap();
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
    let res = client
        .post(app.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .header("origin", &app.base)
        .body("")
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

#[tokio::test]
async fn server_functions_answer_401_and_403_like_the_api() {
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn();
    let (users, overview) = (hardneg::ui::admin::ListUsers::PATH, hardneg::ui::research::ResearchOverview::PATH);
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
}
