//! What a returning participant and a researcher read (issue 53), over real
//! HTTP: "Welcome back: you have a place" only for one who holds a place; a
//! PID told after the comprehension check that the study was full sees the
//! full page again; `study create` warns when a link study with a
//! comprehension check has no `full_code`; the approve list's reason for a
//! participant still arriving; participants in the order people count them.
use crate::crowd_check_kit::post_json;
use crate::crowd_kit::{arrive, create_link_study, link_spec, post_ok};
use crate::helpers::{text, TestApp};
use serde_json::{json, Value};

const CHECK: &str = "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]";

/// `GET /join/{token}` for `pid`: the page's heading and its text.
async fn join_page(app: &TestApp, token: &str, pid: &str) -> (String, String) {
    let page = reqwest::get(app.url(&format!("/join/{token}?PROLIFIC_PID={pid}"))).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let h1 = html.split("<h1>").nth(1).and_then(|h| h.split("</h1>").next()).expect("a heading").to_string();
    (h1, html)
}

#[tokio::test]
async fn only_someone_with_a_place_is_told_so_and_full_after_the_check_stays_full() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let lines = [CHECK, "full_code = \"FULL0053\""];
    let (study, token) = create_link_study(&app, &researcher, &link_spec("one place, checked", 63, &lines)).await;
    let (first, late, reader) = (
        arrive(&app, &token, study, "P1").await,
        arrive(&app, &token, study, "P2").await,
        arrive(&app, &token, study, "P3").await,
    );
    for p in [&first, &late, &reader] {
        post_ok(&app, p, &format!("/api/v1/take/{study}/instructions")).await;
    }
    let check = format!("/api/v1/take/{study}/comprehension");
    let (_, next) = post_json(&app, &first, &check, json!({"answers": [1]})).await;
    assert_eq!(next["stage"], "working", "{next}");
    let (_, next) = post_json(&app, &late, &check, json!({"answers": [1]})).await;
    assert_eq!(next["stage"], "full", "{next}");

    let (h1, html) = join_page(&app, &token, "P1").await;
    assert_eq!(h1, "Welcome back");
    assert!(html.contains("You have a place in this study."), "{html}");
    // Still before the check: welcomed back, but promised no place.
    let (h1, html) = join_page(&app, &token, "P3").await;
    assert_eq!(h1, "Welcome back");
    assert!(!html.contains("You have a place"), "P3 holds no place: {html}");
    assert!(html.contains("data-place=\"false\""), "{html}");
    // Passed the check after every place was taken: the full page, with its code.
    let (h1, html) = join_page(&app, &token, "P2").await;
    assert_eq!(h1, "This study is full");
    assert!(html.contains("FULL0053") && !html.contains("Continue where you stopped"), "{html}");
}

#[tokio::test]
async fn study_create_warns_of_a_comprehension_check_without_a_full_code() {
    let app = TestApp::spawn();
    let write = |name: &str, lines: &[&str]| {
        let path = app.data_dir.join(format!("{name}.toml"));
        std::fs::write(&path, link_spec(name, 5, lines)).unwrap();
        path
    };
    let bare = write("checked-no-full-code", &[CHECK]);
    let out = app.cli(&["study", "create", bare.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("warning: link.full_code is not set"), "{err}");
    let with_code = write("checked-with-full-code", &[CHECK, "full_code = \"FULL0001\""]);
    let out = app.cli(&["study", "create", with_code.to_str().unwrap()]);
    assert!(out.status.success() && !text(&out.stderr).contains("warning"), "{}", text(&out.stderr));
    let unchecked = write("unchecked", &[]);
    let out = app.cli(&["study", "create", unchecked.to_str().unwrap()]);
    assert!(out.status.success() && !text(&out.stderr).contains("warning"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn someone_still_arriving_waits_for_the_check_not_for_work() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("arriving", 9, &[CHECK])).await;
    arrive(&app, &token, study, "ARRIVING-1").await;
    let csv = app.get_text(&researcher, &format!("/api/v1/studies/{study}/approve-list.csv")).await;
    let row: Vec<&str> = csv.lines().nth(1).expect("the participant's row").split(',').collect();
    assert_eq!((row[3], row[11], row[12]), ("arriving", "wait", "not through the comprehension check yet"), "{csv}");
}

#[tokio::test]
async fn participants_are_listed_in_the_order_people_count_them() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("eleven", 1, &[])).await;
    for k in 1..=11 {
        arrive(&app, &token, study, &format!("ORDER-{k}")).await;
    }
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    let own = format!("p{study}-");
    let names: Vec<&str> = progress["annotators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["username"].as_str().unwrap())
        .filter(|n| n.starts_with(&own))
        .collect();
    let want: Vec<String> = (1..=11).map(|k| format!("p{study}-{k}")).collect();
    assert_eq!(names, want, "p{study}-2 comes before p{study}-10");
}
