//! The participant's page in real Chromium (issue 13): a link study taken
//! from arrival to the completion URL with JavaScript switched off on a
//! phone-sized window (every step a plain form post; the completion and
//! screen-out pages leave only by their button, no timed refresh, and pass
//! axe-core, issue 53), and axe-core on every
//! step of `/take` (hydrated), on the screen-out page, and on the
//! adjudication page with open disputes, where a decision is settled and
//! reopened (undo); and a ranking answered by choosing places, without
//! JavaScript.
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::crowd_flow::{assert_fits, join_url, wait_path, wait_stage, wait_text};
use crate::crowd_kit::{create_link_study, link_spec};
use crate::helpers::{Spec, TestApp};
use crate::pages::{axe_clean, axe_source, check, title_names_h1, Ready};
use fantoccini::Locator::Css;
use serde_json::{json, Value};

/// A link study: two comprehension questions, one practice item (answer
/// None), bundles of three; completion and screen-out land on the app's home.
async fn link_study(app: &TestApp, researcher: &reqwest::Client, name: &str) -> (i64, String) {
    let lines = [
        format!("completion_url = \"{}/?cc={{code}}\"", app.base),
        format!("screen_out_url = \"{}/?out={{code}}\"", app.base),
        "screen_out_code = \"SCREEN13\"".into(),
        "practice = [{ key = \"demo-000\", answer = \"none\" }]".into(),
        "comprehension = [
  { question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" },
  { question = \"Do deformed hands count against an image?\", options = [\"Yes\", \"No\"], answer = \"No\" },
]"
        .into(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    create_link_study(app, researcher, &link_spec(name, 3, &lines)).await
}

/// No word about keys on the page as shown: they work only once hydrated.
async fn says_nothing_about_keys(b: &Browser, what: &str) {
    let shown = b.client.execute("return document.querySelector('main').innerText;", vec![]).await.unwrap();
    let shown = shown.as_str().unwrap_or_default().to_lowercase();
    assert!(!shown.contains("keys"), "{what} mentions keys: {shown}");
}

async fn click(b: &Browser, css: &str) {
    b.wait_css(css).await.click().await.unwrap();
}

async fn comprehension(b: &Browser, answers: [&str; 2]) {
    for (q, option) in answers.into_iter().enumerate() {
        click(b, &format!(r#"fieldset[data-question="{q}"] input[data-option="{option}"]"#)).await;
    }
    click(b, r#"button[data-step="comprehension"]"#).await;
}

/// A page served with JavaScript off leaves only when the participant says
/// so: no timed refresh (axe's `meta-refresh`, WCAG 2.2.1), and axe-core
/// finds nothing. Scripts are switched back on for axe alone; the page's
/// own were skipped when it loaded, so it stays as served.
async fn stays_until_asked(b: &Browser, what: &str) {
    let refresh = b.client.find_all(Css(r#"meta[http-equiv="refresh" i]"#)).await.unwrap();
    assert!(refresh.is_empty(), "{what} refreshes by itself");
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": false })).await;
    axe_clean(b, &axe_source(), what).await;
    let hydrated = b.client.find(Css(r#"main[data-hydrated="true"]"#)).await;
    assert!(hydrated.is_err(), "{what}: JavaScript really was off");
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": true })).await;
}

#[tokio::test]
async fn a_participant_takes_a_link_study_on_a_phone_with_javascript_off() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = link_study(&app, &researcher, "no-js phone").await;
    let code = app.get::<Value>(&researcher, &format!("/api/v1/studies/{study}/link")).await["completion_code"]
        .as_str()
        .unwrap()
        .to_string();
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": true })).await;

    b.client.goto(&join_url(&app, &token, "NOJS-PHONE")).await.unwrap();
    click(&b, "input[name=consent]").await;
    click(&b, "form button[type=submit]").await;
    wait_stage(&b, "instructions").await;
    assert_fits(&b, "instructions, no JavaScript").await;
    says_nothing_about_keys(&b, "instructions, no JavaScript").await;
    click(&b, r#"button[data-step="instructions"]"#).await;
    wait_stage(&b, "comprehension").await;
    assert_fits(&b, "the comprehension check, no JavaScript").await;
    comprehension(&b, ["When no image fits", "No"]).await;
    wait_stage(&b, "practice").await;
    assert_fits(&b, "practice, no JavaScript").await;
    click(&b, r#"button.option[data-option="B"]"#).await;
    let feedback = b.wait_css(".feedback").await;
    assert_eq!(feedback.attr("data-correct").await.unwrap().as_deref(), Some("false"));
    assert_eq!(b.text(".feedback p").await, "Not quite: you chose B; the right answer is None.");
    click(&b, r#"a[data-step="practice-next"]"#).await;
    wait_stage(&b, "working").await;
    for (k, option) in ["A", "none", "C"].into_iter().enumerate() {
        // Each click posts a form: wait for the next page rather than read the old one.
        wait_text(&b, ".take .progress span", &format!("Item {} of 3", k + 1)).await;
        assert_fits(&b, "a bundle item, no JavaScript").await;
        says_nothing_about_keys(&b, "a bundle item, no JavaScript").await;
        click(&b, &format!(r#"button.option[data-option="{option}"]"#)).await;
    }
    assert_eq!(b.text(".completion .code").await, code);
    assert_fits(&b, "the completion page, no JavaScript").await;
    stays_until_asked(&b, "the completion page, no JavaScript").await;
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert_eq!(b.text(".completion .code").await, code, "still there after five seconds");
    click(&b, ".completion a.go-on").await;
    assert_eq!(wait_path(&b, "/").await, Some(format!("cc={code}")));
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], 3, "the three clicks are stored, the practice answer is not");

    // Failing the comprehension check twice: the screen-out page, as served.
    b.client.delete_all_cookies().await.unwrap();
    b.client.goto(&join_url(&app, &token, "NOJS-OUT")).await.unwrap();
    click(&b, "input[name=consent]").await;
    click(&b, "form button[type=submit]").await;
    for _ in 0..2 {
        wait_stage(&b, "instructions").await;
        click(&b, r#"button[data-step="instructions"]"#).await;
        wait_stage(&b, "comprehension").await;
        comprehension(&b, ["Never", "Yes"]).await;
    }
    wait_stage(&b, "screened-out").await;
    assert_eq!(b.text(".screened-out .code").await, "SCREEN13");
    let text = b.text(".screened-out").await;
    assert!(!text.contains("being taken back"), "nothing takes the participant anywhere: {text}");
    stays_until_asked(&b, "the screen-out page, no JavaScript").await;
    click(&b, ".screened-out a.go-on").await;
    assert_eq!(wait_path(&b, "/").await, Some("out=SCREEN13".into()));
    b.close().await;
}

#[tokio::test]
async fn every_take_step_and_the_adjudication_page_pass_axe() {
    let axe = axe_source();
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = link_study(&app, &researcher, "axe take").await;
    let b = Browser::start().await;

    crate::crowd_flow::join(&b, &join_url(&app, &token, "AXE-1"), study).await;
    for stage in ["instructions", "comprehension", "practice", "feedback", "working"] {
        match stage {
            "feedback" => {
                b.wait_css(".feedback").await;
            }
            stage => wait_stage(&b, stage).await,
        }
        assert_eq!(title_names_h1(&b, stage).await, "axe take");
        axe_clean(&b, &axe, stage).await;
        match stage {
            "instructions" => click(&b, r#"button[data-step="instructions"]"#).await,
            "comprehension" => comprehension(&b, ["When no image fits", "No"]).await,
            "practice" => click(&b, r#"button.option[data-option="none"]"#).await,
            "feedback" => click(&b, r#"button[data-step="practice-next"]"#).await,
            _ => {}
        }
    }
    // The "return this study" question, opened.
    click(&b, r#"summary[data-step="ask-return"]"#).await;
    b.wait_css(r#"button[data-step="return"]"#).await;
    axe_clean(&b, &axe, "an item with the return question open").await;
    for (k, key) in ['a', 'n', 'b'].into_iter().enumerate() {
        wait_text(&b, ".take .progress span", &format!("Item {} of 3", k + 1)).await;
        b.press(key).await;
    }
    b.wait_css(".completion .code").await;
    assert_eq!(title_names_h1(&b, "completion").await, "axe take");
    axe_clean(&b, &axe, "completion").await;

    // A second participant fails the check twice: the screen-out page.
    b.client.delete_all_cookies().await.unwrap();
    crate::crowd_flow::join(&b, &join_url(&app, &token, "AXE-2"), study).await;
    for _ in 0..2 {
        click(&b, r#"button[data-step="instructions"]"#).await;
        wait_stage(&b, "comprehension").await;
        comprehension(&b, ["Never", "Yes"]).await;
    }
    wait_stage(&b, "screened-out").await;
    assert_eq!(title_names_h1(&b, "screen-out").await, "axe take");
    axe_clean(&b, &axe, "screen-out").await;

    // Open disputes on the adjudication page: checked, then one settled and reopened.
    let spec = Spec::new("axe pairs").seed(3).pairs(&[["annotator1", "annotator2"]], 2);
    let pairs = app.create_study_ok(&researcher, &spec).await;
    app.work_through("annotator1", pairs, |_| "A".into()).await;
    app.work_through("annotator2", pairs, |_| "none".into()).await;
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    let page = format!("/research/studies/{pairs}/adjudicate");
    check(&b, &app, &axe, &page, Ready::Showing("section.dispute")).await;
    assert_eq!(b.client.find_all(Css("section.dispute")).await.unwrap().len(), 2);
    click(&b, r#"section.dispute button[data-value="none"]"#).await;
    click(&b, "section.dispute button.confirm-settle").await;
    b.wait_css(r#"section.settled[data-value="none"] button.reopen"#).await;
    axe_clean(&b, &axe, "adjudication with a settled item").await;
    click(&b, "section.settled button.reopen").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while b.client.find_all(Css("section.dispute")).await.unwrap().len() != 2 {
        assert!(std::time::Instant::now() < deadline, "the reopened item did not come back to the queue");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(b.client.find(Css("section.settled")).await.is_err(), "nothing stays settled");
    let settled: Value = app.get(&researcher, &format!("/api/v1/studies/{pairs}/adjudications")).await;
    assert_eq!(settled, json!([]));
    b.close().await;
}

#[tokio::test]
async fn an_annotator_ranks_by_choosing_places_with_javascript_off() {
    let app = TestApp::spawn();
    let who = app.login("annotator1").await;
    let name = "Demo: ranking generated images";
    let id = app.studies(&who).await.into_iter().find(|s| s.name == name).expect("the demo ranking study").id;
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": true })).await;
    b.client.goto(&app.url(&format!("/annotate/{id}"))).await.unwrap();
    click(&b, "form.start button[type=submit]").await;
    let task = current_task(&b).await;
    let mut letters = Vec::new();
    for li in b.client.find_all(Css("li.rank-item")).await.unwrap() {
        letters.push(li.attr("data-option").await.unwrap().unwrap());
    }
    // The last image first: each image's place from its own list.
    let n = letters.len();
    for (i, letter) in letters.iter().enumerate() {
        let place = b.wait_css(&format!(r#"select[name="rank_{letter}"]"#)).await;
        place.select_by_value(&(n - i).to_string()).await.unwrap();
    }
    click(&b, "button.submit-order").await;
    wait_next_task(&b, &task).await;
    assert!(b.client.find(Css(r#"main[data-hydrated="true"]"#)).await.is_err(), "JavaScript really was off");
    let report: Value = app.get(&app.login("researcher").await, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!(report["answers"], 1, "the order is stored");
    b.close().await;
}

/// The consent step's box, once hydrated, is checked by the server as the
/// form post checks it: a page whose `required` was taken away (by hand, or
/// a browser that ignores it) records no consent without the tick.
#[tokio::test]
async fn the_hydrated_consent_step_needs_the_box_ticked() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (_, token) = create_link_study(&app, &researcher, &link_spec("tick", 3, &[])).await;
    let b = Browser::start().await;
    b.client.goto(&join_url(&app, &token, "TICK-1")).await.unwrap();
    // The join page's own box left unticked: the take page asks again.
    b.client
        .execute("document.querySelectorAll('[required]').forEach(e => e.removeAttribute('required'))", vec![])
        .await
        .unwrap();
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    wait_stage(&b, "consent").await;
    b.wait_hydrated().await;
    b.client
        .execute("document.querySelectorAll('[required]').forEach(e => e.removeAttribute('required'))", vec![])
        .await
        .unwrap();
    b.wait_css(r#"button[data-step="consent"]"#).await.click().await.unwrap();
    wait_text(&b, ".take p.error", "tick the consent box to take part").await;
    wait_stage(&b, "consent").await;
    b.wait_css("input[name=consent]").await.click().await.unwrap();
    b.wait_css(r#"button[data-step="consent"]"#).await.click().await.unwrap();
    wait_stage(&b, "instructions").await;
    b.close().await;
}
