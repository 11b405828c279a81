//! End to end in real headless Chromium: an annotator answers SugarCrepe++'s
//! odd-one-out demo studies with the keyboard, with the image (ITT) and text
//! only (TOT); the captions are text options, and the report counts the answers.
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::helpers::TestApp;
use crate::pipeline_flow::open_study;
use fantoccini::Locator;
use hardneg::demo::triplets::generate;
use serde_json::Value;

/// The key of the option showing one of the demo negatives.
async fn negative_key(b: &Browser, negatives: &[String]) -> char {
    let buttons = b.client.find_all(Locator::Css("button.option.text-choice")).await.unwrap();
    assert_eq!(buttons.len(), 3, "three captions as text options");
    for button in buttons {
        assert!(button.find(Locator::Css("img")).await.is_err(), "a caption option shows no image");
        let text = button.find(Locator::Css(".text")).await.unwrap().text().await.unwrap();
        if negatives.contains(&text) {
            let id = button.attr("data-option").await.unwrap().unwrap();
            return id.to_ascii_lowercase().chars().next().unwrap();
        }
    }
    panic!("no option shows a demo negative");
}

async fn answer_by_keys(b: &Browser, negatives: &[String], n: usize) {
    let mut task = current_task(b).await;
    for _ in 0..n {
        let key = negative_key(b, negatives).await;
        b.press(key).await;
        task = wait_next_task(b, &task).await;
    }
}

async fn report(app: &TestApp, name: &str) -> Value {
    let client = app.login("researcher").await;
    let id = app.studies(&client).await.into_iter().find(|s| s.name == name).unwrap().id;
    app.get(&client, &format!("/api/v1/studies/{id}/report")).await
}

#[tokio::test]
async fn annotator_finds_the_odd_caption_by_keyboard_with_and_without_the_image() {
    let app = TestApp::spawn();
    let negatives: Vec<String> = generate(10, 2024).into_iter().map(|t| t.negative).collect();
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;

    open_study(&b, &app, "Demo: SugarCrepe++ odd one out (image)").await;
    b.wait_css("img.prompt-image").await;
    assert!(b.text(".instructions").await.contains("does NOT match the image"));
    answer_by_keys(&b, &negatives, 3).await;
    assert_eq!(b.text(".progress span").await, "3 / 10");
    b.screenshot("e2e-odd-one-out.png").await;

    open_study(&b, &app, "Demo: SugarCrepe++ odd one out (text only)").await;
    b.wait_css("button.option.text-choice").await;
    assert!(b.client.find(Locator::Css("img.prompt-image")).await.is_err(), "TOT shows no image");
    answer_by_keys(&b, &negatives, 2).await;
    assert_eq!(b.text(".progress span").await, "2 / 10");
    b.close().await;

    for (name, answers) in
        [("Demo: SugarCrepe++ odd one out (image)", 3), ("Demo: SugarCrepe++ odd one out (text only)", 2)]
    {
        let r = report(&app, name).await;
        let all = r["rows"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((all["answers"].as_i64(), all["correct"].as_i64()), (Some(answers), Some(answers)), "{name}");
    }
}
