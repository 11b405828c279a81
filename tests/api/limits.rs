//! Body limits and the API's own refusals (docs/security.md, docs/api.md):
//! a body over the small default is refused before it is held, the routes a
//! researcher sends specs to take more, and every `/api/` refusal made
//! outside a handler is `{"error": …}` JSON.
use crate::crowd_kit::link_spec;
use crate::helpers::TestApp;
use serde_json::Value;

async fn json_error(res: reqwest::Response, status: u16) -> String {
    assert_eq!(res.status(), status);
    let kind = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    assert!(kind.starts_with("application/json"), "{kind}");
    res.json::<Value>().await.unwrap()["error"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn small_bodies_by_default_larger_for_specs_and_json_refusals() {
    let app = TestApp::spawn();
    let big = "a".repeat(100 * 1024);
    // Anonymous: a login body far over what a login needs is refused, as JSON.
    let res = TestApp::client()
        .post(app.url("/api/v1/session"))
        .header("origin", app.base.clone())
        .header("content-type", "application/json")
        .body(format!("{{\"username\": \"{big}\", \"password\": \"x\"}}"))
        .send()
        .await
        .unwrap();
    assert!(json_error(res, 413).await.contains("is larger than this address takes"));
    // A researcher's spec of the same size (a long comment) is taken.
    let researcher = app.login("researcher").await;
    let spec = format!("# {big}\n{}", link_spec("long spec", 9, &[]));
    let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
    // No route, or not this method: JSON that names what was asked.
    let res = researcher.get(app.url("/api/v1/nothing")).send().await.unwrap();
    assert_eq!(json_error(res, 404).await, "no API route GET /api/v1/nothing");
    let res = researcher.delete(app.url("/api/v1/studies")).send().await.unwrap();
    assert_eq!(json_error(res, 405).await, "/api/v1/studies does not take DELETE");
    // A server function's body that is not UTF-8 is the client's fault.
    let page = TestApp::client().get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    let at = page.find("action=\"/sfn/login").expect("the login form") + "action=\"".len();
    let action = page[at..].split('"').next().unwrap().to_string();
    let res = TestApp::client()
        .post(app.url(&action))
        .header("origin", app.base.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(b"username=\xff&password=x".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
}

/// Specs that cannot mean what they say are refused at creation, naming the field.
#[tokio::test]
async fn a_spec_past_its_dataset_or_its_bounds_is_refused() {
    let mut app = TestApp::spawn();
    app.add_user("annotator3", "annotator", "annotator3-password");
    app.add_user("annotator4", "annotator", "annotator4-password");
    let researcher = app.login("researcher").await;
    let pairs = [["annotator1", "annotator2"], ["annotator3", "annotator4"]];
    let spec = crate::helpers::Spec::new("too much overlap").pairs(&pairs, 40);
    let said = json_error(app.create_study(&researcher, &spec).await, 422).await;
    assert_eq!(said, "field `assignment.overlap`: 2 pairs sharing 40 items each need 80 items; the study has 63");
    let copies = link_spec("a billion copies", 9, &["copies = 1000000000"]);
    let res = researcher.post(app.url("/api/v1/studies")).body(copies).send().await.unwrap();
    assert!(json_error(res, 422).await.starts_with("field `link.copies`: must be from 1 to 100"));
    let triplets = link_spec("step 3 on triplets", 9, &[]).replace("dataset = \"demo\"", "dataset = \"demo-triplets\"");
    let res = researcher.post(app.url("/api/v1/studies")).body(triplets).send().await.unwrap();
    let said = json_error(res, 422).await;
    assert!(
        said.starts_with("field `dataset`: 10 instance(s) of \"demo-triplets\" lack exactly 4 candidate images"),
        "{said}"
    );
    // What a kind shows beyond the image: a caption type, both captions, four candidates exactly.
    for (kind, dataset, lack) in [
        ("caption_writing", "demo-triplets", "lack an assigned caption type, which caption_writing shows"),
        ("caption_match", "demo-hnc", "lack both a caption and a hard negative, which caption_match shows"),
        ("four_image", "demo-rankings", "lack exactly 4 candidate images, which four_image shows"),
    ] {
        let spec = crate::helpers::Spec::new(kind).kind(kind).dataset(dataset).annotators(&["annotator1"]);
        let said = json_error(app.create_study(&researcher, &spec).await, 422).await;
        assert!(said.starts_with("field `dataset`: ") && said.contains(lack), "{kind} on {dataset}: {said}");
    }
    // SugarCrepe++'s expert check is two experts per item, not three.
    let three = crate::helpers::Spec::new("three experts").kind("triplet_check").dataset("demo-triplets");
    let said = json_error(
        app.create_study(&researcher, &three.annotators(&["annotator1", "annotator2", "annotator3"])).await,
        422,
    )
    .await;
    assert_eq!(said, "field `annotators`: triplet_check wants 2 people on every item; the spec names 3");
    let studies: Vec<Value> = app.get(&researcher, "/api/v1/studies").await;
    let names = ["too much overlap", "a billion copies", "step 3 on triplets"];
    assert!(studies.iter().all(|s| !names.contains(&s["name"].as_str().unwrap())));
    // A body over the limit on a route with a typed JSON body is 413 too, not 422.
    let big = serde_json::json!({"value": "x".repeat(100 * 1024)});
    let res = researcher.post(app.url("/api/v1/studies/1/adjudicate")).json(&big).send().await.unwrap();
    assert!(json_error(res, 413).await.contains("is larger than this address takes"));
}

fn big_form() -> Vec<u8> {
    format!("step=Consent&consent={}", "a".repeat(100 * 1024)).into_bytes()
}

/// A plain form's refusal made before its handler runs is a page for people,
/// with the status kept; the role is checked before the form is read (a
/// caller who is no participant learns nothing of its fields); a
/// participant's page for a study that is not there is a 404.
#[tokio::test]
async fn form_refusals_are_pages_and_a_missing_study_is_a_404() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = crate::crowd_kit::create_link_study(&app, &researcher, &link_spec("forms", 4, &[])).await;
    let participant = crate::crowd_kit::arrive(&app, &token, study, "FORMS1").await;
    let anonymous = TestApp::client();
    let post = |client: &reqwest::Client, path: &str, kind: &'static str, body: Vec<u8>| {
        client.post(app.url(path)).header("origin", app.base.clone()).header("content-type", kind).body(body).send()
    };
    let (form, step) = ("application/x-www-form-urlencoded", format!("/take/{study}/step"));
    let answer = format!("/take/{study}/answer");
    let p = &participant;
    let cases = [
        (post(p, &step, form, big_form()).await.unwrap(), 413, "larger than this page takes"),
        (post(p, &step, "application/json", b"{}".to_vec()).await.unwrap(), 415, "not sent as a form"),
        (post(p, &step, form, b"step=Nope".to_vec()).await.unwrap(), 422, "unknown variant"),
        (post(p, "/take/abc/step", form, b"step=Consent".to_vec()).await.unwrap(), 400, "abc"),
        (post(&anonymous, &step, form, b"step=Nope".to_vec()).await.unwrap(), 401, "Your session has ended"),
        (post(&anonymous, &step, "application/json", b"{}".to_vec()).await.unwrap(), 401, "Your session has ended"),
        (post(&anonymous, &answer, form, b"x=1".to_vec()).await.unwrap(), 401, "Your session has ended"),
        (post(p, &answer, form, b"x=1".to_vec()).await.unwrap(), 422, "missing field `task_id`"),
    ];
    for (res, status, says) in cases {
        assert_eq!(res.status(), status);
        let kind = res.headers()["content-type"].to_str().unwrap().to_string();
        let page = res.text().await.unwrap();
        assert!(kind.starts_with("text/html"), "{status}: {kind}: {page}");
        assert!(page.contains(&format!("data-status=\"{status}\"")) && page.contains(says), "{page}");
    }
    // A form's address opened as a page (Enter in the address bar of an error
    // page served there): a page that says so, not axum's empty 405.
    let res = participant.get(app.url(&step)).send().await.unwrap();
    assert_eq!(res.status(), 405);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(res.text().await.unwrap().contains("This address does not take GET."));
    let annotator = app.login("annotator1").await;
    for path in [format!("/take/{study}/practice"), answer.clone()] {
        let res = post(&annotator, &path, form, b"x=1".to_vec()).await.unwrap();
        assert_eq!(res.status(), 403, "{path}: another role, refused before its fields are read");
    }
    for route in ["practice", "comprehension"] {
        let url = app.url(&format!("/api/v1/take/{study}/{route}"));
        let res = annotator.post(url).json(&serde_json::json!({"x": 1})).send().await.unwrap();
        assert_eq!(res.status(), 403, "{route}: the role before the body");
    }
    let pages = [(&annotator, "/annotate/999999", 404), (&annotator, "/take/abc", 403), (&anonymous, "/take/1", 401)];
    for (client, path, status) in pages {
        let res = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), status, "{path}");
        assert!(res.text().await.unwrap().contains("role=\"alert\""), "the page still says why: {path}");
    }
    let res = annotator.get(app.url("/annotate/1")).send().await.unwrap();
    assert_eq!(res.status(), 200, "a study that is there");
    let res = annotator.post(app.url("/annotate/1/answer")).header("content-type", form).body(big_form()).send();
    let res = res.await.unwrap();
    assert_eq!(res.status(), 413, "a signed-in annotator's form too");
    assert!(res.text().await.unwrap().contains("larger than this page takes"));
}

