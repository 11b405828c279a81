//! What a cold survey page transfers on an emulated 5 Mbit/s link, checked
//! against issue 13's 1 MB (the site is built as it ships, see
//! scripts/build-site.sh), and when its keys start working, printed (a
//! figure, not a check: it depends on the machine's load; see
//! docs/performance.md); the same for the participant's `/take` page.
use crate::browser::Browser;
use crate::crowd_flow::{join, join_url};
use crate::crowd_kit::{create_link_study, link_spec};
use crate::helpers::TestApp;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn cold_survey_page_weight_and_time_to_keys_at_5_mbit() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    let survey = b.wait_css("ul.studies a").await.attr("href").await.unwrap().expect("a study link");
    let survey = format!("{}{survey}", app.base);

    measure(&b, &survey, "survey").await;
    // The participant's page: joined once, then opened cold.
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("weight", 3, &[])).await;
    b.client.delete_all_cookies().await.unwrap();
    join(&b, &join_url(&app, &token, "WEIGHT-1"), study).await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    b.wait_css(r#"section.take[data-stage="working"]"#).await;
    measure(&b, &app.url(&format!("/take/{study}")), "take").await;
    // The keys really work: one press answers and the next item opens.
    let before = b.wait_css("section.survey").await.attr("data-task").await.unwrap();
    b.press('1').await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while b.wait_css("section.survey").await.attr("data-task").await.unwrap() == before {
        assert!(std::time::Instant::now() < deadline, "a key press did not answer");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    b.close().await;
}

/// Opens `url` cold (empty cache), then warm, on an emulated 5 Mbit/s link:
/// the bytes transferred and when the keys start working, printed.
async fn measure(b: &Browser, url: &str, page: &str) {
    // 5 Mbit/s both ways and 40 ms round trips, with an empty cache.
    let bytes_per_s = 5_000_000.0 / 8.0;
    b.cdp("Network.enable", json!({})).await;
    let link =
        json!({ "offline": false, "latency": 40, "downloadThroughput": bytes_per_s, "uploadThroughput": bytes_per_s });
    b.cdp("Network.emulateNetworkConditions", link).await;
    for (label, clear) in [("cold", true), ("warm", false)] {
        if clear {
            b.cdp("Network.clearBrowserCache", json!({})).await;
        }
        b.client.goto("about:blank").await.unwrap();
        b.client.goto(url).await.unwrap();
        // Polled without pauses: each round trip to the page takes a few ms.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let keys_ms = loop {
            let t = b
                .client
                .execute(
                    "return document.querySelector('main[data-hydrated=\"true\"]') ? performance.now() : null",
                    vec![],
                )
                .await
                .unwrap();
            if let Some(ms) = t.as_f64() {
                break ms;
            }
            assert!(std::time::Instant::now() < deadline, "the {page} page never hydrated");
        };
        // The inline script answers keys once the options are parsed.
        let early = b
            .client
            .execute(
                "return document.querySelector('section.survey form.options button[type=\"submit\"][data-keys]')
                   ? performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd : null",
                vec![],
            )
            .await
            .unwrap();
        let sizes = b
            .client
            .execute(
                "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
                   .map(e => [e.name, e.transferSize, e.encodedBodySize, e.decodedBodySize]);",
                vec![],
            )
            .await
            .unwrap();
        let entries = sizes.as_array().unwrap();
        let total: f64 = entries.iter().map(|e| e[1].as_f64().unwrap_or(0.0)).sum();
        let early = early.as_f64().map_or("no choice options".into(), |ms| format!("{ms:.0} ms"));
        println!("{page}, {label}: {total:.0} bytes transferred, keys answer by form (inline script) after {early}, hydrated (keys in place) after {keys_ms:.0} ms");
        for e in entries {
            println!("  {:>9} B on the wire ({:>9} B decoded)  {}", e[1], e[3], e[0]);
        }
        if clear {
            assert!(
                total <= 1_000_000.0,
                "a cold {page} page transfers {total} bytes, over 1 MB (a debug client? see scripts/build-site.sh)"
            );
        }
    }
}
