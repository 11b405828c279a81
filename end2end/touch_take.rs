//! A participant on a touch phone (issue 53), in real Chromium with touch
//! emulated through the DevTools protocol (no hover, a coarse pointer) and
//! every step tapped: after a tap the next item's option under the finger
//! looks like any untouched option, not chosen; the participant's pages
//! carry no account controls; the completion page's stage is `complete`
//! and it offers no "Return this study".
use crate::browser::Browser;
use crate::crowd_flow::{join_url, wait_stage, wait_text};
use crate::crowd_kit::{create_link_study, link_spec};
use crate::helpers::TestApp;
use fantoccini::Locator::Css;
use serde_json::{json, Value};
use std::time::Duration;

/// A finger's tap at the middle of the element, as a phone sends it.
pub(crate) async fn tap(b: &Browser, css: &str) {
    b.wait_css(css).await;
    let js = "const e = document.querySelector(arguments[0]); e.scrollIntoView({ block: 'center' });
        const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];";
    let at = b.client.execute(js, vec![json!(css)]).await.unwrap();
    let point = json!([{ "x": at[0], "y": at[1] }]);
    b.cdp("Input.dispatchTouchEvent", json!({ "type": "touchStart", "touchPoints": point })).await;
    b.cdp("Input.dispatchTouchEvent", json!({ "type": "touchEnd", "touchPoints": [] })).await;
}

/// What hover or a choice would change in an option's look.
async fn look(b: &Browser, option: &str) -> Value {
    let js = "const s = getComputedStyle(document.querySelector(`button.option[data-option='${arguments[0]}']`));
        return [s.borderColor, s.backgroundColor, s.color, s.outlineStyle, s.boxShadow];";
    b.client.execute(js, vec![json!(option)]).await.unwrap()
}

