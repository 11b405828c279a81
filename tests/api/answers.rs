//! Answering: the task a caller gets next, answers (idempotent, validated,
//! counted), the end of a queue, and the images tasks link to.
use crate::helpers::{demo_study, TestApp};
use hardneg::api_types::{AnswerAck, AnswerAckNext, StudyProgress};
use hardneg::domain::ids::TaskId;
use serde_json::Value;

#[tokio::test]
async fn answers_are_idempotent_validated_and_counted() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let first = app.next_task(&ann, study).await.expect("a task");
    assert_eq!(first.kind.name(), "four_image");
    let ids: Vec<&str> = first.options.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["A", "B", "C", "D", "none"]);
    assert_eq!(first.progress.done, 0);
    assert_eq!(first.prefetch.len(), 4);
    let task = first.task_id;

    let bad = app.answer(&ann, task, "E").await;
    assert_eq!(bad.status(), 422);
    let msg: Value = bad.json().await.unwrap();
    assert!(msg["error"].as_str().unwrap().contains("A, B, C, D, none"), "{msg}");
    let malformed = ann
        .post(app.url(&format!("/api/v1/tasks/{task}/answer")))
        .body("{")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 422);
    assert_eq!(app.answer(&ann, TaskId::new(999_999), "A").await.status(), 404);

    let ok: AnswerAck = app.answer(&ann, task, "B").await.json().await.unwrap();
    assert_eq!(ok, AnswerAck { task_id: task, option: "B".into(), duplicate: false });
    // A double submit, even with another option, keeps the first answer.
    let again = app.answer(&ann, task, "C").await;
    assert_eq!(again.status(), 200);
    assert_eq!(
        again.json::<AnswerAck>().await.unwrap(),
        AnswerAck { task_id: task, option: "B".into(), duplicate: true }
    );

    let second = app.next_task(&ann, study).await.expect("a second task");
    assert_ne!(second.task_id, first.task_id);
    assert_eq!(second.progress.done, 1);

    let researcher = app.login("researcher").await;
    let progress: StudyProgress = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(progress.answers, 1);
    let b = progress.distribution.iter().find(|c| c.option == "B").unwrap();
    assert_eq!(b.count, 1);
    let annotator = |name: &str| progress.annotators.iter().find(|a| a.username == name).unwrap().clone();
    let ann1 = annotator("annotator1");
    assert_eq!((ann1.done, ann1.total), (1, 63));
    assert_eq!(annotator("annotator2").done, 0);
}

#[tokio::test]
async fn an_annotator_finishes_with_204_and_later_accounts_join_all_studies() {
    let mut app = TestApp::spawn();
    app.add_user("latecomer", "annotator", "a long password");
    let ann = app.login("latecomer").await;
    let study = demo_study(&ann, &app).await;
    // The loop ends on 204 and refuses a task seen twice.
    let seen = app.work_through("latecomer", study, |_| "none".into()).await;
    assert_eq!(seen.len(), 63);
    assert!(app.next_task(&ann, study).await.is_none(), "a finished queue stays finished");
}

#[tokio::test]
async fn images_are_immutable_typed_and_only_by_hash() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let url = app.next_task(&ann, study).await.expect("a task").options[0].image_url.clone().expect("an image");
    let res = ann.get(app.url(&url)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert!(res.headers()["cache-control"].to_str().unwrap().contains("immutable"));
    let bytes = res.bytes().await.unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    for bad in ["/img/..%2F..%2Fhardneg.sqlite", "/img/abc", &format!("/img/{}", "0".repeat(64))] {
        assert_eq!(ann.get(app.url(bad)).send().await.unwrap().status(), 404, "{bad}");
    }
}

#[tokio::test]
async fn a_repeated_answer_is_checked_as_a_first_one_whether_or_not_the_task_was_just_shown() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let shown = app.next_task(&ann, study).await.expect("a task").task_id;
    // A queue's tasks are made together: the next id is the caller's second task, never shown.
    let unseen = TaskId::new(shown.get() + 1);
    for (task, first) in [(shown, "B"), (unseen, "A")] {
        assert_eq!(app.answer(&ann, task, first).await.status(), 200, "task {task}");
        let bad = app.answer(&ann, task, "E").await;
        assert_eq!(bad.status(), 422, "task {task}: an unknown option is refused, answered or not");
        let msg: Value = bad.json().await.unwrap();
        assert!(msg["error"].as_str().unwrap().contains("unknown option \"E\""), "{msg}");
        let again: AnswerAck = app.answer(&ann, task, "c").await.json().await.unwrap();
        assert_eq!(again, AnswerAck { task_id: task, option: first.into(), duplicate: true });
    }
}

/// `?next=true`: the answer's response carries what `next` gives after it,
/// through the whole queue to `null`; a repeat carries it too; a bad value
/// stores nothing.
#[tokio::test]
async fn an_answer_can_bring_the_next_task_in_the_same_response() {
    let app = TestApp::spawn();
    let ann = app.login("annotator1").await;
    let study = demo_study(&ann, &app).await;
    let answer_next = |task: i64, option: &str, query: &str| {
        let body = serde_json::json!({ "option": option, "elapsed_ms": 700 });
        ann.post(app.url(&format!("/api/v1/tasks/{task}/answer?{query}"))).json(&body).send()
    };
    let first = app.next_task(&ann, study).await.expect("a task");
    let refused = answer_next(first.task_id.get(), "B", "next=maybe").await.unwrap();
    assert_eq!(refused.status(), 422);
    let msg: Value = refused.json().await.unwrap();
    assert!(msg["error"].as_str().unwrap().starts_with("query: "), "{msg}");
    assert_eq!(app.next_task(&ann, study).await.expect("still a task"), first, "a refused request stores nothing");

    let mut task = first;
    let mut answered = 0;
    loop {
        let res = answer_next(task.task_id.get(), "B", "next=true").await.unwrap();
        assert_eq!(res.status(), 200);
        let got: AnswerAckNext = res.json().await.unwrap();
        answered += 1;
        assert_eq!((got.task_id, got.option.as_str(), got.duplicate), (task.task_id, "B", false));
        // The same task `next` gives now, the answer already counted in its progress.
        assert_eq!(got.next, app.next_task(&ann, study).await, "after {answered} answers");
        if answered == 1 {
            let again: AnswerAckNext =
                answer_next(task.task_id.get(), "C", "next=true").await.unwrap().json().await.unwrap();
            assert_eq!((again.option.as_str(), again.duplicate), ("B", true));
            assert_eq!(again.next, got.next, "a repeat brings the same next task");
            let plain: Value = app.answer(&ann, task.task_id, "B").await.json().await.unwrap();
            assert!(plain.get("next").is_none(), "without ?next the acknowledgement is as before: {plain}");
        }
        match got.next {
            Some(next) => {
                assert_eq!(next.progress.done, answered);
                task = next;
            }
            None => break,
        }
    }
    assert_eq!(answered, 63, "the last answer's `next` is null, and only then");
}
