//! End to end in real headless Chromium at phone width: annotator1 writes an
//! HNC caption pair with the keyboard alone (p / n focus the boxes, the word
//! outside the demo vocabulary is marked as typed and named again on
//! submit, kept, Enter submits), skips an image with a digit and one by tap, then validates
//! three more of the demo's written pairs (annotator2's) with the validation keys.
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::helpers::TestApp;
use crate::pipeline_flow::open_study;
use serde_json::Value;

const WRITING: &str = "Demo: HNC caption writing";
const VALIDATION: &str = "Demo: HNC pair validation";
const ENTER: char = '\u{E007}';
const ESCAPE: char = '\u{E00C}';

async fn type_text(b: &Browser, text: &str) {
    for c in text.chars() {
        b.press(c).await;
    }
}

async fn focused(b: &Browser) -> Value {
    b.client.execute("return document.activeElement.name || null;", vec![]).await.unwrap()
}

#[tokio::test]
async fn a_writer_writes_and_skips_and_a_validator_validates_by_keyboard() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, WRITING).await;
    b.wait_css("section.caption-writing img.prompt-image").await;
    assert!(b.text("p.caption-type").await.starts_with("Assigned type: "));
    let v =
        b.client.execute("return [window.innerWidth, document.documentElement.scrollWidth];", vec![]).await.unwrap();
    assert!(v[1].as_i64() <= v[0].as_i64(), "no sideways scroll at phone width: {v}");

    // The pair: p and n move between the boxes; the unknown word is marked as typed.
    let task = current_task(&b).await;
    b.press(ESCAPE).await;
    b.press('p').await;
    assert_eq!(focused(&b).await, "positive");
    type_text(&b, "a red circle").await;
    b.press(ESCAPE).await;
    b.press('n').await;
    assert_eq!(focused(&b).await, "negative");
    type_text(&b, "a shiny blue circle").await;
    assert!(b.text("p.unknown-words[data-field=negative]").await.contains("shiny"));
    // Enter submits; the server names the word and stores nothing until it is kept.
    b.press(ENTER).await;
    assert!(b.text("div.unknown-report").await.contains("negative: shiny"));
    assert_eq!(current_task(&b).await, task);
    b.wait_css("div.unknown-report input[name=confirmed]").await.click().await.unwrap();
    b.press('n').await;
    b.press(ENTER).await;
    let task = wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "1 / 9");
    crate::crowd_flow::wait_focus(&b, "input[name=positive]", "the next image's first box").await;
    // A skip: out of the boxes, a digit names the reason.
    b.press(ESCAPE).await;
    b.press('2').await;
    let task = wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "2 / 9");
    b.screenshot("e2e-hnc-writing.png").await;
    // A skip by tap: the buttons are on the page (the skip link's style once
    // drew them above it, out of reach of every pointer).
    let top = "return document.querySelector('fieldset.skip-reasons').getBoundingClientRect().top;";
    let top = b.client.execute(top, vec![]).await.unwrap();
    assert!(top.as_f64().unwrap() >= 0.0, "the skip buttons are on the page: top {top}");
    b.wait_css("fieldset.skip-reasons button[value='skip:other']").await.click().await.unwrap();
    wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "3 / 9");

    // Validation: the generic card's keys.
    open_study(&b, &app, VALIDATION).await;
    let mut task = current_task(&b).await;
    for key in ['v', '3', 'b'] {
        b.press(key).await;
        task = wait_next_task(&b, &task).await;
    }
    assert_eq!(b.text(".progress span").await, "7 / 8", "the demo's 4, then these 3");
    b.close().await;

    let researcher = app.login("researcher").await;
    let studies = app.studies(&researcher).await;
    let id = |name: &str| studies.iter().find(|s| s.name == name).unwrap().id;
    let w: Value = app.get(&researcher, &format!("/api/v1/studies/{}/report", id(WRITING))).await;
    assert_eq!(w["vocabulary"]["pairs_with_unknown"], 2, "the demo's and the kept one");
    let all = w["rows"].as_array().unwrap().last().unwrap();
    assert_eq!((all["written"].as_i64(), all["skipped"]["type_does_not_apply"].as_i64()), (Some(9), Some(2)));
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{}/report", id(VALIDATION))).await;
    assert_eq!(r["answers"], 7);
}
