//! A crowd study by link in real headless Chromium: arrive with a
//! PROLIFIC_PID, consent, practice, answer the bundle by keyboard, see the
//! code and land on the completion URL (a page of the test server); the same
//! PID resumes, a new PID gets another bundle, a taken study is full; the
//! researcher's page shows the link and counts; and all of it at 390×844.
use crate::annotate_flow::current_task;
use crate::browser::Browser;
use crate::crowd_kit::{arrive, create_link_study, link_spec};
use crate::helpers::TestApp;
use fantoccini::Locator::Css;
use serde_json::Value;
use std::time::{Duration, Instant};

pub(crate) fn join_url(app: &TestApp, token: &str, pid: &str) -> String {
    app.url(&format!("/join/{token}?PROLIFIC_PID={pid}&STUDY_ID=PS1&SESSION_ID=SS-{pid}"))
}

/// Opens the link as Prolific would, ticks the consent box (or resumes) and lands on `/take/{study}`.
pub(crate) async fn join(b: &Browser, url: &str, study: i64) {
    b.client.goto(url).await.unwrap();
    if let Ok(tick) = b.client.find(Css("input[name=consent]")).await {
        tick.click().await.unwrap();
    }
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while b.client.current_url().await.unwrap().path() != format!("/take/{study}") {
        assert!(Instant::now() < deadline, "joining did not land on /take/{study}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    b.wait_hydrated().await;
}

pub(crate) async fn wait_stage(b: &Browser, stage: &str) {
    b.wait_css(&format!(r#"section.take[data-stage="{stage}"]"#)).await;
}

pub(crate) async fn wait_text(b: &Browser, css: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = b.text(css).await;
        if now == want {
            return;
        }
        assert!(Instant::now() < deadline, "{css} shows {now:?}, not {want:?}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Waits until the focused element matches `css` (focus may move a frame
/// after the node is drawn); fails after 10 s.
pub(crate) async fn wait_focus(b: &Browser, css: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let script = format!("return document.activeElement.matches({});", serde_json::to_string(css).unwrap());
    loop {
        if b.client.execute(&script, vec![]).await.unwrap() == Value::Bool(true) {
            return;
        }
        let on = b.client.execute("return document.activeElement.outerHTML.slice(0, 80);", vec![]).await.unwrap();
        assert!(Instant::now() < deadline, "{what}: the focus is on {on}, not {css}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Answers the bundle's items `from`.. by keyboard, one key each, checking "Item k of 3" before each.
async fn answer_by_keys(b: &Browser, from: usize, keys: &str) {
    let total = 3;
    for (k, key) in (from..).zip(keys.chars()) {
        wait_text(b, ".take .progress span", &format!("Item {k} of {total}")).await;
        b.press(key).await;
    }
}

/// Waits until the browser is at `path`; its query.
pub(crate) async fn wait_path(b: &Browser, path: &str) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let url = b.client.current_url().await.unwrap();
        if url.path() == path {
            return url.query().map(str::to_string);
        }
        assert!(Instant::now() < deadline, "still at {url}, waiting for {path}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A fresh app with a link study of three-item bundles and one practice item
/// (`key`, answer None) whose completion URL is the app's home page.
async fn link_study(name: &str, key: &str) -> (TestApp, reqwest::Client, i64, String) {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let back = format!("completion_url = \"{}/?cc={{code}}\"", app.base);
    let practice = format!("practice = [{{ key = \"{key}\", answer = \"none\" }}]");
    let (study, token) = create_link_study(&app, &researcher, &link_spec(name, 3, &[&back, &practice])).await;
    (app, researcher, study, token)
}

#[tokio::test]
async fn participant_goes_from_link_to_completion_url_resumes_and_a_full_study_says_so() {
    let (app, researcher, study, token) = link_study("crowd e2e", "demo-000").await;
    let link: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/link")).await;
    let code = link["completion_code"].as_str().unwrap().to_string();

    let b = Browser::start().await;
    join(&b, &join_url(&app, &token, "E2E-ONE"), study).await;
    wait_stage(&b, "instructions").await;
    assert!(b.text(".instructions-text").await.contains("Select one image"), "the kind's instructions");
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();

    // Practice: answered by key, feedback shown, nothing stored.
    wait_stage(&b, "practice").await;
    wait_text(&b, ".take .progress span", "Practice 1 of 1").await;
    b.press('n').await;
    let feedback = b.wait_css(".feedback").await;
    assert_eq!(feedback.attr("data-correct").await.unwrap().as_deref(), Some("true"), "demo-000's answer is None");
    b.wait_css(r#"button[data-step="practice-next"]"#).await.click().await.unwrap();
    wait_stage(&b, "working").await;
    b.client.execute("window.__same_page = true;", vec![]).await.unwrap();
    answer_by_keys(&b, 1, "1").await;
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;
    let same_page = b.client.execute("return window.__same_page === true;", vec![]).await.unwrap();
    assert_eq!(same_page, Value::Bool(true), "answering reloaded the page");
    let open_task = current_task(&b).await;

    // The same PID from a fresh browser session resumes the same bundle where it stopped.
    b.client.delete_all_cookies().await.unwrap();
    join(&b, &join_url(&app, &token, "E2E-ONE"), study).await;
    wait_stage(&b, "working").await;
    assert_eq!(current_task(&b).await, open_task, "resumed at the first unanswered task");
    answer_by_keys(&b, 2, "bn").await;

    // The code, then Prolific's completion URL (here a page of the test server).
    wait_text(&b, ".completion .code", &code).await;
    wait_focus(&b, "div.completion", "the code's page, not the page's top").await;
    let href = b.wait_css(".completion a.button").await.attr("href").await.unwrap().unwrap();
    assert_eq!(href, format!("{}/?cc={code}", app.base));
    b.screenshot("e2e-take-complete.png").await;
    // Nothing leaves by itself: the participant goes on with the button.
    b.wait_css(".completion a.button").await.click().await.unwrap();
    let landed = wait_path(&b, "/").await;
    assert_eq!(landed, Some(format!("cc={code}")));
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], 3, "the bundle's three answers, no practice answer");

    // A new PID gets another bundle.
    b.client.delete_all_cookies().await.unwrap();
    join(&b, &join_url(&app, &token, "E2E-TWO"), study).await;
    wait_stage(&b, "instructions").await;
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let states: Vec<(&str, i64)> =
        rows.iter().map(|r| (r["state"].as_str().unwrap(), r["bundle"].as_i64().unwrap())).collect();
    assert_eq!(states.len(), 2, "{rows:?}");
    assert_eq!((states[0].0, states[1].0), ("completed", "active"));
    assert_ne!(states[0].1, states[1].1, "the second participant got another bundle");

    // The researcher's page: the link with Prolific's placeholders, the code and the counts.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    let card = format!(r#"section.study[data-study="{study}"]"#);
    let input = b.wait_css(&format!("{card} input.join-url")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut shown = String::new();
    while !shown.starts_with("http") {
        assert!(Instant::now() < deadline, "the join URL never got its origin: {shown:?}");
        shown = input.prop("value").await.unwrap().unwrap_or_default();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let want = format!("{}/join/{token}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}", app.base);
    assert!(shown.starts_with(&want), "{shown} does not start with {want}");
    assert_eq!(b.text(&format!("{card} .completion-code")).await, code);
    for (cell, n) in [("completed", "1"), ("leased", "1"), ("participants", "2"), ("places-total", "21")] {
        assert_eq!(b.text(&format!("{card} td.{cell}")).await, n, "{cell}");
    }
    b.screenshot("e2e-research-link.png").await;

    // A study whose one place is taken: a new PID sees the full page.
    let (small, small_token) = create_link_study(&app, &researcher, &link_spec("crowd full", 63, &[])).await;
    arrive(&app, &small_token, small, "TAKER").await;
    b.client.delete_all_cookies().await.unwrap();
    b.client.goto(&join_url(&app, &small_token, "LATECOMER")).await.unwrap();
    assert_eq!(b.text(".join h1").await, "This study is full");
    assert_eq!(b.client.find_all(Css("form")).await.unwrap().len(), 0, "no way to arrive");
    b.close().await;
}

/// The page is no wider than the window, every option lies inside it, and the first shows without scrolling.
pub(crate) async fn assert_fits(b: &Browser, what: &str) {
    let js = "const w = window.innerWidth;
        const opts = [...document.querySelectorAll('button.option')].map(o => o.getBoundingClientRect());
        return [w, document.documentElement.scrollWidth, opts.length,
                opts.every(r => r.left >= 0 && r.right <= w && r.width > 40 && r.height > 40),
                opts.length == 0 || opts[0].top < window.innerHeight - 40];";
    let v = b.client.execute(js, vec![]).await.unwrap();
    let (width, scroll) = (v[0].as_i64().unwrap(), v[1].as_i64().unwrap());
    assert!(width <= 400, "{what}: the window is {width} px wide, not phone-sized");
    assert!(scroll <= width, "{what}: the page scrolls sideways ({scroll} px in {width} px)");
    assert_eq!(v[3], Value::Bool(true), "{what}: an option lies outside the screen or is too small: {v}");
    assert_eq!(v[4], Value::Bool(true), "{what}: the first option is below the fold: {v}");
}

#[tokio::test]
async fn a_participant_on_a_phone_answers_everything_without_sideways_scrolling() {
    let (app, _researcher, study, token) = link_study("crowd phone", "demo-001").await;
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.client.goto(&join_url(&app, &token, "PHONE-1")).await.unwrap();
    assert_fits(&b, "join page").await;
    join(&b, &join_url(&app, &token, "PHONE-1"), study).await;
    wait_stage(&b, "instructions").await;
    assert_fits(&b, "instructions").await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    wait_stage(&b, "practice").await;
    assert_fits(&b, "practice").await;
    // Tapping works as well as keys.
    b.wait_css(r#"button.option[data-option="none"]"#).await.click().await.unwrap();
    b.wait_css(r#"button[data-step="practice-next"]"#).await.click().await.unwrap();
    wait_stage(&b, "working").await;
    let options = b.client.find_all(Css("button.option")).await.unwrap();
    assert_eq!(options.len(), 5, "four candidates and None");
    assert_fits(&b, "a bundle item").await;
    b.screenshot("e2e-take-phone.png").await;
    answer_by_keys(&b, 1, "a3n").await;
    b.wait_css(".completion .code").await;
    assert_fits(&b, "the completion page").await;
    b.wait_css(".completion a.button").await.click().await.unwrap();
    wait_path(&b, "/").await;
    b.close().await;
}
