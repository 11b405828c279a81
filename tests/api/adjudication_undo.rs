//! Undoing a settled dispute over real HTTP (issue 13): a researcher
//! reopens a decision, the item waits in the queue again, a new decision
//! settles it, and the history keeps every decision and the reopening;
//! once Step 4 is built from the outcomes, they stay.
use crate::helpers::{Spec, TestApp};
use hardneg::api_types::{Dispute, Settled};
use serde_json::json;

#[tokio::test]
async fn a_settled_dispute_reopens_and_its_history_keeps_both_decisions() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = Spec::new("undo pairs").seed(3).pairs(&[["annotator1", "annotator2"]], 2);
    let study = app.create_study_ok(&researcher, &spec).await;
    app.work_through("annotator1", study, |_| "A".into()).await;
    app.work_through("annotator2", study, |_| "none".into()).await;
    let disputes: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert_eq!(disputes.len(), 2);
    let settle = |instance: i64, value: &str| {
        let url = app.url(&format!("/api/v1/studies/{study}/adjudicate"));
        let body = json!({ "instance_id": instance, "value": value });
        let req = researcher.post(url).json(&body);
        async move { req.send().await.unwrap().status() }
    };
    let reopen = |client: &reqwest::Client, instance: i64| {
        let req = client.post(app.url(&format!("/api/v1/studies/{study}/adjudications/{instance}/reopen")));
        async move { req.send().await.unwrap() }
    };
    let (first, second) = (disputes[0].instance_id, disputes[1].instance_id);
    assert_eq!(settle(first.get(), "none").await, 204);
    assert_eq!(settle(second.get(), "none").await, 204);
    let settled: Vec<Settled> = app.get(&researcher, &format!("/api/v1/studies/{study}/adjudications")).await;
    assert_eq!(settled.len(), 2);
    assert!(settled.iter().all(|s| s.value == "none" && s.label == "None" && s.history.len() == 1));

    // Annotators may not undo; the researcher reopens, and the item waits again.
    let annotator = app.login("annotator1").await;
    assert_eq!(reopen(&annotator, first.get()).await.status(), 403);
    assert_eq!(reopen(&researcher, first.get()).await.status(), 204);
    let waiting: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert_eq!(waiting, [disputes[0].clone()], "back in the queue as it was");
    let settled: Vec<Settled> = app.get(&researcher, &format!("/api/v1/studies/{study}/adjudications")).await;
    assert_eq!(settled.iter().map(|s| s.instance_id).collect::<Vec<_>>(), [second]);

    // Nothing to reopen: twice, or an item of no decision.
    let again = reopen(&researcher, first.get()).await;
    assert_eq!(again.status(), 404);
    let msg = again.text().await.unwrap();
    assert!(msg.contains(&format!("instance {first} of study {study} has no decision to reopen")), "{msg}");

    // Decided again the other way: both decisions and the reopening, in order.
    let image = disputes[0].choices.iter().find(|c| c.chosen_by == ["annotator1"]).unwrap();
    assert_eq!(settle(first.get(), &image.value).await, 204);
    let settled: Vec<Settled> = app.get(&researcher, &format!("/api/v1/studies/{study}/adjudications")).await;
    let item = settled.iter().find(|s| s.instance_id == first).expect("settled again");
    assert_eq!(item.value, image.value);
    // Named as its annotators saw it (their tasks shuffled the letters), as in the dispute.
    assert_eq!(item.label, image.label);
    assert!(item.label == "A" || item.label.starts_with("A to annotator1"), "annotator1 chose it as A: {}", item.label);
    let history: Vec<(&str, &str, &str)> =
        item.history.iter().map(|e| (e.action.as_str(), e.value.as_str(), e.by.as_str())).collect();
    assert_eq!(
        history,
        [
            ("settled", "none", "researcher"),
            ("reopened", "none", "researcher"),
            ("settled", &*image.value, "researcher")
        ]
    );
    assert!(item.history.windows(2).all(|w| w[0].at <= w[1].at));
    let left: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert_eq!(left, []);

    // Once Step 4 is built from the outcomes, they no longer change under it.
    let step4 = researcher.post(app.url(&format!("/api/v1/studies/{study}/step4"))).send().await.unwrap();
    assert_eq!(step4.status(), 201, "{}", step4.text().await.unwrap());
    let late = reopen(&researcher, second.get()).await;
    assert_eq!(late.status(), 422);
    assert!(late.text().await.unwrap().contains("was built from this study's outcomes"));
}

