//! The survey without JavaScript (issue 13): the page's HTML carries the
//! study's name, a Start form and then the task with its options as submit
//! buttons; posting them starts the study and stores answers through the
//! same service as the API, with a 303 back to the page. Cross-site posts
//! and the wrong role are refused with an error page, and unknown pages are
//! a styled 404.
use crate::helpers::{demo_study, TestApp};
use reqwest::{Client, StatusCode};

/// The `data-task` of the task the survey page shows, if any.
pub(crate) fn shown_task(html: &str) -> Option<i64> {
    let value = html.split("data-task=\"").nth(1)?.split('"').next()?;
    value.parse().ok()
}

/// A browser-like form post: same origin, answered with a 303 (not followed).
pub(crate) async fn post_form(
    app: &TestApp,
    client: &Client,
    path: &str,
    origin: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    client.post(app.url(path)).header("origin", origin).form(form).send().await.unwrap()
}

pub(crate) fn no_redirects() -> Client {
    Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

pub(crate) async fn page(app: &TestApp, client: &Client, path: &str) -> (StatusCode, String) {
    let res = client.get(app.url(path)).send().await.unwrap();
    (res.status(), res.text().await.unwrap())
}

#[tokio::test]
async fn an_annotator_starts_and_answers_by_form_posts_without_javascript() {
    let app = TestApp::spawn();
    let client = no_redirects();
    app.log_in(&client, "annotator1").await;
    let study = demo_study(&client, &app).await;
    let survey = format!("/annotate/{study}");
    let name = app.studies(&client).await.into_iter().find(|s| s.id.get() == study).unwrap().name;

    // Not started: the page names the study and offers a Start form; the GET started nothing.
    let (status, html) = page(&app, &client, &survey).await;
    assert_eq!(status, 200);
    assert!(html.contains(&format!("<title>{name} — hardneg</title>")), "the study in the title");
    assert_eq!(html.matches("<h1").count(), 1, "one h1");
    assert!(html.contains(&format!("<h1>{name}</h1>")), "the study as the h1");
    assert!(html.contains(&format!(r#"action="/annotate/{study}/start""#)), "a Start form");
    assert!(html.contains("href=\"/annotate\""), "a link back to the list");
    assert_eq!(shown_task(&html), None);
    let started = app.studies(&client).await.into_iter().find(|s| s.id.get() == study).unwrap().progress;
    assert!(started.is_none(), "rendering the page started the study");

    let own = app.base.clone();
    let res = post_form(&app, &client, &format!("{survey}/start"), &own, &[]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], survey);

    // Started: the task is in the HTML, its options are submit buttons of a form.
    let (_, html) = page(&app, &client, &survey).await;
    let first = shown_task(&html).expect("a task in the server-rendered page");
    assert!(html.contains(&format!(r#"action="/annotate/{study}/answer""#)), "the answer form");
    assert!(html.contains(r#"type="submit" name="option" value="A""#), "options submit");
    assert!(!html.contains("Keys work once"), "no notice about keys that may never work");
    // The next item's images wait for hydration: on a cold page they would
    // share the link with the wasm the keys wait for.
    let now = app.next_task(&client, study).await.expect("the shown task");
    assert_eq!(now.task_id.get(), first);
    let shown: Vec<&str> = now.options.iter().filter_map(|o| o.image_url.as_deref()).collect();
    // (The task's data for hydration names them too: look for image elements.)
    let img = |src: &str| html.contains(&format!(r#"src="{src}""#));
    assert!(shown.iter().all(|src| img(src)));
    // (Demo items may share an image with the next one.)
    let ahead: Vec<&String> = now.prefetch.iter().filter(|src| !shown.contains(&src.as_str())).collect();
    assert!(!ahead.is_empty());
    for src in ahead {
        assert!(!img(src), "{src} is an image of the page before hydration");
    }

    // A cross-site post is refused and stores nothing.
    let task = first.to_string();
    let evil = post_form(
        &app,
        &client,
        &format!("{survey}/answer"),
        "http://evil.example",
        &[("task_id", &task), ("option", "A")],
    )
    .await;
    assert_eq!(evil.status(), 403);
    // The caller's own task posted under another study's page is not that study's.
    let elsewhere = format!("/annotate/{}/answer", study + 1000);
    let res = post_form(&app, &client, &elsewhere, &own, &[("task_id", &task), ("option", "A")]).await;
    assert_eq!(res.status(), 404);
    assert!(res.text().await.unwrap().contains(&format!("study {} has no task {task}", study + 1000)));
    let (_, html) = page(&app, &client, &survey).await;
    assert_eq!(shown_task(&html), Some(first), "the refused posts answered nothing");

    // Two answers by form: each a 303 back to the page, which shows the next task.
    let mut shown = first;
    for option in ["B", "none"] {
        let task = shown.to_string();
        let res =
            post_form(&app, &client, &format!("{survey}/answer"), &own, &[("task_id", &task), ("option", option)])
                .await;
        assert_eq!(res.status(), 303, "{option}");
        assert_eq!(res.headers()["location"], survey);
        let (_, html) = page(&app, &client, &survey).await;
        let next = shown_task(&html).expect("a next task");
        assert_ne!(next, shown, "the page moved on after {option}");
        shown = next;
    }
    // A stale tab still showing the first item: the same option again is no
    // news; another is not stored, and the page says the first was kept.
    let stale = |option: &'static str| {
        let (task, path) = (first.to_string(), format!("{survey}/answer"));
        let (app, client, own) = (&app, &client, own.clone());
        async move { post_form(app, client, &path, &own, &[("task_id", &task), ("option", option)]).await }
    };
    assert_eq!(stale("B").await.headers()["location"], survey);
    let res = stale("C").await;
    assert_eq!(res.status(), 303);
    let noted = res.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(noted, format!("{survey}?answered=elsewhere"));
    let (_, html) = page(&app, &client, &noted).await;
    assert!(html.contains("already been answered in another tab or window"), "{html}");
    assert_eq!(shown_task(&html), Some(shown), "the next item all the same");
    let progress = app.studies(&client).await.into_iter().find(|s| s.id.get() == study).unwrap().progress.unwrap();
    assert_eq!(progress.done, 2, "both form answers are stored");

    // A bad option comes back as a page that says what was wrong, with a way back.
    let task = shown.to_string();
    let res = post_form(&app, &client, &format!("{survey}/answer"), &own, &[("task_id", &task), ("option", "Q")]).await;
    assert_eq!(res.status(), 422);
    let html = res.text().await.unwrap();
    assert!(html.contains("<h1>") && html.contains(&format!(r#"href="{survey}""#)), "{html}");
}

#[tokio::test]
async fn the_wrong_role_and_unknown_pages_get_styled_error_pages() {
    let app = TestApp::spawn();
    let client = no_redirects();
    app.log_in(&client, "researcher").await;
    let study = demo_study(&app.login("annotator1").await, &app).await;

    for (path, post) in [("/annotate", false), (&*format!("/annotate/{study}/answer"), true)] {
        let res = if post {
            post_form(&app, &client, path, &app.base, &[("task_id", "1"), ("option", "A")]).await
        } else {
            client.get(app.url(path)).send().await.unwrap()
        };
        assert_eq!(res.status(), 403, "{path}");
        let html = res.text().await.unwrap();
        assert!(html.contains("<title>Not for your role — hardneg</title>"), "{html}");
        assert!(
            html.contains(r#"<header class="top">"#) && html.contains("researcher (researcher)"),
            "the header: {html}"
        );
        assert!(html.contains("/pkg/hardneg") && html.contains(".css"), "the app's stylesheet: {html}");
        assert!(html.contains(r#"href="/research""#), "a way to the researcher's page");
    }

    let (status, html) = page(&app, &client, "/no-such-page").await;
    assert_eq!(status, 404);
    assert!(html.contains("<h1>Page not found</h1>"), "{html}");
    assert!(html.contains("<title>Page not found — hardneg</title>"), "{html}");
    assert!(html.contains(r#"<link rel="icon" href="data:image/svg+xml"#), "an inline favicon");
}

#[tokio::test]
async fn a_participant_answers_the_bundle_by_form_posts_on_the_take_page() {
    use crate::crowd_kit::{arrive, create_link_study, link_spec, start};
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("form crowd", 2, &[])).await;
    let client = arrive(&app, &token, study, "FORM-1").await;
    start(&app, &client, study).await;
    let take = format!("/take/{study}");
    // Another study's page refuses the participant alike, its own task or
    // another's (audit AV: a 404 for one, a 403 for the other, told which
    // study a task is of).
    let (other, other_token) = create_link_study(&app, &researcher, &link_spec("other crowd", 2, &[])).await;
    let stranger = arrive(&app, &other_token, other, "FORM-2").await;
    start(&app, &stranger, other).await;
    let theirs = shown_task(&page(&app, &stranger, &format!("/take/{other}")).await.1).unwrap().to_string();
    let mine = shown_task(&page(&app, &client, &take).await.1).unwrap().to_string();
    let mut said = Vec::new();
    for task in [&mine, &theirs, &"999999".to_string()] {
        let to = format!("/take/{other}/answer");
        let res = post_form(&app, &client, &to, &app.base, &[("task_id", task), ("option", "A")]).await;
        assert_eq!(res.status(), 403, "task {task}");
        let page = res.text().await.unwrap();
        said.push(page.replace(task.as_str(), "T").contains("task T is not yours; if you opened another study since"));
    }
    // Another's task reads alike whether it is of the page's study or none (audit AX).
    assert_eq!(said, [false, true, true]);
    for option in ["A", "none"] {
        let (status, html) = page(&app, &client, &take).await;
        assert_eq!(status, 200);
        assert!(html.contains(&format!(r#"action="{take}/answer""#)), "the bundle's answer form");
        // "No, keep going" closes the return question without the wasm: a link back here.
        assert!(html.contains(&format!(r#"<a href="{take}" class="link keep-going">"#)), "{html}");
        let task = shown_task(&html).expect("a task in the page").to_string();
        let res =
            post_form(&app, &client, &format!("{take}/answer"), &app.base, &[("task_id", &task), ("option", option)])
                .await;
        assert_eq!(res.status(), 303, "{option}");
        assert_eq!(res.headers()["location"], take);
    }
    let progress: serde_json::Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress["answers"], 2, "both form answers stored");
    let (_, html) = page(&app, &client, &take).await;
    assert_eq!(shown_task(&html), None, "the bundle is done");
}

/// A kind's default instructions end with its keys: that sentence is a key
/// hint (shown only once hydrated), so a page without JavaScript says
/// nothing about keys that do nothing there.
#[tokio::test]
async fn a_kinds_keys_are_a_hint_in_the_served_instructions() {
    let app = TestApp::spawn();
    let client = no_redirects();
    app.log_in(&client, "annotator1").await;
    let study =
        app.studies(&client).await.into_iter().find(|s| s.name == "Demo: SugarCrepe++ triplet check").unwrap().id;
    let survey = format!("/annotate/{study}");
    let res = post_form(&app, &client, &format!("{survey}/start"), &app.base.clone(), &[]).await;
    assert_eq!(res.status(), 303);
    let (_, served) = page(&app, &client, &survey).await;
    assert!(shown_task(&served).is_some(), "a triplet on the page");
    // What a browser shows: the page without its scripts (the hydration data carries the text too).
    let mut html = String::new();
    for (i, part) in served.split("<script").enumerate() {
        html.push_str(if i == 0 { part } else { part.split_once("</script>").map_or("", |p| p.1) });
    }
    let keys: Vec<&str> = html.split("Keys:").skip(1).collect();
    assert!(!keys.is_empty(), "the kind's keys are in the page for later");
    for (before, _) in html.split("Keys:").zip(&keys) {
        assert!(
            before.ends_with(r#"class="key-hint">"#),
            "keys outside a key hint: …{}",
            &before[before.len().saturating_sub(80)..]
        );
    }
}
