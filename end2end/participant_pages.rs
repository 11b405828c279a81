//! What a participant meets first (issue 33), on the release site that
//! scripts/build-site.sh builds (content-hashed file names): every page of
//! the link flow (each page `/join` can answer, the `/take` steps, the
//! completion page) and of the logged-in annotator's flow links only files
//! that answer 200, and is styled by the app's stylesheet, at 390×844. The
//! demo's link study takes a newcomer who opens the link `hardneg study
//! link` prints.
use crate::browser::Browser;
use crate::crowd_flow::{assert_fits, join_url, wait_stage, wait_text};
use crate::crowd_kit::{arrive, create_link_study, link_spec, post_ok};
use crate::helpers::{text, TestApp};
use fantoccini::Locator::Css;
use serde_json::{json, Value};

/// Every stylesheet, script and preloaded file the open page names (links,
/// `src`, and the `/pkg/` files an inline module imports) answers 200 over
/// HTTP, there is a stylesheet, and the body has the app's font, not the
/// browser's default.
pub(crate) async fn assert_assets(b: &Browser, what: &str) {
    let js = r#"const linked = [...document.querySelectorAll(
            'link[rel=stylesheet], link[rel=modulepreload], link[rel=preload], script[src]')]
          .map(e => e.href || e.src);
        const imported = [...document.scripts].flatMap(s =>
          [...s.textContent.matchAll(/["'](\/pkg\/[^"']+)["']/g)].map(m => new URL(m[1], location.href).href));
        return [linked.concat(imported),
                document.querySelectorAll('link[rel=stylesheet]').length,
                getComputedStyle(document.body).fontFamily];"#;
    let v = b.client.execute(js, vec![]).await.unwrap();
    let urls: Vec<String> = serde_json::from_value(v[0].clone()).unwrap();
    assert!(v[1].as_u64().unwrap() >= 1, "{what}: no stylesheet");
    let http = reqwest::Client::new();
    for url in &urls {
        let status = http.get(url).send().await.unwrap().status();
        assert_eq!(status, 200, "{what} links {url}, which answers {status}");
    }
    let font = v[2].as_str().unwrap_or_default();
    assert!(font.starts_with("system-ui"), "{what}: the body's font is {font:?}, not the app's");
}

/// Opens a `/join` page (no app on it: nothing to hydrate), checks its
/// files, style and fit on the phone; its heading.
async fn join_page(b: &Browser, url: &str, what: &str) -> String {
    b.client.goto(url).await.unwrap();
    let h1 = b.text(".join h1").await;
    assert_assets(b, what).await;
    assert_fits(b, what).await;
    h1
}

