//! Shared steps of the crowd tests: a link study on the demo dataset,
//! arriving by its link as a browser would (form POST, cookie), and a
//! participant's way through.
use crate::helpers::TestApp;
use reqwest::{Client, StatusCode};
use serde_json::Value;

/// A `four_image` link study on the demo dataset; `link` lines go into `[link]`.
pub fn link_spec(name: &str, bundle_size: usize, link: &[&str]) -> String {
    format!(
        "name = \"{name}\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 11\naccess = \"link\"\n\
         [link]\nbundle_size = {bundle_size}\nconsent = \"I agree to take part.\"\n{}\n",
        link.join("\n")
    )
}

/// Creates the study as `researcher`; its id and join token.
pub async fn create_link_study(app: &TestApp, researcher: &Client, spec: &str) -> (i64, String) {
    let res = researcher.post(app.url("/api/v1/studies")).body(spec.to_string()).send().await.unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let link: Value = app.get(researcher, &format!("/api/v1/studies/{id}/link")).await;
    (id, link["token"].as_str().unwrap().to_string())
}

/// A browser-like client that does not follow redirects, so the 303 is seen.
pub fn browser() -> Client {
    Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// As [`browser`], connecting from `ip` (any 127.x.y.z reaches the test server).
pub fn browser_from(ip: &str) -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .local_address(ip.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// POSTs the join form with `pid` (and consent) from `client`: the status and the body or Location.
pub async fn arrive_with(app: &TestApp, client: &Client, token: &str, pid: &str) -> (StatusCode, String) {
    let res = client
        .post(app.url(&format!("/join/{token}")))
        .form(&[("PROLIFIC_PID", pid), ("STUDY_ID", "S1"), ("SESSION_ID", "X1"), ("consent", "yes")])
        .send()
        .await
        .unwrap();
    let status = res.status();
    let out = match res.headers().get("location") {
        Some(l) => l.to_str().unwrap().to_string(),
        None => res.text().await.unwrap(),
    };
    (status, out)
}

/// A new participant `pid`: its client, admitted (303 to `/take/{study}`).
pub async fn arrive(app: &TestApp, token: &str, study: i64, pid: &str) -> Client {
    let client = browser();
    let (status, location) = arrive_with(app, &client, token, pid).await;
    assert_eq!(status, 303, "arriving as {pid}: {location}");
    assert_eq!(location, format!("/take/{study}"));
    client
}

/// The participant's stage as the API gives it.
pub async fn stage(app: &TestApp, client: &Client, study: i64) -> Value {
    app.get(client, &format!("/api/v1/take/{study}")).await
}

pub async fn post_ok(app: &TestApp, client: &Client, path: &str) -> Value {
    let res = client.post(app.url(path)).send().await.unwrap();
    assert_eq!(res.status(), 200, "POST {path}");
    res.json().await.unwrap()
}

/// Past the instructions and any practice (consent was given on the join form).
pub async fn start(app: &TestApp, client: &Client, study: i64) {
    let mut s = post_ok(app, client, &format!("/api/v1/take/{study}/instructions")).await;
    while s["stage"] == "practice" {
        let answer = serde_json::json!({"index": s["index"], "option": "none"});
        let res = client.post(app.url(&format!("/api/v1/take/{study}/practice"))).json(&answer).send().await.unwrap();
        s = res.json::<Value>().await.unwrap()["next"].clone();
    }
    assert_eq!(s["stage"], "working", "{s}");
}

/// Answers up to `n` tasks (`choose` picks from the task); returns how many were answered.
pub async fn answer_n(app: &TestApp, client: &Client, study: i64, n: usize, choose: &str) -> usize {
    let mut answered = 0;
    while answered < n {
        let Some(task) = app.next_task(client, study).await else { break };
        let res = app.answer(client, task.task_id, choose).await;
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        answered += 1;
    }
    answered
}

/// The lease states of the study's participants, by number.
pub async fn lease_states(app: &TestApp, researcher: &Client, study: i64) -> Vec<String> {
    let rows: Vec<Value> = app.get(researcher, &format!("/api/v1/studies/{study}/participants")).await;
    rows.iter().map(|r| r["state"].as_str().unwrap().to_string()).collect()
}
