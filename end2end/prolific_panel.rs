//! The research page's Prolific panel (docs/prolific.md) in real Chromium,
//! against the fake Prolific: a researcher makes the draft and sees
//! Prolific's cost, publishes with a click, and after a participant arrives
//! on Prolific, syncs and sees Prolific's counts beside hardneg's places.
use crate::browser::Browser;
use crate::crowd_flow::wait_text;
use crate::helpers::TestApp;
use crate::prolific_fake::FakeProlific;
use serde_json::Value;
use std::path::Path;

const SPEC: &str = r#"name = "panel e2e"
kind = "four_image"
dataset = "demo"
seed = 3
access = "link"
[link]
bundle_size = 7
consent = "I agree to take part."
[prolific]
estimated_minutes = 5
hourly_rate = 9.0
budget_cap = "40.00"
"#;

#[tokio::test]
async fn a_researcher_publishes_and_syncs_from_the_research_page() {
    let fake = FakeProlific::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let env = [
        ("HARDNEG_PROLIFIC_TOKEN", Path::new(&fake.token)),
        ("HARDNEG_PROLIFIC_URL", Path::new(&fake.base)),
        ("HARDNEG_PROLIFIC_SYNC_SECS", Path::new("3600")),
    ];
    let app = TestApp::spawn_with_env(tmp.path(), &[], &env);
    let researcher = app.login("researcher").await;
    let res = researcher.post(app.url("/api/v1/studies")).body(SPEC).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();

    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    r.goto(&app.url("/research")).await;
    r.wait_hydrated().await;
    let panel = format!(r#"section.study[data-study="{study}"] .prolific-panel"#);
    // Before publishing: hardneg's figures (9 bundles + 3 extra places at 0.75).
    let head = r.text(&format!("{panel} > p")).await;
    assert!(head.contains("Reward 0.75") && head.contains("12 places") && head.contains("cap 40.00"), "{head}");

    let said = format!("{panel} p.said");
    button(&r, &panel, "Make the draft and show its cost").await.click().await.unwrap();
    let draft = said_soon(&r, &said, "Draft ").await;
    assert!(
        draft.ends_with("12 places at 0.75; Prolific's cost 12.60 (fees and tax included). Publish to open it."),
        "{draft}"
    );
    assert_eq!(fake.state().await["studies"][0]["status"], "UNPUBLISHED");
    button(&r, &panel, "Publish on Prolific").await.click().await.unwrap();
    let published = said_soon(&r, &said, "Published:").await;
    assert!(published.ends_with("is ACTIVE"), "{published}");
    let st = fake.state().await;
    assert_eq!(st["studies"].as_array().unwrap().len(), 1, "the draft was found again, not made twice");
    let pid = st["studies"][0]["id"].as_str().unwrap().to_string();

    // A participant takes a place on Prolific; the page, reloaded, syncs on a click.
    fake.arrive(&pid, None).await;
    r.goto(&app.url("/research")).await;
    r.wait_hydrated().await;
    button(&r, &panel, "Sync now").await.click().await.unwrap();
    wait_text(&r, &said, "Synced 1 submissions (1 pages); 0 places freed").await;
    r.goto(&app.url("/research")).await;
    let caption = r.text(&format!("{panel} table.prolific-counts caption")).await;
    assert!(caption.contains("9 wanted: 0 completed, 0 working, 9 free"), "{caption}");
    let heads =
        r.client.find_all(fantoccini::Locator::Css(&format!("{panel} table.prolific-counts th"))).await.unwrap();
    let cells =
        r.client.find_all(fantoccini::Locator::Css(&format!("{panel} table.prolific-counts td"))).await.unwrap();
    let mut active = None;
    for (h, c) in heads.iter().zip(&cells) {
        if h.text().await.unwrap() == "ACTIVE" {
            active = Some(c.text().await.unwrap());
        }
    }
    assert_eq!(active.as_deref(), Some("1"));
    r.close().await;
}

/// The panel's message once it starts with `start` (within 20 s).
async fn said_soon(r: &Browser, css: &str, start: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let now = r.text(css).await;
        if now.starts_with(start) {
            return now;
        }
        assert!(std::time::Instant::now() < deadline, "{css} shows {now:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The panel's button labelled `label`.
async fn button(r: &Browser, panel: &str, label: &str) -> fantoccini::elements::Element {
    let buttons = r.client.find_all(fantoccini::Locator::Css(&format!("{panel} button"))).await.unwrap();
    for b in buttons {
        if b.text().await.unwrap() == label {
            return b;
        }
    }
    panic!("no button {label:?} in {panel}");
}
