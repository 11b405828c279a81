//! HNC's rules over the real binary: a study's vocabulary is strict unless
//! the spec asks for the warning mode, the default writing instructions carry
//! the paper's three conditions, and a link participant who wrote pairs is
//! turned away from the link study that validates them.
use crate::crowd_kit::{arrive, arrive_with, browser, create_link_study, lease_states, start};
use crate::helpers::{Spec, TestApp};
use reqwest::Client;
use serde_json::{json, Value};

const VOCAB: &str = r#"vocabulary = ["a", "the", "red", "blue", "circle", "square"]"#;

async fn write(app: &TestApp, c: &Client, task: i64, positive: &str, negative: &str) -> reqwest::Response {
    let body = json!({ "option": "written", "texts": { "positive": positive, "negative": negative } });
    c.post(app.url(&format!("/api/v1/tasks/{task}/answer"))).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn a_vocabulary_is_strict_unless_asked_and_the_instructions_state_hncs_three_conditions() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = |name: &str| Spec::new(name).kind("caption_writing").dataset("demo-hnc").annotators(&["annotator1"]);
    for bad in ["vocabulary_strict = \"yes\"", "vocabulary_strict = 1"] {
        let res = app.create_study(&researcher, &spec("Bad").line(VOCAB).line(bad)).await;
        assert_eq!(res.status(), 422, "{bad}");
        let message = res.text().await.unwrap();
        assert!(message.contains("vocabulary_strict"), "{bad}: {message}");
    }
    let strict = app.create_study_ok(&researcher, &spec("Strict by default").line(VOCAB)).await;
    let warning =
        app.create_study_ok(&researcher, &spec("Warning mode").line(VOCAB).line("vocabulary_strict = false")).await;
    let c = app.login("annotator1").await;

    let task = app.next_task(&c, strict).await.unwrap();
    for condition in [
        "(1) The positive caption is true of the image and the negative caption is false of it.",
        "(2) The negative differs from the positive only in what the type names",
        "(3) Both are fluent, plausible English that uses only the study's vocabulary",
    ] {
        assert!(task.instructions.contains(condition), "{condition}: {}", task.instructions);
    }
    let res = write(&app, &c, task.task_id.get(), "A red circle.", "A green circle.").await;
    assert_eq!(res.status(), 422, "a word outside the vocabulary is refused by default");
    let body: Value = res.json().await.unwrap();
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("field \"negative\": words outside the study's vocabulary: green"));
    assert_eq!(app.next_task(&c, strict).await.unwrap().progress.done, 0, "nothing stored");
    assert_eq!(write(&app, &c, task.task_id.get(), "A red circle.", "A blue circle.").await.status(), 200);

    let task = app.next_task(&c, warning).await.unwrap();
    assert_eq!(write(&app, &c, task.task_id.get(), "A red circle.", "A green circle.").await.status(), 200);
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{warning}/report")).await;
    assert_eq!(
        (r["vocabulary"]["strict"].as_bool(), r["vocabulary"]["pairs_with_unknown"].as_i64()),
        (Some(false), Some(1))
    );
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{strict}/report")).await;
    assert_eq!(r["vocabulary"]["strict"].as_bool(), Some(true));
}

fn link_spec(name: &str, kind: &str, dataset: &str, source: Option<&str>) -> String {
    let source = source.map(|s| format!("source = {s:?}\n")).unwrap_or_default();
    format!(
        "name = {name:?}\nkind = {kind:?}\ndataset = {dataset:?}\n{source}seed = 5\naccess = \"link\"\n\
         [link]\nbundle_size = 2\nconsent = \"I agree to take part.\"\n"
    )
}

#[tokio::test]
async fn a_link_participant_who_wrote_pairs_is_turned_away_from_their_validation() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = link_spec("Link writing", "caption_writing", "demo-hnc", None);
    let (writing, token) = create_link_study(&app, &researcher, &spec).await;
    let writer = arrive(&app, &token, writing, "WRITER1").await;
    start(&app, &writer, writing).await;
    let task = app.next_task(&writer, writing).await.unwrap();
    let res = write(&app, &writer, task.task_id.get(), "A red circle.", "A blue circle.").await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    // Two validators per pair, as the protocol has it.
    let spec = link_spec("Link validation", "pair_validation", "link-pairs", Some("Link writing")) + "copies = 2\n";
    let (validation, token) = create_link_study(&app, &researcher, &spec).await;
    let (status, page) = arrive_with(&app, &browser(), &token, "WRITER1").await;
    assert_eq!(status, 200);
    assert!(page.contains("You wrote caption pairs that this study checks"), "{page}");
    // Another panel's id in other letters is the same person.
    let (_, page) = arrive_with(&app, &browser(), &token, "writer1").await;
    assert!(page.contains("You wrote caption pairs that this study checks"), "{page}");
    assert!(lease_states(&app, &researcher, validation).await.is_empty(), "nothing recorded for the writer");
    let other = arrive(&app, &token, validation, "OTHER1").await;
    start(&app, &other, validation).await;
    assert_eq!(app.next_task(&other, validation).await.unwrap().progress.total, 1, "the one written pair");
    assert_eq!(lease_states(&app, &researcher, validation).await.len(), 1);
}
