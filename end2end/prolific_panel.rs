//! The research page's Prolific panel (docs/prolific.md) in real Chromium,
//! against the fake Prolific, behind a (pretend) TLS proxy: a researcher
//! makes the draft and sees Prolific's cost and the study URL on the public
//! origin, publishes with a click after a reload, and after a participant
//! arrives on Prolific, syncs and sees Prolific's counts beside hardneg's
//! places without a reload; a study over its cap says why it cannot go out.
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

/// The origin a TLS proxy would serve hardneg under: the study URL must start with it.
const PUBLIC: &str = "https://hardneg.example.org";

#[tokio::test]
async fn a_researcher_publishes_and_syncs_from_the_research_page() {
    let fake = FakeProlific::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let env = [
        ("HARDNEG_PROLIFIC_TOKEN", Path::new(&fake.token)),
        ("HARDNEG_PROLIFIC_URL", Path::new(&fake.base)),
        ("HARDNEG_PROLIFIC_SYNC_SECS", Path::new("3600")),
    ];
    let app = TestApp::spawn_with_env(tmp.path(), &["--public-origin", PUBLIC], &env);
    let researcher = app.login("researcher").await;
    let mut ids = Vec::new();
    let specs = [
        SPEC.to_string(),
        SPEC.replace("panel e2e", "too dear").replace("40.00", "5.00"),
        // 9.00 by hardneg's figure without a fee, 12.60 by Prolific's: refused only once the draft shows it.
        SPEC.replace("panel e2e", "dear on Prolific").replace("40.00", "10.00"),
    ];
    for spec in specs {
        let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
        assert_eq!(res.status(), 201);
        ids.push(res.json::<Value>().await.unwrap()["id"].as_i64().unwrap());
    }
    let (study, dear, dearer) = (ids[0], ids[1], ids[2]);

    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    r.goto(&app.url("/research")).await;
    r.wait_hydrated().await;
    let panel = format!(r#"section.study[data-study="{study}"] .prolific-panel"#);
    // Before publishing: hardneg's figures (9 bundles + 3 extra places at 0.75).
    let head = r.text(&format!("{panel} > p")).await;
    assert!(head.contains("Reward 0.75") && head.contains("12 places") && head.contains("cap 40.00"), "{head}");
    assert!(head.contains("would commit"), "a draft commits nothing yet: {head}");
    // A study over its cap shows its panel with why, and no button.
    let dear_panel = format!(r#"section.study[data-study="{dear}"] .prolific-panel"#);
    let why = r.text(&format!("{dear_panel} p.problem")).await;
    assert!(why.contains("over the budget cap of 5.00"), "{why}");
    assert!(r.client.find_all(fantoccini::Locator::Css(&format!("{dear_panel} button"))).await.unwrap().is_empty());

    // The third one's draft costs more than its cap: it says so and offers nothing that would fail.
    let third = format!(r#"section.study[data-study="{dearer}"] .prolific-panel"#);
    assert!(r.text(&format!("{third} > p")).await.contains("estimated 9.00 before Prolific's fee"));
    button(&r, &third, "Make the draft and show its cost").await.click().await.unwrap();
    let refused = said_soon(&r, &format!("{third} p.said"), "").await;
    let why = r.text(&format!("{third} p.problem")).await;
    assert!(why.contains("Prolific's cost of the draft, 12.60, is over the budget cap of 10.00"), "{why} ({refused})");
    assert!(r.client.find_all(fantoccini::Locator::Css(&format!("{third} button"))).await.unwrap().is_empty());

    let said = format!("{panel} p.said");
    button(&r, &panel, "Make the draft and show its cost").await.click().await.unwrap();
    let draft = said_soon(&r, &said, "Draft ").await;
    assert!(draft.contains("12 places at 0.75; Prolific's cost 12.60 (fees and tax included)"), "{draft}");
    assert!(
        draft.contains(&format!("participants go to {PUBLIC}/join/")),
        "the public origin, not the browser's: {draft}"
    );
    assert_eq!(fake.state().await["studies"][0]["status"], "UNPUBLISHED");
    // The draft survives a reload, and so does its Publish button.
    r.goto(&app.url("/research")).await;
    assert!(r.text(&format!("{panel} h3")).await.contains("UNPUBLISHED"));
    button(&r, &panel, "Publish on Prolific").await.click().await.unwrap();
    let published = said_soon(&r, &said, "Published:").await;
    assert!(published.contains(&format!("is ACTIVE; Prolific sends participants to {PUBLIC}/join/")), "{published}");
    let st = fake.state().await;
    assert_eq!(
        st["studies"].as_array().unwrap().len(),
        2,
        "this study's draft was found again, not made twice; beside it the draft over its cap; none for the one over it by hardneg's figure"
    );
    let remote = st["studies"].as_array().unwrap().iter().find(|s| s["status"] == "ACTIVE").unwrap().clone();
    assert!(remote["external_study_url"].as_str().unwrap().starts_with(&format!("{PUBLIC}/join/")), "{remote}");
    let pid = remote["id"].as_str().unwrap().to_string();

    // A participant takes a place on Prolific; a click syncs and the panel redraws without a reload.
    let arrival = fake.arrive(&pid, None).await;
    r.client.execute("window.notReloaded = true; return true;", vec![]).await.unwrap();
    button_soon(&r, &panel, "Sync now").await.click().await.unwrap();
    wait_text(&r, &said, "Synced 1 submission (1 page); 0 places freed").await;
    let caption = r.text(&format!("{panel} table.prolific-counts caption")).await;
    assert!(caption.contains("9 wanted: 0 completed, 0 working, 9 free"), "{caption}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while active_count(&r, &panel).await.as_deref() != Some("1") {
        assert!(std::time::Instant::now() < deadline, "the counts never showed the arrival");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Not through the join link yet: a mismatch, named by what Prolific's pages find it by.
    let row = r.text(&format!("{panel} table.mismatches tbody tr")).await;
    let sub = format!("submission {} (ACTIVE on Prolific)", arrival.submission_id);
    assert!(row.contains("never arrived") && row.contains(&sub), "{row}");
    let kept = r.client.execute("return window.notReloaded === true;", vec![]).await.unwrap();
    assert_eq!(kept, Value::Bool(true), "the page was reloaded");
    r.close().await;
}

/// The ACTIVE column of Prolific's counts, once shown.
async fn active_count(r: &Browser, panel: &str) -> Option<String> {
    let heads = r.client.find_all(fantoccini::Locator::Css(&format!("{panel} table.prolific-counts th"))).await.ok()?;
    let cells = r.client.find_all(fantoccini::Locator::Css(&format!("{panel} table.prolific-counts td"))).await.ok()?;
    for (h, c) in heads.iter().zip(&cells) {
        if h.text().await.ok()? == "ACTIVE" {
            return c.text().await.ok();
        }
    }
    None
}

/// [`button`] once the panel shows it (within 20 s).
async fn button_soon(r: &Browser, panel: &str, label: &str) -> fantoccini::elements::Element {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(b) = find_button(r, panel, label).await {
            return b;
        }
        assert!(std::time::Instant::now() < deadline, "no button {label:?} in {panel}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
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
    find_button(r, panel, label).await.unwrap_or_else(|| panic!("no button {label:?} in {panel}"))
}

async fn find_button(r: &Browser, panel: &str, label: &str) -> Option<fantoccini::elements::Element> {
    let buttons = r.client.find_all(fantoccini::Locator::Css(&format!("{panel} button"))).await.ok()?;
    for b in buttons {
        if b.text().await.ok()? == label {
            return Some(b);
        }
    }
    None
}
