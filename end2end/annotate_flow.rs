//! End to end in real headless Chromium: an annotator answers Step 3 items by
//! keyboard and by click, reloads and resumes, and a researcher sees the counts.
use crate::browser::Browser;
use crate::helpers::TestApp;
use std::time::Duration;

pub async fn current_task(b: &Browser) -> String {
    // A form post may replace the page between finding the card and reading it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match b.wait_css("section.survey").await.attr("data-task").await {
            Ok(Some(task)) => return task,
            other => assert!(std::time::Instant::now() < deadline, "no task on the survey card: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Waits until the survey shows a task other than `previous`, without a page load.
pub(crate) async fn wait_next_task(b: &Browser, previous: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = current_task(b).await;
        if now != previous {
            return now;
        }
        assert!(std::time::Instant::now() < deadline, "the survey stayed on task {previous}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[tokio::test]
async fn annotator_answers_by_keyboard_and_click_resumes_and_researcher_sees_counts() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    assert_eq!(b.client.current_url().await.unwrap().path(), "/annotate");
    assert!(b.text("header .who").await.contains("annotator1"), "the header does not show who is logged in");
    b.wait_css("ul.studies a").await.click().await.unwrap();
    b.wait_hydrated().await;
    let mut task = current_task(&b).await;
    assert_eq!(b.text(".progress span").await, "0 / 63");
    let instructions = b.text(".instructions").await;
    assert!(instructions.contains("Select one image that adequately represents the description"), "{instructions}");
    let images = b.client.find_all(fantoccini::Locator::Css("button.option img")).await.unwrap();
    assert_eq!(images.len(), 4);
    // Once hydrated, the next item's images are fetched ahead (the server's HTML has none).
    let ahead = b.wait_css("section.survey div[hidden] img").await;
    assert!(ahead.attr("src").await.unwrap().unwrap().starts_with("/img/"));

    // Mark the document so a full page load would be noticed.
    b.client.execute("window.__same_page = true;", vec![]).await.unwrap();
    let mut answered = vec![task.clone()];
    for step in ["key:1", "key:n", "click:B", "key:3", "key:D"] {
        match step.split_once(':').unwrap() {
            ("key", k) => b.press(k.chars().next().unwrap()).await,
            (_, id) => b.wait_css(&format!(r#"button.option[data-option="{id}"]"#)).await.click().await.unwrap(),
        }
        task = wait_next_task(&b, &task).await;
        answered.push(task.clone());
    }
    let same_page = b.client.execute("return window.__same_page === true;", vec![]).await.unwrap();
    assert_eq!(same_page, serde_json::Value::Bool(true), "answering reloaded the page");
    assert_eq!(b.text(".progress span").await, "5 / 63");
    b.screenshot("e2e-survey.png").await;

    // Reload: the survey resumes at the first unanswered item.
    b.client.refresh().await.unwrap();
    b.wait_hydrated().await;
    assert_eq!(b.text(".progress span").await, "5 / 63");
    assert_eq!(current_task(&b).await, *answered.last().unwrap());

    // The researcher sees the five answers: A, none, B, C, D.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    assert_eq!(b.client.current_url().await.unwrap().path(), "/research");
    for (option, count) in [("A", "1"), ("B", "1"), ("C", "1"), ("D", "1"), ("none", "1")] {
        assert_eq!(b.text(&format!(r#"table.distribution td[data-option="{option}"]"#)).await, count, "{option}");
    }
    assert_eq!(b.text(r#"tr[data-annotator="annotator1"] td.done"#).await, "5");
    assert_eq!(b.text(r#"tr[data-annotator="annotator2"] td.done"#).await, "0");
    assert_eq!(b.text("table.distribution td.none-share").await, "20.0%");
    b.screenshot("e2e-research.png").await;
    b.close().await;
}

/// With the wasm never arriving (blocked), a key press still answers: the
/// page's small inline script clicks the option the key names, so its form
/// posts, and the next item comes as a new page. Key hints show only once
/// the page has hydrated, so none is shown here.
#[tokio::test]
async fn keys_answer_before_the_wasm_has_loaded() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    let survey = b.wait_css("ul.studies a").await.attr("href").await.unwrap().expect("a study link");
    b.cdp("Network.enable", serde_json::json!({})).await;
    b.cdp("Network.setBlockedURLs", serde_json::json!({ "urls": ["*.wasm"] })).await;
    b.client.goto(&format!("{}{survey}", app.base)).await.unwrap();
    // Starting is a form post too.
    b.wait_css("form.start button").await.click().await.unwrap();
    let task = current_task(&b).await;
    assert_eq!(b.text(".progress span").await, "0 / 63");
    let hint = b.wait_css("button.option kbd").await;
    assert!(!hint.is_displayed().await.unwrap(), "key hints wait for the hydrated page");
    let key = b.wait_css("form.options button.option").await.attr("aria-keyshortcuts").await.unwrap().unwrap();
    b.press(key.chars().next().unwrap()).await;
    let next = wait_next_task(&b, &task).await;
    assert_ne!(next, task);
    assert_eq!(b.text(".progress span").await, "1 / 63", "one press, one answer");
    let hydrated = b.client.execute("return document.querySelector('main[data-hydrated=\"true\"]') !== null;", vec![]);
    assert_eq!(hydrated.await.unwrap(), serde_json::Value::Bool(false), "the wasm was blocked");
    b.close().await;
}
