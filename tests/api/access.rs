//! Who may do what: every API route and page against each role, and logins.
use crate::crowd_kit::{arrive, create_link_study, link_spec, start};
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
    // A participant of a link study, with a task of its own.
    let researcher = app.login("researcher").await;
    let (link, token) = create_link_study(&app, &researcher, &link_spec("access crowd", 21, &[])).await;
    let participant = arrive(&app, &token, link, "ACCESS1").await;
    start(&app, &participant, link).await;
    let own_task = app.next_task(&participant, link).await.expect("a task of its bundle").task_id;
    let clients = [
        ("anonymous", TestApp::client()),
        ("annotator", app.login("annotator2").await),
        ("researcher", researcher),
        ("admin", app.login("admin").await),
        ("participant", participant),
    ];
    // Expected status per role, in the order of `clients`.
    let table: Vec<(Method, String, Option<Value>, [u16; 5])> = vec![
        (Method::GET, "/api/v1/studies".into(), None, [401, 200, 200, 200, 403]),
        (Method::POST, format!("/api/v1/studies/{study}/start"), None, [401, 200, 403, 403, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/next"), None, [401, 200, 403, 403, 403]),
        // annotator2 may answer, but not annotator1's task.
        (Method::POST, format!("/api/v1/tasks/{task}/answer"), Some(json!({"option": "A"})), [401, 403, 403, 403, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/progress"), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/agreement"), None, [401, 403, 200, 200, 403]),
        (Method::GET, "/api/v1/compare?dataset=demo".into(), None, [401, 403, 200, 200, 403]),
        (Method::GET, "/api/v1/datasets".into(), None, [401, 403, 200, 200, 403]),
        (Method::GET, "/api/v1/datasets/demo/funnel".into(), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{study}/disputes"), None, [401, 403, 200, 200, 403]),
        // A valid decision (the instance is an item of the demo study).
        (
            Method::POST,
            format!("/api/v1/studies/{study}/adjudicate"),
            Some(json!({"instance_id": 1, "value": "none"})),
            [401, 403, 204, 204, 403],
        ),
        (Method::GET, "/api/v1/studies/overview".into(), None, [401, 403, 200, 200, 403]),
        (Method::GET, "/api/v1/compare/datasets".into(), None, [401, 403, 200, 200, 403]),
        // Without its required query: the role is checked before the query is read.
        (Method::GET, "/api/v1/compare/failures".into(), None, [401, 403, 422, 422, 403]),
        // A path or query the route cannot read: the role is checked first, so
        // that a caller without it learns nothing of the route's fields.
        (Method::GET, "/api/v1/studies/abc/progress".into(), None, [401, 403, 400, 400, 403]),
        (
            Method::POST,
            format!("/api/v1/studies/{link}/prolific/decide?dry_run=maybe"),
            None,
            [401, 403, 422, 422, 403],
        ),
        (Method::GET, "/api/v1/users".into(), None, [401, 403, 403, 200, 403]),
        // The demo study is not finished: Step 4 cannot start yet.
        (Method::POST, format!("/api/v1/studies/{study}/step4"), None, [401, 403, 422, 422, 403]),
        // A link study: the participant's own way through, and the researcher's side.
        (Method::GET, format!("/api/v1/take/{link}"), None, [401, 403, 403, 403, 200]),
        (Method::GET, format!("/api/v1/take/{study}"), None, [401, 403, 403, 403, 403]),
        (Method::POST, format!("/api/v1/take/{link}/consent"), None, [401, 403, 403, 403, 200]),
        (Method::POST, format!("/api/v1/take/{link}/instructions"), None, [401, 403, 403, 403, 200]),
        // The spec has no practice item; the participant is told so.
        (
            Method::POST,
            format!("/api/v1/take/{link}/practice"),
            Some(json!({"index": 0, "option": "A"})),
            [401, 403, 403, 403, 422],
        ),
        (Method::GET, format!("/api/v1/studies/{link}/next"), None, [401, 403, 403, 403, 200]),
        (
            Method::POST,
            format!("/api/v1/tasks/{own_task}/answer"),
            Some(json!({"option": "A"})),
            [401, 403, 403, 403, 200],
        ),
        // Not finished: no code yet.
        (Method::GET, format!("/api/v1/take/{link}/completion"), None, [401, 403, 403, 403, 422]),
        (Method::GET, format!("/api/v1/studies/{link}/participants"), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{link}/bundles"), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{link}/link"), None, [401, 403, 200, 200, 403]),
        (Method::POST, format!("/api/v1/studies/{link}/bundles/0/reopen"), None, [401, 403, 200, 200, 403]),
        (Method::POST, format!("/api/v1/studies/{link}/link/rotate"), None, [401, 403, 200, 200, 403]),
        (Method::POST, format!("/api/v1/take/{link}/return"), None, [401, 403, 403, 403, 200]),
        (Method::POST, format!("/api/v1/studies/{link}/close"), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{link}/dashboard"), None, [401, 403, 200, 200, 403]),
        (Method::GET, format!("/api/v1/studies/{link}/approve-list.csv"), None, [401, 403, 200, 200, 403]),
        // Participant 1 returned its copy above: there is nothing finished to discard.
        (Method::POST, format!("/api/v1/studies/{link}/participants/1/discard"), None, [401, 403, 422, 422, 403]),
        (Method::GET, image.clone(), None, [401, 200, 200, 200, 200]),
        (Method::GET, format!("{image}/original"), None, [401, 200, 200, 200, 200]),
        (Method::DELETE, "/api/v1/session".into(), None, [204, 204, 204, 204, 204]),
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
    // A participant has no page of the accounts' areas.
    let (link, token) =
        crate::crowd_kit::create_link_study(&app, &researcher, &crate::crowd_kit::link_spec("pages crowd", 21, &[]))
            .await;
    let participant = arrive(&app, &token, link, "PAGES1").await;
    for page in ["/annotate", "/research", "/admin"] {
        assert_eq!(participant.get(app.url(page)).send().await.unwrap().status(), 403, "{page}");
    }
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

/// A page's address whose id is no study number says so (it once looked up
/// "study 0" and said there was none).
#[tokio::test]
async fn a_page_whose_address_names_no_study_number_says_so() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (link, token) = create_link_study(&app, &researcher, &link_spec("no number crowd", 21, &[])).await;
    let participant = arrive(&app, &token, link, "NONUMBER1").await;
    let annotator = app.login("annotator1").await;
    for (client, page) in
        [(&researcher, "/research/studies/abc/adjudicate"), (&annotator, "/annotate/abc"), (&participant, "/take/abc")]
    {
        let res = client.get(app.url(page)).send().await.unwrap();
        let status = res.status();
        let html = res.text().await.unwrap();
        assert!(
            html.contains("There is no study &quot;abc&quot;") || html.contains("There is no study \"abc\""),
            "{page}: {html}"
        );
        assert!(!html.contains("no study 0"), "{page}");
        assert_eq!(status, 404, "{page}");
    }
    // A number that names no study: a 404 that says so once (audit AS: a
    // 200 with the sentence under every list of the page).
    let res = researcher.get(app.url("/research/studies/999/adjudicate")).send().await.unwrap();
    let status = res.status();
    let html = res.text().await.unwrap();
    assert_eq!(html.matches(">no study 999<").count(), 1, "{html}");
    assert_eq!(status, 404);
    // A browser that never joined is told so in a participant's words, not "not logged in".
    let html = reqwest::get(app.url(&format!("/take/{link}"))).await.unwrap().text().await.unwrap();
    assert!(html.contains(r#"class="error">This browser has not joined this study"#), "{html}");
}