#[tokio::test]
async fn on_a_touch_phone_the_next_item_looks_unchosen_and_the_end_is_the_end() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let back = format!("completion_url = \"{}/?cc={{code}}\"", app.base);
    let (_study, token) = create_link_study(&app, &researcher, &link_spec("touch e2e", 3, &[&back])).await;
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.cdp("Emulation.setTouchEmulationEnabled", json!({ "enabled": true, "maxTouchPoints": 5 })).await;

    b.client.goto(&join_url(&app, &token, "TOUCH-1")).await.unwrap();
    tap(&b, "input[name=consent]").await;
    tap(&b, "form button[type=submit]").await;
    wait_stage(&b, "instructions").await;
    b.wait_hydrated().await;
    let media = b
        .client
        .execute("return [matchMedia('(hover: hover)').matches, matchMedia('(pointer: coarse)').matches];", vec![]);
    assert_eq!(media.await.unwrap(), json!([false, true]), "a touch screen: nothing hovers");
    // No account controls: a participant has no password to come back with.
    let header = b.text("header.top").await;
    assert!(!header.contains("Log out") && !header.contains("participant"), "the header offers {header:?}");
    assert!(b.client.find_all(Css("header nav")).await.unwrap().is_empty());

    tap(&b, r#"button[data-step="instructions"]"#).await;
    wait_stage(&b, "working").await;
    wait_text(&b, ".take .progress span", "Item 1 of 3").await;
    let untouched = look(&b, "A").await;
    assert_eq!(look(&b, "B").await, untouched, "two untouched options look the same");
    tap(&b, r#"button.option[data-option="B"]"#).await;
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;
    // Past the options' 120 ms transition.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let under_finger = "document.querySelector(`button.option[data-option='B']`).matches(':hover')";
    let hovered = b.client.execute(&format!("return {under_finger};"), vec![]).await.unwrap();
    assert_eq!(look(&b, "B").await, look(&b, "A").await, "item 2's B (hovered: {hovered}) looks chosen");
    b.screenshot("e2e-touch-next-item.png").await;

    tap(&b, r#"button.option[data-option="none"]"#).await;
    wait_text(&b, ".take .progress span", "Item 3 of 3").await;
    tap(&b, r#"button.option[data-option="C"]"#).await;
    wait_stage(&b, "complete").await;
    b.wait_css(".completion .code").await;
    assert!(b.client.find_all(Css(".return-study")).await.unwrap().is_empty(), "nothing to return after the end");
    assert!(b.client.find_all(Css("header nav")).await.unwrap().is_empty());
    tap(&b, ".completion a.go-on").await;
    let landed = crate::crowd_flow::wait_path(&b, "/").await;
    assert!(landed.is_some_and(|q| q.starts_with("cc=")), "the button goes on to the completion URL");
    b.close().await;
}

/// The middle of the element, scrolled into view.
async fn middle(b: &Browser, css: &str) -> Value {
    b.wait_css(css).await;
    let js = "const e = document.querySelector(arguments[0]); e.scrollIntoView({ block: 'center' });
        const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];";
    b.client.execute(js, vec![json!(css)]).await.unwrap()
}

/// A mouse's double click, as the system reports it: two clicks 120 ms
/// apart, the second with a click count of 2.
async fn double_click(b: &Browser, css: &str) {
    let at = middle(b, css).await;
    for count in [1, 2] {
        for kind in ["mousePressed", "mouseReleased"] {
            let e = json!({ "type": kind, "x": at[0], "y": at[1], "button": "left", "clickCount": count });
            b.cdp("Input.dispatchMouseEvent", e).await;
        }
        tokio::time::sleep(Duration::from_millis(120)).await;
    }
}

/// From the join link, clicked through consent and the instructions to the
/// first of 3 items, hydrated.
async fn to_first_item(b: &Browser, join: &str) {
    b.client.goto(join).await.unwrap();
    b.wait_css("input[name=consent]").await.click().await.unwrap();
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    wait_stage(b, "instructions").await;
    b.wait_hydrated().await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    wait_stage(b, "working").await;
    wait_text(b, ".take .progress span", "Item 1 of 3").await;
}

/// A double click or a double tap answers the item under it once: the next
/// item, which has replaced it by the second click, keeps no answer (an
/// audit: the second click answered it with the same option).
#[tokio::test]
async fn a_double_click_or_tap_answers_one_item() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("double e2e", 3, &[])).await;
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    to_first_item(&b, &join_url(&app, &token, "DOUBLE-1")).await;

    double_click(&b, r#"button.option[data-option="B"]"#).await;
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(b.text(".take .progress span").await, "Item 2 of 3", "the second click answered item 2");

    b.cdp("Emulation.setTouchEmulationEnabled", json!({ "enabled": true, "maxTouchPoints": 5 })).await;
    let at = middle(&b, r#"button.option[data-option="none"]"#).await;
    let point = json!([{ "x": at[0], "y": at[1] }]);
    for _ in 0..2 {
        b.cdp("Input.dispatchTouchEvent", json!({ "type": "touchStart", "touchPoints": point })).await;
        b.cdp("Input.dispatchTouchEvent", json!({ "type": "touchEnd", "touchPoints": [] })).await;
        tokio::time::sleep(Duration::from_millis(120)).await;
    }
    wait_text(&b, ".take .progress span", "Item 3 of 3").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(b.text(".take .progress span").await, "Item 3 of 3", "the second tap answered item 3");

    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows[0]["done"].as_i64(), Some(2), "{rows:?}");
    b.close().await;
}

/// Two tabs on one survey: the item answered in the second tab first, the
/// first tab's answer to it is not kept, and that tab says so as it moves on
/// (an audit: it moved on without a word).
#[tokio::test]
async fn a_stale_tab_says_its_answer_was_not_the_one_kept() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("two tabs e2e", 3, &[])).await;
    let b = Browser::start().await;
    to_first_item(&b, &join_url(&app, &token, "TWO-TABS-1")).await;
    let first = b.client.window().await.unwrap();

    let second = b.client.new_window(true).await.unwrap().handle;
    b.client.switch_to_window(second).await.unwrap();
    b.goto(&app.url(&format!("/take/{study}"))).await;
    wait_text(&b, ".take .progress span", "Item 1 of 3").await;
    b.wait_css(r#"button.option[data-option="B"]"#).await.click().await.unwrap();
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;

    b.client.switch_to_window(first).await.unwrap();
    b.wait_css(r#"button.option[data-option="C"]"#).await.click().await.unwrap();
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;
    let alerts = "return [...document.querySelectorAll('[role=alert]')].map(e => e.textContent).join('|');";
    let said = b.client.execute(alerts, vec![]).await.unwrap();
    assert!(said.as_str().unwrap().contains("already been answered in another tab"), "the stale tab said {said}");
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows[0]["done"].as_i64(), Some(1), "{rows:?}");
    // The next answer clears the notice.
    b.wait_css(r#"button.option[data-option="A"]"#).await.click().await.unwrap();
    wait_text(&b, ".take .progress span", "Item 3 of 3").await;
    let said = b.client.execute(alerts, vec![]).await.unwrap();
    assert!(!said.as_str().unwrap().contains("another tab"), "still said {said}");
    b.close().await;
}
