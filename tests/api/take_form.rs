//! The participant's steps without JavaScript (issue 13): consent,
//! instructions, the comprehension check and practice are plain form posts
//! on `/take/{id}`, each a 303 back to the page, which the server renders
//! whole, up to the completion code; cross-site posts and callers without a
//! place are refused. And a ranking answered by one form of places.
use crate::crowd_kit::{browser, create_link_study, link_spec, stage};
use crate::helpers::TestApp;
use crate::survey_form::{no_redirects, page, post_form, shown_task};

const SPEC: &[&str] = &[
    "comprehension = [
  { question = \"When do you pick None?\", options = [\"Never\", \"When no image shows everything in the text\"], answer = \"When no image shows everything in the text\" },
  { question = \"Do deformed hands count against an image?\", options = [\"Yes\", \"No\"], answer = \"No\" },
]",
    "practice = [{ key = \"demo-000\", answer = \"none\" }]",
];

#[tokio::test]
async fn a_participant_goes_from_consent_to_the_code_by_form_posts() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("no-js take", 2, SPEC)).await;
    let code = app.get::<serde_json::Value>(&researcher, &format!("/api/v1/studies/{study}/link")).await
        ["completion_code"]
        .as_str()
        .unwrap()
        .to_string();
    let take = format!("/take/{study}");
    let own = app.base.clone();

    // Joined without ticking the box: the page asks for consent, as a form.
    let client = browser();
    let res = client.post(app.url(&format!("/join/{token}"))).form(&[("PROLIFIC_PID", "NOJS-1")]).send().await.unwrap();
    assert_eq!(res.status(), 303);
    let (status, html) = page(&app, &client, &take).await;
    assert_eq!(status, 200);
    assert!(html.contains(&format!(r#"action="{take}/step""#)) && html.contains(r#"value="Consent""#), "{html}");
    assert!(html.contains(r#"name="consent" value="yes" required"#), "the box is required");

    // Refused: a cross-site post, and consent without the box.
    let evil = post_form(
        &app,
        &client,
        &format!("{take}/step"),
        "http://evil.example",
        &[("step", "Consent"), ("consent", "yes")],
    )
    .await;
    assert_eq!(evil.status(), 403);
    // The app's error page, with the headers every response has.
    assert_eq!(evil.headers()["x-frame-options"], "DENY");
    assert_eq!(evil.headers()["x-content-type-options"], "nosniff");
    let html = evil.text().await.unwrap();
    assert!(html.contains("cross-site request refused") && html.contains(&format!(r#"href="{take}""#)), "{html}");
    let unticked = post_form(&app, &client, &format!("{take}/step"), &own, &[("step", "Consent")]).await;
    assert_eq!(unticked.status(), 422);
    let html = unticked.text().await.unwrap();
    assert!(html.contains("tick the consent box") && html.contains(&format!(r#"href="{take}""#)), "{html}");
    assert_eq!(stage(&app, &client, study).await["stage"], "consent", "nothing moved on");
    // No session (expired, cookies cleared): the study's link is the way back, not a login.
    for form in ["step", "comprehension", "practice", "answer"] {
        let fields = [("step", "Consent"), ("task_id", "1"), ("option", "A")];
        let gone = post_form(&app, &no_redirects(), &format!("{take}/{form}"), &own, &fields).await;
        assert_eq!(gone.status(), 401, "{form}");
        let html = gone.text().await.unwrap();
        assert!(html.contains("Your session has ended") && html.contains("from its link on"), "{form}: {html}");
        assert!(!html.contains(r#"href="/login""#) && html.contains(&format!(r#"href="{take}""#)), "{form}: {html}");
    }

    // A logged-in annotator has no place in the study: refused, the participant's steps untouched.
    let annotator = no_redirects();
    app.log_in(&annotator, "annotator1").await;
    let res =
        post_form(&app, &annotator, &format!("{take}/step"), &own, &[("step", "Consent"), ("consent", "yes")]).await;
    assert!(res.status().is_client_error(), "{}", res.status());

    let steps = [("Consent", "instructions"), ("Instructions", "comprehension")];
    for (step, next) in steps {
        let res = post_form(&app, &client, &format!("{take}/step"), &own, &[("step", step), ("consent", "yes")]).await;
        assert_eq!(res.status(), 303, "{step}");
        assert_eq!(res.headers()["location"], take);
        assert_eq!(stage(&app, &client, study).await["stage"], next, "after {step}");
    }

    // The comprehension check: radio groups q0, q1; one answer short is refused.
    let (_, html) = page(&app, &client, &take).await;
    assert!(html.contains(&format!(r#"action="{take}/comprehension""#)), "{html}");
    assert!(html.contains(r#"name="q1""#));
    // A question number far past the form's: one answer missing, in a moment (it
    // once made room for every number below it, gigabytes), and no attempt used.
    let far = [("q0", "1"), ("q99999999999", "1")];
    let res = post_form(&app, &client, &format!("{take}/comprehension"), &own, &far).await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("question 2 has no answer"));
    let half = post_form(&app, &client, &format!("{take}/comprehension"), &own, &[("q0", "1")]).await;
    assert_eq!(half.status(), 422);
    assert!(half.text().await.unwrap().contains("1 answers given for 2 questions"));
    let res = post_form(&app, &client, &format!("{take}/comprehension"), &own, &[("q0", "1"), ("q1", "1")]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(stage(&app, &client, study).await["stage"], "practice");

    // Practice: the task card's form; the feedback is on the page the post redirects to.
    let (_, html) = page(&app, &client, &take).await;
    assert!(html.contains(&format!(r#"action="{take}/practice""#)), "{html}");
    let practice = shown_task(&html).expect("the practice item").to_string();
    let res =
        post_form(&app, &client, &format!("{take}/practice"), &own, &[("task_id", &practice), ("option", "none")])
            .await;
    assert_eq!(res.status(), 303);
    let back = res.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(back, format!("{take}?correct=true&chosen=None&right=None"));
    let (_, html) = page(&app, &client, &back).await;
    assert!(
        html.contains(r#"data-correct="true" role="status" class="feedback""#)
            && html.contains("Correct: None is right."),
        "{html}"
    );
    assert!(html.contains(&format!(r#"href="{take}" data-step="practice-next""#)), "a Continue link: {html}");
    assert!(html.contains("Practice: your answers here are not recorded"), "said without the wasm too: {html}");
    assert_eq!(shown_task(&html), None, "the feedback first, the bundle after Continue");

    // The bundle by the same forms, then the code, all in the server's HTML.
    for option in ["A", "none"] {
        if option == "none" {
            // One item answered: feedback in the address is no practice's, only words someone put there.
            let made_up = format!("{take}?correct=false&chosen=B&right=Your%20place%20expired");
            let (_, html) = page(&app, &client, &made_up).await;
            assert!(!html.contains(r#"class="feedback""#) && !html.contains("place expired"), "{html}");
        }
        let (_, html) = page(&app, &client, &take).await;
        let task = shown_task(&html).expect("a bundle item").to_string();
        // Read for a while: the server times a form's answer from serving the item.
        tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
        let res =
            post_form(&app, &client, &format!("{take}/answer"), &own, &[("task_id", &task), ("option", option)]).await;
        assert_eq!(res.status(), 303);
    }
    let (_, html) = page(&app, &client, &take).await;
    assert!(html.contains(&format!(r#"data-code="{code}""#)), "the completion code: {html}");
    // Timed by the server, so not `too_fast` for answering without JavaScript.
    let csv = researcher.get(app.url(&format!("/api/v1/studies/{study}/approve-list.csv"))).send().await.unwrap();
    let csv = csv.text().await.unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).expect("the participant's row").split(',').collect();
    let median: f64 = row[header.iter().position(|h| *h == "median_s_per_item").unwrap()].parse().unwrap();
    assert!((1.0..60.0).contains(&median), "{csv}");
    assert!(!row[header.iter().position(|h| *h == "flags").unwrap()].contains("too_fast"), "{csv}");
}

#[tokio::test]
async fn a_ranking_is_answered_by_one_form_of_places() {
    let app = TestApp::spawn();
    let client = no_redirects();
    app.log_in(&client, "annotator1").await;
    let id = app.studies(&client).await.into_iter().find(|s| s.name == "Demo: ranking generated images").unwrap().id;
    let survey = format!("/annotate/{id}");
    let own = app.base.clone();
    assert_eq!(post_form(&app, &client, &format!("{survey}/start"), &own, &[]).await.status(), 303);
    let (_, html) = page(&app, &client, &survey).await;
    assert!(html.contains(&format!(r#"action="{survey}/rank""#)), "{html}");
    assert!(html.contains(r#"<select name="rank_A""#), "a place per image: {html}");
    let task = shown_task(&html).unwrap();
    let letters: Vec<String> =
        app.next_task(&client, id.get()).await.unwrap().options.iter().map(|o| o.id.clone()).collect();
    let n = letters.len();

    // Two images in one place: refused, saying which.
    let mut places: Vec<(String, String)> = letters.iter().map(|l| (format!("rank_{l}"), "1".into())).collect();
    places.push(("task_id".into(), task.to_string()));
    let form: Vec<(&str, &str)> = places.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let res = post_form(&app, &client, &format!("{survey}/rank"), &own, &form).await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("are both in place 1"));

    // Reversed: a 303 back, the answer stored, the next item shown.
    let mut places: Vec<(String, String)> =
        letters.iter().enumerate().map(|(i, l)| (format!("rank_{l}"), (n - i).to_string())).collect();
    places.push(("task_id".into(), task.to_string()));
    let form: Vec<(&str, &str)> = places.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let res = post_form(&app, &client, &format!("{survey}/rank"), &own, &form).await;
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], survey);
    let progress = app.studies(&client).await.into_iter().find(|s| s.id == id).unwrap().progress.unwrap();
    assert_eq!(progress.done, 1, "the order is stored");
    let (_, html) = page(&app, &client, &survey).await;
    assert_ne!(shown_task(&html), Some(task), "the next item");
}