/// A caller without the role is refused before the body is read: a route
/// that takes a researcher's 4 MiB (a spec, a bonus list) once held 4 MiB per
/// connection for an annotator or participant who sent all but its last byte.
#[tokio::test]
async fn a_big_body_route_refuses_a_caller_without_the_role_before_reading_the_body() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn();
    let cookie = crate::hardening::session_cookie(&app, "annotator1").await;
    let addr = app.base.trim_start_matches("http://").to_string();
    for path in ["/api/v1/studies", "/api/v1/studies/1/prolific/bonuses?round=x"] {
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: {}\r\nCookie: {cookie}\r\n\
             Content-Type: text/plain\r\nContent-Length: 4194000\r\n\r\n",
            app.base
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(&[b'x'; 1_000]).await.unwrap();
        let mut got = vec![0u8; 1_024];
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut got)).await;
        let n = read.unwrap_or_else(|_| panic!("{path}: no answer while the body is unsent")).unwrap();
        let head = String::from_utf8_lossy(&got[..n]);
        assert!(head.starts_with("HTTP/1.1 403"), "{path}: {head}");
    }
}

/// The annotator's routes check the role first too: a researcher or an admin
/// learns nothing of the path, the query or the body (docs/api.md, "Role × route").
#[tokio::test]
async fn answer_routes_refuse_researchers_before_reading_the_request() {
    let app = TestApp::spawn();
    for user in ["researcher", "admin"] {
        let client = app.login(user).await;
        let calls = [
            client.post(app.url("/api/v1/tasks/1/answer")).json(&serde_json::json!({"optio": "A"})),
            client.post(app.url("/api/v1/tasks/1/answer")).header("content-type", "application/json").body("{not json"),
            client.post(app.url("/api/v1/tasks/abc/answer?next=maybe")).json(&serde_json::json!({"option": "A"})),
            client.get(app.url("/api/v1/studies/abc/next")),
            client.post(app.url("/api/v1/studies/abc/start")),
        ];
        for call in calls {
            let res = call.header("origin", &app.base).send().await.unwrap();
            let url = res.url().to_string();
            assert_eq!(res.status(), 403, "{user}: {url}");
            let body: serde_json::Value = res.json().await.unwrap();
            assert_eq!(body["error"], "only annotators answer surveys", "{user}: {url}");
        }
    }
    // An annotator still gets the path's own error.
    let annotator = app.login("annotator1").await;
    let res = annotator.get(app.url("/api/v1/studies/abc/next")).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

/// A `Content-Length` over the route's limit is refused at once, before any
/// of the body comes (it once waited for 64 KiB to arrive: audit AO), in the
/// route's own words; a route that takes more is not refused by it.
#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_the_body() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn();
    let addr = app.base.trim_start_matches("http://").to_string();
    let cookie = crate::hardening::session_cookie(&app, "researcher").await;
    let cases = [
        ("/api/v1/session", "", "HTTP/1.1 413", "is larger than this address takes"),
        ("/take/1/step", "", "HTTP/1.1 413", "larger than this page takes"),
        ("/api/v1/tasks/1/answer", "", "HTTP/1.1 413", "is larger than this address takes"),
        // A researcher's spec may be 4 MiB: the role and the body decide, as before.
        ("/api/v1/studies", cookie.as_str(), "", ""),
    ];
    for (path, cookie, status, said) in cases {
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let cookie = if cookie.is_empty() { String::new() } else { format!("Cookie: {cookie}\r\n") };
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: {}\r\n{cookie}\
             Content-Type: application/json\r\nContent-Length: 4000000\r\n\r\n",
            app.base
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        // The refusal closes the connection: read it whole.
        let mut got = Vec::new();
        let read = tokio::time::timeout(std::time::Duration::from_secs(3), tcp.read_to_end(&mut got)).await;
        if status.is_empty() {
            assert!(read.is_err() && got.is_empty(), "{path}: answered before its body came");
            continue;
        }
        read.unwrap_or_else(|_| panic!("{path}: no answer while the body is unsent")).unwrap();
        let res = String::from_utf8_lossy(&got);
        assert!(res.starts_with(status) && res.contains(said), "{path}: {res}");
        assert!(res.to_lowercase().contains("connection: close"), "{path}: {res}");
    }
}
