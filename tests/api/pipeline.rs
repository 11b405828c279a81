//! The curation pipeline over real HTTP: a Step 3 study with a pair overlap,
//! the adjudication queue, Step 4 built from the survivors, and the funnel.
use crate::helpers::{Spec, TestApp};
use hardneg::api_types::{CompareReport, Dispute, OptionView, StudyProgress, TaskView};
use hardneg::domain::funnel::Funnel;
use serde_json::{json, Value};
use std::collections::HashSet;

fn step3() -> Spec {
    Spec::new("S3 pairs").seed(11).pairs(&[["annotator1", "annotator2"]], 10)
}

#[tokio::test]
async fn step3_pairs_adjudication_step4_and_the_funnel() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let annotator = app.login("annotator1").await;
    assert_eq!(app.create_study(&annotator, &step3()).await.status(), 403, "annotators cannot create studies");
    let s3 = app.create_study_ok(&researcher, &step3()).await;
    assert_eq!(app.create_study(&researcher, &step3()).await.status(), 422, "names are unique");

    // annotator1 always takes A (an image), annotator2 always None: the ten
    // shared items are all disagreements.
    let t1 = app.work_through("annotator1", s3, |_| "A".into()).await;
    let t2 = app.work_through("annotator2", s3, |_| "none".into()).await;
    let ids = |ts: &[TaskView]| ts.iter().map(|t| t.prompt.text.clone()).collect::<HashSet<_>>();
    let shared = ids(&t1).intersection(&ids(&t2)).count();
    assert_eq!(shared, 10);
    assert_eq!(t1.len() + t2.len(), 63 + 10, "every item once, the overlap twice");
    assert!(t1.iter().all(|t| !t.item_instructions), "Step 3's instructions are the study's");
    let candidate_urls: HashSet<String> =
        t1.iter().chain(&t2).flat_map(|t| t.options.iter().filter_map(|o| o.image_url.clone())).collect();

    // Agreement uses the spec's default mapping for Step 3: binary.
    let agreement: Value = app.get(&researcher, &format!("/api/v1/studies/{s3}/agreement")).await;
    assert_eq!(agreement["mapping"], "binary");
    assert_eq!(agreement["pairs"][0]["n"], 10);
    assert_eq!(agreement["pairs"][0]["observed"], 0.0);

    let f: Funnel = app.get(&researcher, "/api/v1/datasets/demo/funnel").await;
    let kept_alone = (t1.len() - 10) as u64;
    let dropped_alone = (t2.len() - 10) as u64;
    assert_eq!(f.overall.candidates, 63);
    assert_eq!(f.overall.step3_kept, kept_alone);
    assert_eq!(f.overall.step3_discarded, dropped_alone);
    assert_eq!(f.overall.step3_open, 10, "disputes wait for adjudication");
    assert_eq!(f.step3_study.as_deref(), Some("S3 pairs"));

    let step4 = Spec::new("S4").kind("ambiguity").source("S3 pairs").annotators(&["annotator1"]).seed(5);
    let res = app.create_study(&researcher, &step4).await;
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("10 for adjudication"), "{msg}");
    // The research page's "Start Step 4" route checks the same.
    let res = researcher.post(app.url(&format!("/api/v1/studies/{s3}/step4"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("10 for adjudication"), "{msg}");

    // The queue lists each disagreement with who chose what; settle half
    // for the image annotator1 chose and half for None.
    let res = annotator.get(app.url(&format!("/api/v1/studies/{s3}/disputes"))).send().await.unwrap();
    assert_eq!(res.status(), 403, "annotators do not adjudicate");
    let disputes: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{s3}/disputes")).await;
    assert_eq!(disputes.len(), 10);
    let mut kept_by_adjudication = 0;
    for (i, d) in disputes.iter().enumerate() {
        assert_eq!(d.choices.len(), 5);
        let none = d.choices.iter().find(|c| c.value == "none").unwrap();
        assert_eq!(none.chosen_by, ["annotator2"]);
        let image = d.choices.iter().find(|c| c.chosen_by == ["annotator1"]).unwrap();
        assert!(candidate_urls.contains(image.image_url.as_deref().unwrap()));
        let value = if i % 2 == 0 {
            kept_by_adjudication += 1;
            image.value.clone()
        } else {
            "none".to_string()
        };
        let res = researcher
            .post(app.url(&format!("/api/v1/studies/{s3}/adjudicate")))
            .json(&json!({ "instance_id": d.instance_id, "value": value }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204);
    }
    let bad = researcher
        .post(app.url(&format!("/api/v1/studies/{s3}/adjudicate")))
        .json(&json!({"instance_id": 1, "value": "7"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let disputes: Vec<Dispute> = app.get(&researcher, &format!("/api/v1/studies/{s3}/disputes")).await;
    assert_eq!(disputes, []);

    // Step 4 over the survivors: the real image against the chosen one.
    let s4 = app.create_study_ok(&researcher, &step4).await;
    let mut n = 0;
    let (mut real, mut generated, mut both) = (0u64, 0u64, 0u64);
    let t4 = app
        .work_through("annotator1", s4, |task| {
            n += 1;
            assert_eq!(task.kind.name(), "ambiguity");
            let opts = &task.options;
            assert_eq!(opts.len(), 3);
            let is_generated = |o: &OptionView| o.image_url.as_ref().is_some_and(|u| candidate_urls.contains(u));
            assert_eq!(opts.iter().filter(|o| is_generated(o)).count(), 1, "exactly one generated image");
            match n % 3 {
                0 => {
                    both += 1;
                    "both".into()
                }
                1 => {
                    real += 1;
                    opts.iter().find(|o| o.image_url.is_some() && !is_generated(o)).unwrap().id.clone()
                }
                _ => {
                    generated += 1;
                    opts.iter().find(|o| is_generated(o)).unwrap().id.clone()
                }
            }
        })
        .await;
    assert_eq!(t4.len() as u64, kept_alone + kept_by_adjudication);
    let f: Funnel = app.get(&researcher, "/api/v1/datasets/demo/funnel").await;
    let o = &f.overall;
    assert_eq!(o.step3_kept, kept_alone + kept_by_adjudication);
    assert_eq!(o.step3_open, 0);
    assert_eq!((o.step4_kept, o.step4_ambiguous, o.step4_both), (real, generated, both));
    assert_eq!(f.step4_study.as_deref(), Some("S4"));
    let per_type: u64 = f.by_type.values().map(|c| c.step4_kept).sum();
    assert_eq!(per_type, real);

    // The CLI lists the same figures.
    let listed: Vec<Funnel> = serde_json::from_slice(&app.cli(&["datasets", "--json"]).stdout).unwrap();
    assert_eq!(listed[0].overall, f.overall);

    // Models measured on a stage's instances, as a paper reports them beside
    // its human baseline: each run's outcomes there, kept or left out.
    for (stage, kept) in [("final", real), ("step3", o.step3_kept)] {
        let path = format!("/api/v1/compare?dataset=demo&stage={stage}");
        let report: CompareReport = app.get(&researcher, &path).await;
        assert_eq!(report.stage.as_deref(), Some(stage));
        assert!(!report.models.is_empty());
        for m in &report.models {
            assert_eq!((m.n + m.left_out) as u64, kept, "{stage}: {}", m.name);
        }
        let out = app.cli(&["compare", "--dataset", "demo", "--stage", stage, "--json"]);
        assert_eq!(serde_json::from_slice::<CompareReport>(&out.stdout).unwrap(), report);
    }
    let all: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=demo").await;
    assert_eq!((all.stage, all.models[0].n + all.models[0].left_out), (None, 63));
    let res = researcher.get(app.url("/api/v1/compare?dataset=demo&stage=step5")).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("query parameter `stage`"));

    // A newer Step 3 (a pilot) on the same dataset hides nothing: the chain with a Step 4 stays.
    app.create_study_ok(&researcher, &Spec::new("Pilot").seed(12)).await;
    let after: Funnel = app.get(&researcher, "/api/v1/datasets/demo/funnel").await;
    assert_eq!((after.step3_study.as_deref(), after.step4_study.as_deref()), (Some("S3 pairs"), Some("S4")));
    assert_eq!(after.overall, f.overall);
    let res = researcher.get(app.url("/api/v1/datasets/demo/export?format=csv&stage=final")).send().await.unwrap();
    assert_eq!(res.status(), 200, "the final export is still there");

    // "Start Step 4" over the finished Step 3: a study over its survivors.
    let step4_route = format!("/api/v1/studies/{s3}/step4");
    assert_eq!(annotator.post(app.url(&step4_route)).send().await.unwrap().status(), 403);
    let res = researcher.post(app.url(&step4_route)).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    assert_eq!(created["name"], "S3 pairs - Step 4");
    let progress: StudyProgress = app.get(&researcher, &format!("/api/v1/studies/{}/progress", created["id"])).await;
    assert_eq!(progress.items as u64, kept_alone + kept_by_adjudication, "{progress:?}");
    assert_eq!(progress.kind.to_string(), "ambiguity");

    // A newer Step 4 hides the finished one only once its own items are all settled.
    let rerun = created["id"].as_i64().unwrap();
    let mut answered = 0;
    let client = app.login("annotator1").await;
    while let Some(task) = app.next_task(&client, rerun).await {
        if answered == 2 {
            let during: Funnel = app.get(&researcher, "/api/v1/datasets/demo/funnel").await;
            assert_eq!((during.step4_study.as_deref(), &during.overall), (Some("S4"), &f.overall), "half done");
            let res = researcher.get(app.url("/api/v1/datasets/demo/export?format=csv&stage=final")).send().await;
            assert_eq!(res.unwrap().status(), 200, "the finished curation's export stays");
        }
        assert_eq!(app.answer(&client, task.task_id, "both").await.status(), 200);
        answered += 1;
    }
    assert!(answered > 2, "{answered}");
    app.work_through("annotator2", rerun, |_| "both".into()).await;
    let done: Funnel = app.get(&researcher, "/api/v1/datasets/demo/funnel").await;
    assert_eq!(done.step4_study.as_deref(), Some("S3 pairs - Step 4"), "finished: the newer one");
    assert_eq!((done.overall.step4_both, done.overall.step4_kept), (progress.items as u64, 0));
}
