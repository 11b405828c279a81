//! Checks in a link study in real headless Chromium (docs/crowd.md §7): a
//! participant meets an attention check (its instruction on the item) and
//! gold items in its bundle; the comprehension check passes on the second
//! attempt; a participant failing it twice reaches the screen-out page, goes
//! on to its URL by its button, and never held a bundle. The comprehension pages at 390×844. The
//! researcher's dashboard follows the participant without a reload, and
//! its approve list has the participant's row.
use crate::browser::Browser;
use crate::crowd_flow::{assert_fits, join, join_url, wait_path, wait_stage, wait_text};
use crate::crowd_kit::{create_link_study, link_spec};
use crate::helpers::TestApp;
use fantoccini::Locator::Css;
use serde_json::Value;

#[tokio::test]
async fn a_participant_meets_an_attention_check_and_gold_items_in_its_bundle() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let gold = (0..4).map(|k| format!("{{ key = \"demo-00{k}\", answer = \"none\" }}")).collect::<Vec<_>>();
    let lines = [
        format!("completion_url = \"{}/?cc={{code}}\"", app.base),
        "attention_checks = 2".to_string(),
        format!("gold = [{}]", gold.join(", ")),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (study, token) = create_link_study(&app, &researcher, &link_spec("checks e2e", 3, &lines)).await;
    // The researcher watches the dashboard in another browser, loaded once.
    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    let answers = format!(r#"section.study[data-study="{study}"] .dashboard td[data-figure="answers"]"#);
    assert_eq!(r.text(&answers).await, "0");
    r.client.execute("window.loadedOnce = true; return null;", vec![]).await.unwrap();
    let b = Browser::start().await;
    join(&b, &join_url(&app, &token, "CHECK-1"), study).await;
    wait_stage(&b, "instructions").await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    wait_stage(&b, "working").await;
    let first = b.text(".take .progress span").await;
    let total: usize = first.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((3 + 2 + 1..=3 + 2 + 4).contains(&total), "3 items, 2 attention checks, gold items: {first}");
    let mut attention = 0;
    for k in 1..=total {
        wait_text(&b, ".take .progress span", &format!("Item {k} of {total}")).await;
        let prompt = b.text(".take .prompt").await;
        let key = match prompt.strip_prefix("Attention check: whatever the images show, select ") {
            Some(rest) => {
                attention += 1;
                if attention == 1 {
                    b.screenshot("e2e-attention-check.png").await;
                }
                let label = rest.split(' ').next().unwrap();
                if label == "None" {
                    'n'
                } else {
                    label.to_ascii_lowercase().chars().next().unwrap()
                }
            }
            None => 'n',
        };
        b.press(key).await;
    }
    assert_eq!(attention, 2, "both attention checks were shown with their instruction");
    b.wait_css(".completion .code").await;
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows[0]["checks_failed"], 0);
    let gold_total = rows[0]["gold_total"].as_i64().unwrap();
    assert_eq!(gold_total as usize, total - 5, "{rows:?}");
    assert_eq!(rows[0]["gold_right"], gold_total, "None is every gold item's answer");
    b.close().await;

    // The dashboard polled its way to every answer, without a reload.
    wait_text(&r, &answers, &total.to_string()).await;
    let kept = r.client.execute("return window.loadedOnce === true;", vec![]).await.unwrap();
    assert_eq!(kept, Value::Bool(true), "the page was reloaded");
    let card = format!(r#"section.study[data-study="{study}"]"#);
    wait_text(&r, &format!(r#"{card} td[data-figure="completed"]"#), "1").await;
    // The approve list the page links to, fetched with the researcher's session.
    let link = r.wait_css(&format!("{card} a.approve-list")).await;
    let href = link.attr("href").await.unwrap().unwrap();
    let csv = r
        .client
        .execute_async("fetch(arguments[0]).then(r => r.text()).then(arguments[1]);", vec![Value::String(href)])
        .await
        .unwrap();
    let csv = csv.as_str().unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("platform_id,participant,bundle,status,answers,"), "{csv}");
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(lines.next(), None, "one participant: {csv}");
    // platform_id, participant, bundle, status, answers (real items), …, checks_failed, …, decision.
    assert_eq!((row[0], row[1], row[3], row[4], row[7]), ("CHECK-1", "1", "completed", "3", "0"), "{csv}");
    assert_eq!(row[6], "1.000", "gold accuracy: {csv}");
    r.close().await;
}

async fn answer_comprehension(b: &Browser, attempt: usize, options: &[&str]) {
    b.wait_css(&format!(r#"form.comprehension[data-attempt="{attempt}"]"#)).await;
    for o in options {
        b.wait_css(&format!(r#"input[data-option="{o}"]"#)).await.click().await.unwrap();
    }
    b.wait_css(r#"button[data-step="comprehension"]"#).await.click().await.unwrap();
}

#[tokio::test]
async fn comprehension_passes_on_the_second_attempt_and_two_failures_land_on_the_screen_out_page() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let lines = [
        "screen_out_code = \"SCREEN03\"".to_string(),
        format!("screen_out_url = \"{}/?out={{code}}\"", app.base),
        "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]".to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (study, token) = create_link_study(&app, &researcher, &link_spec("comprehension e2e", 9, &lines)).await;
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();

    join(&b, &join_url(&app, &token, "COMP-1"), study).await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    wait_stage(&b, "comprehension").await;
    assert_fits(&b, "the comprehension check").await;
    answer_comprehension(&b, 1, &["Never"]).await;
    wait_stage(&b, "instructions").await;
    assert!(b.text(".notice.again").await.contains("one more attempt"));
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    answer_comprehension(&b, 2, &["When no image fits"]).await;
    wait_stage(&b, "working").await;
    wait_text(&b, ".take .progress span", "Item 1 of 9").await;

    b.client.delete_all_cookies().await.unwrap();
    join(&b, &join_url(&app, &token, "COMP-2"), study).await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    answer_comprehension(&b, 1, &["Never"]).await;
    wait_stage(&b, "instructions").await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    answer_comprehension(&b, 2, &["Never"]).await;
    wait_stage(&b, "screened-out").await;
    assert_eq!(b.text(".screened-out .code").await, "SCREEN03");
    assert!(b.text(".screened-out").await.contains("You will not be rejected"));
    crate::crowd_flow::wait_focus(&b, "div.screened-out", "the screen-out page drawn in place").await;
    assert_eq!(b.client.find_all(Css(".return-study")).await.unwrap().len(), 0);
    assert_fits(&b, "the screen-out page").await;
    b.wait_css(".screened-out a.button").await.click().await.unwrap();
    assert_eq!(wait_path(&b, "/").await, Some("out=SCREEN03".into()));
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!((rows[1]["state"].clone(), rows[1]["bundle"].clone()), (Value::Null, Value::Null), "no bundle leased");
    assert_eq!(rows[1]["comprehension_attempts"], 2);
    assert_eq!(rows[0]["state"], "active");
    b.close().await;
}

/// The research page with the demo's crowd study (a link panel, a dashboard
/// and flagged participants on one card, beside every other kind's card and
/// the datasets' audits) hydrates whole: the link panel's address gets the
/// browser's origin, which only the hydrated card sets, and its Discard
/// button works. Before the audits came with the funnels, this page failed
/// to hydrate ("expected a marker node") and every button on it was dead.
#[tokio::test]
async fn the_research_page_with_the_demo_crowd_study_hydrates_and_its_buttons_work() {
    let app = TestApp::spawn();
    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    r.goto(&format!("{}/research", app.base)).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let url = r.wait_css(".link-panel input.join-url").await.prop("value").await.unwrap().unwrap_or_default();
        if url.starts_with(&app.base) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the link panel never got the origin: {url:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The hasty participant finished too fast: its copy may be discarded from the page.
    let row = r#"table.flagged tr:has(td.flags) button.discard"#;
    let before = r.client.find_all(Css(row)).await.unwrap().len();
    assert!(before >= 1, "a flagged participant with a Discard button");
    // A double click (clicks counted 1, then 2, at one spot) only asks too:
    // its second click is no confirmation (audit AS: it discarded for good).
    r.wait_css(row).await;
    let at = r
        .client
        .execute(
            "const e = document.querySelector(arguments[0]); e.scrollIntoView({block: 'center'}); \
             const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2];",
            vec![serde_json::json!(row)],
        )
        .await
        .unwrap();
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    for count in [1, 2] {
        for kind in ["mousePressed", "mouseReleased"] {
            let event = serde_json::json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": count});
            r.cdp("Input.dispatchMouseEvent", event).await;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(r.client.find_all(Css(row)).await.unwrap().len(), before, "a double click only asks");
    r.wait_css(r#"table.flagged button.discard.armed"#).await;
    // Disarmed by nothing but a confirmation: one more click discards.

    r.wait_css(r#"table.flagged button.discard.armed"#).await.click().await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while r.client.find_all(Css(row)).await.unwrap().len() == before {
        assert!(std::time::Instant::now() < deadline, "Discard did nothing");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    r.close().await;
}
