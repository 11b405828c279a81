//! End to end in real headless Chromium at phone width: an expert checks the
//! demo triplets with the keyboard alone (v / n the verdict, digits the
//! tag, e edits P2, Enter submits), including a corrected P2; a second
//! expert disagrees over the API, and the disputes show the correction typed
//! in the browser.
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::helpers::TestApp;
use crate::pipeline_flow::open_study;
use hardneg::domain::survey::triplet_check::read_prompt;
use serde_json::Value;

const STUDY: &str = "Demo: SugarCrepe++ triplet check";
const ENTER: char = '\u{E007}';

#[tokio::test]
async fn an_expert_checks_triplets_and_corrects_p2_by_keyboard() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, STUDY).await;
    b.wait_css("section.triplet-check img.prompt-image").await;
    let v =
        b.client.execute("return [window.innerWidth, document.documentElement.scrollWidth];", vec![]).await.unwrap();
    assert!(v[1].as_i64() <= v[0].as_i64(), "no sideways scroll at phone width: {v}");

    // 1: valid as it is.
    let mut task = current_task(&b).await;
    b.press('v').await;
    b.press(ENTER).await;
    task = wait_next_task(&b, &task).await;
    // 2: not valid, hallucination.
    b.press('n').await;
    b.press('2').await;
    let checked = b.client.execute("return document.querySelector('input[name=tag]:checked').value;", vec![]).await;
    assert_eq!(checked.unwrap(), "hallucination", "the digit checks the tag");
    b.press(ENTER).await;
    task = wait_next_task(&b, &task).await;
    // 3: P2 corrected (spatial mismatch): e fills the box with P2 and focuses it; Enter there submits.
    let p2 = b.text("dd.p2").await;
    b.press('v').await;
    b.press('3').await;
    b.press('e').await;
    let focused = b.client.execute("return document.activeElement.name;", vec![]).await.unwrap();
    assert_eq!(focused, "text", "e puts the focus in the text box");
    for c in " today".chars() {
        b.press(c).await;
    }
    b.screenshot("e2e-triplet-check.png").await;
    b.press(ENTER).await;
    wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "3 / 10");
    b.close().await;

    // A second expert marks every triplet valid: items 2 and 3 disagree.
    let researcher = app.login("researcher").await;
    let study = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).unwrap().id;
    app.work_through("annotator2", study, |_| "valid".to_string()).await;
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert_eq!(disputes.len(), 2, "{disputes:#?}");
    let corrected = disputes
        .iter()
        .find(|d| read_prompt(d["prompt"].as_str().unwrap()).is_some_and(|(_, shown, _)| shown == p2))
        .expect("the corrected triplet is disputed");
    assert_eq!(corrected["texts"][0]["text"].as_str().unwrap(), format!("{p2} today"));
    assert_eq!(corrected["texts"][0]["value"], "valid:spatial_mismatch");
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/report")).await;
    let tag = |t: &str| r["tags"].as_array().unwrap().iter().find(|c| c["tag"] == t).unwrap()["answers"].clone();
    assert_eq!((tag("hallucination"), tag("spatial_mismatch")), (1.into(), 1.into()));
}
