//! The researcher's page while a link study runs (issue 53), in real
//! Chromium: loaded once, it follows participants who arrive over HTTP (the
//! link panel's places, the dashboard, the card's counted answers, progress
//! per annotator and a newly flagged participant with its Discard button)
//! without a reload, all from one polled read; its figures say what they
//! count and its charts name their axes. And the demo's research page at
//! 1,280 px scrolls sideways nowhere but inside a wide table's card.
use crate::browser::Browser;
use crate::crowd_flow::wait_text;
use crate::crowd_kit::{answer_n, arrive, create_link_study, link_spec, start};
use crate::helpers::TestApp;
use crate::pages::{axe_clean, axe_source};
use serde_json::{json, Value};

#[tokio::test]
async fn the_research_page_follows_arrivals_and_a_new_flag_without_a_reload() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) =
        create_link_study(&app, &researcher, &link_spec("live e2e", 3, &["min_seconds_per_item = 2"])).await;
    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    r.goto(&app.url("/research")).await;
    let card = format!(r#"section.study[data-study="{study}"]"#);
    let at = |css: &str| format!("{card} {css}");
    assert_eq!(r.text(&at("td.participants")).await, "0");
    assert_eq!(r.text(&at("span.answers")).await, "0");
    r.client.execute("window.loadedOnce = true; return null;", vec![]).await.unwrap();

    // Over HTTP: one participant finishes too fast (1.5 s an item, 2 s wanted), another starts.
    let hasty = arrive(&app, &token, study, "LIVE-1").await;
    start(&app, &hasty, study).await;
    assert_eq!(answer_n(&app, &hasty, study, 3, "A").await, 3);
    let working = arrive(&app, &token, study, "LIVE-2").await;
    start(&app, &working, study).await;
    assert_eq!(answer_n(&app, &working, study, 1, "B").await, 1);

    let first = format!(r#"tr[data-annotator="p{study}-1"] td.done"#);
    let second = format!(r#"tr[data-annotator="p{study}-2"] td.done"#);
    for (css, want) in [
        ("td.participants", "2"),
        ("td.leased", "1"),
        ("td.completed", "1"),
        (r#"td[data-figure="started"]"#, "2"),
        (r#"td[data-figure="leased"]"#, "1"),
        ("span.answers", "4"),
        (r#"td[data-figure="answers"]"#, "4"),
        (first.as_str(), "3"),
        (second.as_str(), "1"),
    ] {
        wait_text(&r, &at(css), want).await;
    }
    let flagged = at(r#"table.flagged tr[data-participant="1"]"#);
    assert!(r.text(&format!("{flagged} td.flags")).await.contains("too_fast"), "the new flag shows");
    assert_eq!(r.text(&at("table.flagged thead th:last-child")).await, "Discard");

    // Discarded: the copy stops counting everywhere on the card at once.
    r.wait_css(&format!("{flagged} button.discard")).await.click().await.unwrap();
    wait_text(&r, &format!("{flagged} button.discard"), "Confirm discard").await;
    assert_eq!(r.text(&at("td.completed")).await, "1", "one click only asks");
    r.wait_css(&format!("{flagged} button.discard.armed")).await.click().await.unwrap();
    for (css, want) in [("td.not-counted", "1"), ("td.completed", "0"), ("span.answers", "1")] {
        wait_text(&r, &at(css), want).await;
    }
    // The pressed button went with its row's redraw: the focus is on what happened.
    wait_text(&r, &at("p.discarded"), "Discarded: the place is free again.").await;
    crate::crowd_flow::wait_focus(&r, "p.discarded", "by the table, not at the page's top").await;
    // Every stored answer stays in the dashboard's count; the header counts those that count.
    assert_eq!(r.text(&at(r#"td[data-figure="answers"]"#)).await, "4");
    let header = r.text(&at("> p")).await;
    assert!(header.contains("1 counted answer") && !header.contains("1 counted answers"), "{header}");
    let tip = r.wait_css(&at("td.not-counted")).await.attr("title").await.unwrap();
    assert_eq!(tip.as_deref(), Some(hardneg::ui::link_panel::NOT_COUNTED));
    assert!(tip.unwrap().contains("screened out by attention checks"), "what it counts");
    let kept = r.client.execute("return window.loadedOnce === true;", vec![]).await.unwrap();
    assert_eq!(kept, Value::Bool(true), "the page was reloaded");

    // The charts name their axes and units.
    for (chart, x, y) in
        [("arrivals", "minutes since the first arrival", "people"), ("time-per-item", "seconds per item", "answers")]
    {
        assert_eq!(r.text(&at(&format!("svg.{chart} text.x-title"))).await, x);
        assert_eq!(r.text(&at(&format!("svg.{chart} text.y-title"))).await, y);
    }
    r.close().await;
}

#[tokio::test]
async fn the_demo_research_pages_scroll_sideways_only_inside_a_wide_table_on_a_desktop_and_a_phone() {
    let app = TestApp::spawn();
    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    let metrics = json!({ "width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false });
    r.cdp("Emulation.setDeviceMetricsOverride", metrics).await;
    r.goto(&app.url("/research")).await;
    r.wait_css("table.distribution").await;
    r.wait_css("section.dataset table.funnel").await;
    let js = "const d = document.documentElement;
        const wide = [...document.querySelectorAll('table.distribution')].map(t => t.scrollWidth - t.clientWidth);
        return [window.innerWidth, d.scrollWidth, d.clientWidth, Math.max(...wide)];";
    let v = r.client.execute(js, vec![]).await.unwrap();
    let n = |i: usize| v[i].as_i64().unwrap();
    assert_eq!(n(0), 1280, "the window is 1,280 px wide");
    assert!(n(1) <= n(2), "the page scrolls sideways: {} px in {} px", n(1), n(2));
    assert!(n(3) > 0, "the widest table is wider than its card and scrolls inside it ({v})");
    axe_clean(&r, &axe_source(), "/research at 1,280 px").await;

    // On a phone: the link's URLs wrap, the charts shrink, the wide tables scroll inside
    // their card (each focusable, so keys scroll it); the comparison's tables too.
    let phone = json!({ "width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": true });
    r.cdp("Emulation.setDeviceMetricsOverride", phone).await;
    // The navigation's link names no dataset: the first one's comparison shows (audit AS: nothing did).
    for (path, wait) in [("/research", "svg.chart.arrivals"), ("/research/compare", "table.scores")] {
        r.goto(&app.url(path)).await;
        r.wait_css(wait).await;
        let js = "const d = document.documentElement; return [window.innerWidth, d.scrollWidth, d.clientWidth];";
        let v = r.client.execute(js, vec![]).await.unwrap();
        assert_eq!(
            v[0].as_i64(),
            Some(390),
            "{path}: the window is 390 px wide (wider: the page was zoomed out to fit)"
        );
        assert!(v[1].as_i64() <= v[2].as_i64(), "{path} scrolls sideways on a phone: {v}");
        // A wide table's caption wraps inside the card and stays in view while the
        // table scrolls (audit AS: it scrolled off, or ran past the card's edge).
        let js = "return [...document.querySelectorAll('table.data caption')].flatMap(c => {
            const t = c.closest('table');
            if (t.scrollWidth <= t.clientWidth + 2) return [];
            t.scrollLeft = t.scrollWidth;
            const r = document.createRange(); r.selectNodeContents(c);
            const text = r.getBoundingClientRect(), box = t.getBoundingClientRect();
            t.scrollLeft = 0;
            return [[c.textContent.slice(0, 40), Math.round(text.left - box.left), Math.round(box.right - text.right)]];
        });";
        let captions = r.client.execute(js, vec![]).await.unwrap();
        let captions = captions.as_array().unwrap();
        assert!(!captions.is_empty(), "{path}: no table is wider than a phone");
        for c in captions {
            assert!(
                c[1].as_i64() >= Some(0) && c[2].as_i64() >= Some(0),
                "{path}: a caption out of view on a phone: {c}"
            );
        }
        axe_clean(&r, &axe_source(), &format!("{path} at 390 px")).await;
    }
    r.close().await;
}

/// The card's pipeline line and adaptive panel follow the live poll too
/// (audit S: both stayed as the page loaded, "0 items settled · 12 waiting"
/// beside a dashboard whose places were all done).
#[tokio::test]
async fn the_pipeline_line_and_the_adaptive_panel_follow_new_answers_without_a_reload() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let single = link_spec("single copies", 3, &["copies = 1"]);
    let (fixed, fixed_token) = create_link_study(&app, &researcher, &single).await;
    let adaptive =
        format!("{}[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n", link_spec("adaptive live", 3, &[]));
    let (adapt, adapt_token) = create_link_study(&app, &researcher, &adaptive).await;
    let r = Browser::start().await;
    r.login(&app.base, "researcher", &app.password("researcher")).await;
    r.goto(&app.url("/research")).await;
    let pipeline = format!(r#"section.study[data-study="{fixed}"] p.pipeline"#);
    let spent = format!(r#"section.study[data-study="{adapt}"] .adaptive-panel span.answers-spent"#);
    assert!(r.text(&pipeline).await.starts_with("0 items settled"), "{}", r.text(&pipeline).await);
    assert_eq!(r.text(&spent).await, "0");
    r.client.execute("window.loadedOnce = true; return null;", vec![]).await.unwrap();

    // One copy per item: each answer settles its item.
    let p = arrive(&app, &fixed_token, fixed, "PIPE-1").await;
    start(&app, &p, fixed).await;
    assert_eq!(answer_n(&app, &p, fixed, 3, "A").await, 3);
    let q = arrive(&app, &adapt_token, adapt, "ADAPT-1").await;
    start(&app, &q, adapt).await;
    assert_eq!(answer_n(&app, &q, adapt, 2, "A").await, 2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !r.text(&pipeline).await.starts_with("3 items settled") {
        assert!(std::time::Instant::now() < deadline, "the line stayed: {}", r.text(&pipeline).await);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    wait_text(&r, &spent, "2").await;
    let kept = r.client.execute("return window.loadedOnce === true;", vec![]).await.unwrap();
    assert_eq!(kept, Value::Bool(true), "the page was reloaded");
    r.close().await;
}
