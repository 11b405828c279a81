//! Every page in one browser session (issue 13): axe-core finds no serious
//! or critical violation and none of the moderate ones the issue lists, each
//! page's title names its one `h1`, and an annotator answers items by
//! clicking with JavaScript switched off. axe-core comes from
//! `scripts/setup.sh --browser` (npm, pinned, into target/tools), never from
//! the network at test time.
use crate::annotate_flow::current_task;
use crate::browser::Browser;
use crate::helpers::TestApp;
use fantoccini::Locator::Css;
use serde_json::{json, Value};

/// Moderate rules the issue found and that must stay fixed.
const ALSO_REFUSED: [&str; 2] = ["page-has-heading-one", "empty-table-header"];

pub(crate) fn axe_source() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("axe-core is missing ({}: {e}); install it with ./scripts/setup.sh --browser", path.display())
    })
}

/// Runs axe on the open page: the violations that count (id, impact, where).
pub(crate) async fn axe_violations(b: &Browser, axe: &str) -> Vec<Value> {
    b.client.execute(&format!("{axe}\n;return true;"), vec![]).await.unwrap();
    let run = r#"const done = arguments[arguments.length - 1];
        axe.run(document, { resultTypes: ['violations'] })
          .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact,
              nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ')) }))))
          .catch(e => done([{ id: 'axe-error', impact: 'critical', nodes: [String(e)] }]));"#;
    let found = b.client.execute_async(run, vec![]).await.unwrap();
    let found = found.as_array().expect("a list of violations").clone();
    found
        .into_iter()
        .filter(|v| {
            matches!(v["impact"].as_str(), Some("serious" | "critical"))
                || ALSO_REFUSED.contains(&v["id"].as_str().unwrap_or_default())
        })
        .collect()
}

pub(crate) async fn axe_clean(b: &Browser, axe: &str, page: &str) {
    let bad = axe_violations(b, axe).await;
    assert!(bad.is_empty(), "axe-core on {page}: {bad:#?}");
}

/// The page's one `h1`, and a title that names it.
pub(crate) async fn title_names_h1(b: &Browser, page: &str) -> String {
    let headings = b.client.find_all(Css("h1")).await.unwrap();
    assert_eq!(headings.len(), 1, "{page} has {} h1", headings.len());
    let h1 = headings[0].text().await.unwrap();
    let title = b.client.title().await.unwrap();
    let want = if h1 == "hardneg" { h1.clone() } else { format!("{h1} — hardneg") };
    assert_eq!(title, want, "the title of {page}");
    h1
}

/// When a page is ready to be checked.
pub(crate) enum Ready<'a> {
    Hydrated,
    /// Hydrated, and showing this element.
    Showing(&'a str),
    /// A page without the app (the guard's error page): showing this element.
    Static(&'a str),
}

/// Opens `path`, waits until it is ready, then checks headings, title and axe.
pub(crate) async fn check(b: &Browser, app: &TestApp, axe: &str, path: &str, ready: Ready<'_>) -> String {
    b.client.goto(&app.url(path)).await.unwrap();
    if !matches!(ready, Ready::Static(_)) {
        b.wait_hydrated().await;
    }
    if let Ready::Showing(css) | Ready::Static(css) = ready {
        b.wait_css(css).await;
    }
    let h1 = title_names_h1(b, path).await;
    axe_clean(b, axe, path).await;
    h1
}

#[tokio::test]
async fn every_page_reads_right_and_the_survey_works_without_javascript() {
    let axe = axe_source();
    let app = TestApp::spawn();
    let annotator = app.login("annotator1").await;
    let study = app.studies(&annotator).await.into_iter().next().expect("the demo study");
    let b = Browser::start().await;

    // The harness itself: axe does report an image without a text alternative.
    b.client.goto(&app.url("/no-such-page")).await.unwrap();
    b.wait_hydrated().await;
    b.client.execute("document.querySelector('main').append(document.createElement('img'));", vec![]).await.unwrap();
    let found = axe_violations(&b, &axe).await;
    assert!(found.iter().any(|v| v["id"] == "image-alt"), "axe-core missed an img without alt: {found:?}");

    check(&b, &app, &axe, "/", Ready::Hydrated).await;
    check(&b, &app, &axe, "/login", Ready::Hydrated).await;
    assert_eq!(check(&b, &app, &axe, "/no-such-page", Ready::Hydrated).await, "Page not found");

    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    check(&b, &app, &axe, "/annotate", Ready::Hydrated).await;
    let h1 = check(&b, &app, &axe, &format!("/annotate/{}", study.id), Ready::Showing("section.survey")).await;
    assert_eq!(h1, study.name, "the survey page names its study");
    b.wait_hydrated().await;
    let hint = b.wait_css("button.option kbd").await;
    assert!(hint.is_displayed().await.unwrap(), "key hints show once hydrated");
    b.wait_css(r#"a.back[href="/annotate"]"#).await;
    // After a click the new item has the focus, not an option of it.
    let task = current_task(&b).await;
    b.wait_css(r#"button.option[data-option="A"]"#).await.click().await.unwrap();
    crate::annotate_flow::wait_next_task(&b, &task).await;
    let focused = b.client.execute("return document.activeElement.matches('section.survey');", vec![]).await.unwrap();
    assert_eq!(focused, Value::Bool(true), "the new item took the focus");
    check(&b, &app, &axe, "/research", Ready::Static(".error-page[data-status='403']")).await;

    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    for path in ["/research", "/research/compare", "/research/compare?dataset=demo", "/research/import"] {
        check(&b, &app, &axe, path, Ready::Hydrated).await;
    }
    check(&b, &app, &axe, &format!("/research/studies/{}/adjudicate", study.id), Ready::Hydrated).await;
    for area in ["/research/compare", "/research/import"] {
        b.wait_css(&format!(r#"header nav a[href="{area}"]"#)).await;
    }

    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "admin", &app.password("admin")).await;
    check(&b, &app, &axe, "/admin", Ready::Hydrated).await;

    // JavaScript off: annotator2 starts the study and answers three items by clicking.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "annotator2", &app.password("annotator2")).await;
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": true })).await;
    b.client.goto(&app.url("/annotate")).await.unwrap();
    b.wait_css("ul.studies a").await.click().await.unwrap();
    b.wait_css("form.start button[type=submit]").await.click().await.unwrap();
    let mut task = current_task(&b).await;
    let shown = b.text("main").await.to_lowercase();
    assert!(!shown.contains("keys"), "without JavaScript nothing mentions keys: {shown}");
    let announced = b.client.find_all(Css("[aria-keyshortcuts]")).await.unwrap();
    assert!(announced.is_empty(), "nor announces a key that does nothing");
    for (k, option) in ["B", "none", "C"].into_iter().enumerate() {
        b.wait_css(&format!(r#"button.option[data-option="{option}"]"#)).await.click().await.unwrap();
        task = crate::annotate_flow::wait_next_task(&b, &task).await;
        assert!(b.text(".progress span").await.starts_with(&format!("{} / ", k + 1)));
    }
    let hydrated = b.client.find(Css(r#"main[data-hydrated="true"]"#)).await;
    assert!(hydrated.is_err(), "JavaScript really was off");
    b.cdp("Emulation.setScriptExecutionDisabled", json!({ "value": false })).await;
    let who = app.login("annotator2").await;
    let done = app.studies(&who).await.into_iter().find(|s| s.id == study.id).unwrap().progress.unwrap().done;
    assert_eq!(done, 3, "the three clicks are stored");
    b.close().await;
}
