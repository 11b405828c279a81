//! End to end in real headless Chromium: an annotator answers SugarCrepe++'s
//! odd-one-out demo studies with the keyboard, with the image (ITT) and text
//! only (TOT), and SugarCrepe's A/B/Tie on both criteria; captions are text
//! options, and the reports count the answers. The ranking kind's images are
//! reordered with keys alone (a digit selects, u / ArrowUp moves, Enter submits).
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::helpers::TestApp;
use crate::pipeline_flow::open_study;
use fantoccini::Locator;
use hardneg::demo::triplets::generate;
use serde_json::{json, Value};

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

async fn option_texts(b: &Browser) -> Vec<String> {
    let mut out = Vec::new();
    for e in b.client.find_all(Locator::Css("button.option.text-choice .text")).await.unwrap() {
        out.push(e.text().await.unwrap());
    }
    assert_eq!(out.len(), 2, "two negatives as text options");
    out
}

async fn report(app: &TestApp, name: &str) -> Value {
    let client = app.login("researcher").await;
    let id = app.studies(&client).await.into_iter().find(|s| s.name == name).unwrap().id;
    app.get(&client, &format!("/api/v1/studies/{id}/report")).await
}

#[tokio::test]
async fn annotator_answers_odd_one_out_and_ab_tie_by_keyboard() {
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

    // A/B/Tie: the same two negatives twice, commonsense then grammar; keys 3/t are Tie.
    open_study(&b, &app, "Demo: SugarCrepe A/B/Tie").await;
    let mut task = current_task(&b).await;
    let first = b.text("blockquote.prompt").await;
    assert!(b.text(".instructions").await.contains("plausible"));
    let sides = option_texts(&b).await;
    b.press('t').await;
    task = wait_next_task(&b, &task).await;
    assert_eq!(b.text("blockquote.prompt").await, first, "the second question is about the same item");
    assert_eq!(option_texts(&b).await, sides, "the negatives keep their places");
    b.wait_css(r#"button.option[data-option="tie"]"#).await;
    b.press('1').await;
    wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "2 / 14");
    b.close().await;

    for (name, answers) in
        [("Demo: SugarCrepe++ odd one out (image)", 3), ("Demo: SugarCrepe++ odd one out (text only)", 2)]
    {
        let r = report(&app, name).await;
        let all = r["rows"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((all["answers"].as_i64(), all["correct"].as_i64()), (Some(answers), Some(answers)), "{name}");
    }
    let r = report(&app, "Demo: SugarCrepe A/B/Tie").await;
    let rows = r["rows"].as_array().unwrap();
    let overall = |c: &str| rows.iter().find(|row| row["criterion"] == c && row["subset"].is_null()).unwrap().clone();
    assert_eq!(overall("commonsense")["ties"], 1);
    let grammar: i64 =
        overall("grammar")["sources"].as_array().unwrap().iter().map(|s| s["better"].as_i64().unwrap()).sum();
    assert_eq!((overall("grammar")["ties"].as_i64(), grammar), (Some(0), 1));
}

/// The shown letters in list order.
async fn rank_order(b: &Browser) -> Vec<String> {
    let mut out = Vec::new();
    for li in b.client.find_all(Locator::Css("li.rank-item")).await.unwrap() {
        out.push(li.attr("data-option").await.unwrap().unwrap());
    }
    out
}

#[tokio::test]
async fn annotator_ranks_generated_images_with_keys_only() {
    const ARROW_UP: char = '\u{E013}';
    const ENTER: char = '\u{E007}';
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, "Demo: ranking generated images").await;
    let mut task = current_task(&b).await;
    let mut submitted = Vec::new();
    for up in ['u', ARROW_UP] {
        b.wait_css("li.rank-item img").await;
        let before = rank_order(&b).await;
        let n = before.len();
        assert!((2..=5).contains(&n), "{before:?}");
        // Select the last image by its digit and move it to the top.
        b.press(char::from_digit(n as u32, 10).unwrap()).await;
        for _ in 1..n {
            b.press(up).await;
        }
        let mut want = before.clone();
        let last = want.pop().unwrap();
        want.insert(0, last);
        assert_eq!(rank_order(&b).await, want, "moved to the top with keys");
        b.press(ENTER).await;
        submitted.push(want.join(","));
        task = wait_next_task(&b, &task).await;
        crate::crowd_flow::wait_focus(&b, "section.survey.ranking", "the new item").await;
    }
    assert_eq!(b.text(".progress span").await, "2 / 8");
    // Enter on the Instructions toggle opens it and sends no order (it once did).
    let details = "document.querySelector('section.survey.ranking details.instructions')";
    let open = || async { b.client.execute(&format!("return {details}.open"), vec![]).await.unwrap() };
    assert_eq!(open().await, false);
    b.client.execute(&format!("{details}.querySelector('summary').focus()"), vec![]).await.unwrap();
    b.press(ENTER).await;
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert_eq!(open().await, true, "Enter on the toggle opens it");
    assert_eq!(b.text(".progress span").await, "2 / 8", "no order was sent");
    // A phone has no drag and drop: a tap on an image's ↓ moves it, and the
    // move is said for screen readers.
    b.client.set_window_size(360, 740).await.unwrap();
    b.cdp("Emulation.setTouchEmulationEnabled", json!({ "enabled": true, "maxTouchPoints": 5 })).await;
    let wide = "return [window.innerWidth, document.documentElement.scrollWidth];";
    let v = b.client.execute(wide, vec![]).await.unwrap();
    assert!(v[1].as_i64() <= v[0].as_i64(), "no sideways scroll at phone width with the ↑/↓ buttons: {v}");
    let before = rank_order(&b).await;
    crate::touch_take::tap(&b, "li.rank-item:first-child button.move[data-dir=down]").await;
    let mut want = before.clone();
    want.swap(0, 1);
    assert_eq!(rank_order(&b).await, want, "moved down one place by a tap");
    let said = b.client.execute("return document.querySelector('form.rank-form p[role=status]').textContent", vec![]);
    let said = said.await.unwrap().as_str().unwrap_or_default().to_string();
    assert!(said.starts_with(&format!("Image {} is now at place 2 of", before[0])), "{said}");
    // The focus follows the moved image's button, and Enter there moves it
    // again (it once sent the order instead).
    let focused = "const e = document.activeElement; return [e.dataset.dir || null, e.closest('li') && e.closest('li').dataset.option];";
    let at = b.client.execute(focused, vec![]).await.unwrap();
    assert_eq!(at[1], json!(before[0]), "the focus stays with the moved image: {at}");
    b.press(ENTER).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(b.text(".progress span").await, "2 / 8", "Enter on a move button sends nothing");
    let now = rank_order(&b).await;
    assert_ne!(now, want, "Enter moved the image again");
    crate::touch_take::tap(&b, "button.submit-order").await;
    submitted.push(now.join(","));
    wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "3 / 8");
    b.close().await;
    let r = report(&app, "Demo: ranking generated images").await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("ranking"), Some(3)));
    // The stored options are the orders the list showed when Enter was pressed.
    let client = app.login("researcher").await;
    let id = app.studies(&client).await.into_iter().find(|s| s.name == "Demo: ranking generated images").unwrap().id;
    let out = app.data_dir.join("export");
    let res = app.cli(&[
        "export",
        "demo-rankings",
        "--stage",
        "candidates",
        "--format",
        "csv",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(res.status.success());
    let answers = std::fs::read_to_string(out.join(format!("study-{id}-answers.csv"))).unwrap();
    for order in &submitted {
        assert!(answers.contains(order.as_str()), "{order} in {answers}");
    }
}