/// Past the instructions and the one comprehension question, right or wrong.
async fn through_check(app: &TestApp, client: &reqwest::Client, study: i64, right: bool) -> Value {
    post_ok(app, client, &format!("/api/v1/take/{study}/instructions")).await;
    let answers = json!({ "answers": [usize::from(right)] });
    let res = client.post(app.url(&format!("/api/v1/take/{study}/comprehension"))).json(&answers).send().await;
    res.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn every_participant_and_annotator_page_links_files_that_exist_and_is_styled() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let lines = [
        format!("completion_url = \"{}/?cc={{code}}\"", app.base),
        format!("screen_out_url = \"{}/?out={{code}}\"", app.base),
        "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]".into(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (study, token) = create_link_study(&app, &researcher, &link_spec("pages", 3, &lines)).await;
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();

    let unknown = app.url(&format!("/join/{}?PROLIFIC_PID=P1", "0".repeat(32)));
    assert_eq!(join_page(&b, &unknown, "link not found").await, "Link not found");
    assert_eq!(join_page(&b, &app.url(&format!("/join/{token}")), "needs id").await, "Participant id missing");
    let bad = app.url(&format!("/join/{token}?PROLIFIC_PID=has%20space"));
    assert_eq!(join_page(&b, &bad, "malformed id").await, "Cannot join");
    assert_eq!(join_page(&b, &join_url(&app, &token, "PAGES-1"), "consent").await, "pages");

    // The link flow's pages in the app, hydrated.
    b.wait_css("input[name=consent]").await.click().await.unwrap();
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    wait_stage(&b, "instructions").await;
    b.wait_hydrated().await;
    assert_assets(&b, "instructions").await;
    b.wait_css(r#"button[data-step="instructions"]"#).await.click().await.unwrap();
    wait_stage(&b, "comprehension").await;
    assert_assets(&b, "comprehension").await;
    b.wait_css(r#"input[data-option="When no image fits"]"#).await.click().await.unwrap();
    b.wait_css(r#"button[data-step="comprehension"]"#).await.click().await.unwrap();
    wait_stage(&b, "working").await;
    assert_assets(&b, "an item").await;
    assert!(b.wait_css("button.option kbd").await.is_displayed().await.unwrap(), "key hints show once hydrated");
    b.press('a').await;
    wait_text(&b, ".take .progress span", "Item 2 of 3").await;

    // The same PID from a fresh session: welcome back, then on to the completion page.
    b.client.delete_all_cookies().await.unwrap();
    assert_eq!(join_page(&b, &join_url(&app, &token, "PAGES-1"), "welcome back").await, "Welcome back");
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    wait_stage(&b, "working").await;
    b.wait_hydrated().await;
    for (k, key) in [(2, 'n'), (3, 'b')] {
        wait_text(&b, ".take .progress span", &format!("Item {k} of 3")).await;
        b.press(key).await;
    }
    b.wait_css(".completion .code").await;
    assert_assets(&b, "completion").await;
    b.wait_css(".completion a.button").await.click().await.unwrap();
    let home = crate::crowd_flow::wait_path(&b, "/").await;
    assert!(home.is_some_and(|q| q.starts_with("cc=")), "the completion page sent the participant on");
    b.client.delete_all_cookies().await.unwrap();
    let finished = join_page(&b, &join_url(&app, &token, "PAGES-1"), "finished").await;
    assert_eq!(finished, "Thank you: you have finished");

    // Returned, and screened out by the comprehension check, through the API.
    let returner = arrive(&app, &token, study, "PAGES-RET").await;
    assert_eq!(through_check(&app, &returner, study, true).await["stage"], "working");
    post_ok(&app, &returner, &format!("/api/v1/take/{study}/return")).await;
    let returned = join_page(&b, &join_url(&app, &token, "PAGES-RET"), "returned").await;
    assert_eq!(returned, "You returned this study");
    let failing = arrive(&app, &token, study, "PAGES-OUT").await;
    through_check(&app, &failing, study, false).await;
    assert_eq!(through_check(&app, &failing, study, false).await["stage"], "screened_out");
    let out = join_page(&b, &join_url(&app, &token, "PAGES-OUT"), "screened out").await;
    assert_eq!(out, "Your participation has ended");

    // A study whose one place is taken: full for a newcomer; then closed.
    let (small, small_token) = create_link_study(&app, &researcher, &link_spec("pages full", 63, &[])).await;
    arrive(&app, &small_token, small, "TAKER").await;
    let full = join_page(&b, &join_url(&app, &small_token, "LATE-1"), "full").await;
    assert_eq!(full, "This study is full");
    assert!(app.cli(&["study", "close", &small.to_string()]).status.success());
    let closed = join_page(&b, &join_url(&app, &small_token, "LATE-2"), "closed").await;
    assert_eq!(closed, "This study is closed");
    // A known PID there: its status page from /join, not a redirect.
    let known = join_page(&b, &join_url(&app, &small_token, "TAKER"), "known PID, closed study").await;
    assert_eq!(known, "Welcome back");

    // The annotator's pages, and the guard's error page.
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    assert_assets(&b, "login, then the study list").await;
    let survey = b.wait_css("ul.studies a").await.attr("href").await.unwrap().expect("a study link");
    b.goto(&app.url(&survey)).await;
    assert_assets(&b, "an annotator's survey").await;
    b.client.goto(&app.url("/research")).await.unwrap();
    b.wait_css(".error-page[data-status='403']").await;
    assert_assets(&b, "the 403 page").await;
    b.goto(&app.url("/no-such-page")).await;
    assert_assets(&b, "the 404 page").await;
    b.close().await;
}

/// The demo's link study, opened as README says (the URL `hardneg study
/// link` prints, with an id of one's own), takes a newcomer to its first step.
#[tokio::test]
async fn a_newcomer_joins_the_demo_link_study_at_once() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let overview: Vec<Value> = app.get(&researcher, "/api/v1/studies/overview").await;
    let demo = hardneg::cli::demo_crowd::DEMO_CROWD_STUDY;
    let id = overview
        .iter()
        .find(|s| s["progress"]["name"] == demo)
        .and_then(|s| s["progress"]["study_id"].as_i64())
        .expect("the demo crowd study");
    let printed = app.cli(&["study", "link", &id.to_string(), "--base-url", &app.base]);
    assert!(printed.status.success(), "{}", text(&printed.stderr));
    let printed = text(&printed.stdout);
    let url = printed.lines().find_map(|l| l.strip_prefix("study URL:")).expect("a study URL").trim();
    let url =
        url.replace("{{%PROLIFIC_PID%}}", "try-1").replace("{{%STUDY_ID%}}", "s").replace("{{%SESSION_ID%}}", "x");
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    assert_eq!(join_page(&b, &url, "the demo's join page").await, demo);
    b.wait_css("input[name=consent]").await.click().await.unwrap();
    b.wait_css("form button[type=submit]").await.click().await.unwrap();
    wait_stage(&b, "instructions").await;
    assert!(b.client.find(Css(".join")).await.is_err(), "on the participant's page");
    b.close().await;
}