/// Under `annotators = "all"`, once Step 4 is built from a finished Step 3,
/// an annotator who never started it is refused (an audit: one more
/// annotator opened every item again and the final export fell to 0 rows),
/// and no decision may change an outcome under Step 4 (an audit: adjudicate
/// still did, on an item nobody disputed).
#[tokio::test]
async fn outcomes_a_later_study_was_built_on_take_no_newcomer_and_no_decision() {
    let mut app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let study = app.create_study_ok(&researcher, &Spec::new("all then step 4").seed(5)).await;
    app.work_through("annotator1", study, |_| "A".into()).await;
    app.work_through("annotator2", study, |_| "A".into()).await;
    let funnel = |app: &TestApp| {
        let req = researcher.get(app.url("/api/v1/datasets/demo/funnel"));
        async move { req.send().await.unwrap().json::<serde_json::Value>().await.unwrap()["overall"].clone() }
    };
    // Each annotator's letters are shuffled: the items they split on are settled.
    let disputes: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    for d in &disputes {
        let body = json!({ "instance_id": d.instance_id.get(), "value": "0" });
        let url = app.url(&format!("/api/v1/studies/{study}/adjudicate"));
        assert_eq!(researcher.post(url).json(&body).send().await.unwrap().status(), 204);
    }
    let before = funnel(&app).await;
    assert!(before["step3_open"] == 0 && before["step3_kept"].as_i64() > Some(0), "{before}");
    let step4 = researcher.post(app.url(&format!("/api/v1/studies/{study}/step4"))).send().await.unwrap();
    assert_eq!(step4.status(), 201, "{}", step4.text().await.unwrap());
    let before = funnel(&app).await;

    app.add_user("annotator3", "annotator", "a-long-enough-password-3");
    let late = app.login("annotator3").await;
    let res = late.post(app.url(&format!("/api/v1/studies/{study}/start"))).send().await.unwrap();
    assert_eq!(res.status(), 409);
    assert!(res.text().await.unwrap().contains("takes no new annotators"));
    // Those who started go on as before.
    let early = app.login("annotator1").await;
    assert_eq!(early.post(app.url(&format!("/api/v1/studies/{study}/start"))).send().await.unwrap().status(), 200);

    let body = json!({ "instance_id": 1, "value": "none" });
    let res =
        researcher.post(app.url(&format!("/api/v1/studies/{study}/adjudicate"))).json(&body).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("was built from this study's outcomes"));
    assert_eq!(funnel(&app).await, before, "the outcomes under Step 4 did not change");
}

/// A decision made while another writer holds the database (an answer being
/// stored) waits its turn: it once read first and then wrote, which SQLite
/// refuses at once ("database is locked") when a write came in between.
#[tokio::test]
async fn a_decision_waits_for_another_writer_rather_than_failing() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = Spec::new("busy pairs").seed(5).pairs(&[["annotator1", "annotator2"]], 2);
    let study = app.create_study_ok(&researcher, &spec).await;
    app.work_through("annotator1", study, |_| "A".into()).await;
    app.work_through("annotator2", study, |_| "none".into()).await;
    let disputes: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    let db = crate::helpers::db_at(&app.data_dir).await;
    for (i, dispute) in disputes.iter().enumerate() {
        let mut tx = hardneg::store::db::begin_write(&db).await.unwrap();
        sqlx::query("UPDATE studies SET name = name WHERE id = $1").bind(study).execute(&mut *tx).await.unwrap();
        let url = app.url(&if i == 0 {
            format!("/api/v1/studies/{study}/adjudicate")
        } else {
            format!("/api/v1/studies/{study}/adjudications/{}/reopen", disputes[0].instance_id)
        });
        let body = json!({ "instance_id": dispute.instance_id, "value": "none" });
        let sent = tokio::spawn(researcher.post(url).json(&body).send());
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        tx.commit().await.unwrap();
        let res = sent.await.unwrap().unwrap();
        assert_eq!(res.status(), 204, "{}", res.text().await.unwrap());
    }
    db.close().await;
}
