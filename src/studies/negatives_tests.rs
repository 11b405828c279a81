//! The four readers of "the negative image" agree: Step 3's survivors, the
//! image scoring scores, the failure drill-down and the export, on a real
//! SQLite file where Step 3 chose images and Step 4 was built from it.
use crate::accounts::SessionUser;
use crate::cli::demo_seed::{seed_demo_accounts, seed_demo_dataset};
use crate::datasets::export::{export_to_dir, ExportRequest};
use crate::domain::ids::StudyId;
use crate::domain::metrics::Outcome;
use crate::domain::role::Role;
use crate::domain::survey::SurveyKind;
use crate::kinds::REGISTRY;
use crate::studies::create;
use crate::studies::{adjudication, outcomes};
use std::collections::BTreeMap;

/// A SQLite file with the demo's 12 instances, its accounts and a Step 3
/// study over them: (its folder, the pool, the researcher, the study, its
/// instances in id order).
async fn step3_over_the_demo() -> (tempfile::TempDir, sqlx::AnyPool, SessionUser, StudyId, Vec<i64>) {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
    seed_demo_dataset(&db, &crate::store::images::ImageStore::new(dir.path().join("images")), 12).await.unwrap();
    seed_demo_accounts(&db).await.unwrap();
    let researcher_id: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE username = 'researcher'").fetch_one(&db).await.unwrap();
    let researcher =
        SessionUser { id: researcher_id.into(), username: "researcher".into(), role: Role::Researcher, epoch: 0 };
    let spec = "name = \"S3\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = \"all\"\nseed = 3\n";
    let s3 =
        create::create_study(&db, &REGISTRY, &create::parse_spec(&REGISTRY, spec, 0).unwrap(), spec).await.unwrap();
    let items: Vec<i64> = sqlx::query_scalar("SELECT instance_id FROM study_items WHERE study_id = $1 ORDER BY 1")
        .bind(s3)
        .fetch_all(&db)
        .await
        .unwrap();
    (dir, db, researcher, s3, items)
}

#[tokio::test]
async fn survivors_scoring_failures_and_export_name_the_same_negative() {
    let (dir, db, researcher, s3, items) = step3_over_the_demo().await;
    let images = crate::store::images::ImageStore::new(dir.path().join("images"));
    // Every slot is chosen somewhere (not only slot 0, the uncurated
    // stand-in), and some items are discarded.
    for (n, id) in items.iter().enumerate() {
        let value = if n % 5 == 4 { "none".to_string() } else { (n % 4).to_string() };
        adjudication::adjudicate(&db, crate::kinds::KINDS, &researcher, s3, (*id).into(), &value, None).await.unwrap();
    }
    let survivors: BTreeMap<i64, String> = outcomes::survivors(
        &db,
        crate::kinds::KINDS,
        s3,
        &[SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap()],
    )
    .await
    .unwrap()
    .into_iter()
    .collect();
    assert!(survivors.len() >= 8, "{survivors:?}");
    let (s4, _) = create::create_step4(&db, &REGISTRY, s3).await.unwrap();
    let step4_items: BTreeMap<i64, String> =
        sqlx::query_as("SELECT instance_id, chosen_image FROM study_items WHERE study_id = $1")
            .bind(s4)
            .fetch_all(&db)
            .await
            .unwrap()
            .into_iter()
            .collect();
    assert_eq!(step4_items, survivors, "Step 4's items carry Step 3's choice");

    // Scoring.
    let dataset = crate::studies::pipeline::dataset_id(&db, "demo").await.unwrap();
    let negatives = crate::studies::negatives::of_dataset(&db, crate::kinds::KINDS, dataset).await.unwrap();
    for (id, image) in &survivors {
        assert_eq!(negatives.get(id), Some(image), "instance {id}");
    }

    // The failure drill-down, over a run that fails everything.
    let dataset_id = crate::studies::pipeline::dataset_id(&db, "demo").await.unwrap();
    let outcomes: Vec<(i64, Outcome, Option<String>)> =
        items.iter().map(|id| (*id, Outcome::default(), None)).collect();
    let mut tx = db.begin().await.unwrap();
    crate::store::runs::replace_run(&mut tx, dataset_id, "M", "test", None, &outcomes).await.unwrap();
    tx.commit().await.unwrap();
    let failures =
        crate::models::failures::failures(&db, crate::kinds::KINDS, "demo", "M", "group", None).await.unwrap();
    assert_eq!(failures.len(), items.len());
    for f in failures.iter().filter(|f| survivors.contains_key(&f.instance_id.get())) {
        let want = crate::studies::tasks::image_url(&survivors[&f.instance_id.get()]);
        assert_eq!(f.negative_image_url.as_ref(), Some(&want), "instance {}", f.instance_id);
    }

    // The export of Step 3's survivors.
    let out = dir.path().join("export");
    let req = ExportRequest::parse("demo", "jsonl", Some("step3"), None, None).unwrap();
    let summary = export_to_dir(&db, &images, &req, &out, "test").await.unwrap();
    let text = std::fs::read_to_string(out.join(&summary.files[0])).unwrap();
    let rows: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), survivors.len());
    for r in &rows {
        let id = r["instance_id"].as_i64().unwrap();
        let path = r["negative_image"].as_str().unwrap();
        assert!(path.contains(&survivors[&id]), "instance {id}: {path}");
    }
}

/// Step 3's settled choices name the negative as soon as they settle, before
/// a later study copies them (audit AP: scoring and the comparison read the
/// stand-in until Step 4 was built); an unsettled or discarded item keeps
/// the stand-in, and a model scored on the stand-in is left out where Step 3
/// chose another candidate.
#[tokio::test]
async fn step3_settled_choices_name_the_negative_before_step4() {
    let (_dir, db, researcher, s3, items) = step3_over_the_demo().await;
    let dataset = crate::studies::pipeline::dataset_id(&db, "demo").await.unwrap();
    let negatives = || crate::studies::negatives::of_dataset(&db, crate::kinds::KINDS, dataset);
    let stand_in = negatives().await.unwrap();
    assert_eq!(stand_in.len(), items.len());
    // A model scored before curation, on the stand-ins.
    let early: Vec<(i64, Outcome, Option<String>)> =
        items.iter().map(|id| (*id, Outcome::default(), Some(stand_in[id].clone()))).collect();
    let mut tx = db.begin().await.unwrap();
    crate::store::runs::replace_run(&mut tx, dataset, "early", "test", None, &early).await.unwrap();
    tx.commit().await.unwrap();

    // Every fourth settled item discarded; the last two left open.
    let value = |n: usize| if n % 4 == 3 { "none".to_string() } else { (n % 3 + 1).to_string() };
    for (n, id) in items.iter().enumerate().take(items.len() - 2) {
        adjudication::adjudicate(&db, crate::kinds::KINDS, &researcher, s3, (*id).into(), &value(n), None)
            .await
            .unwrap();
    }
    let now = negatives().await.unwrap();
    let mut replaced = 0;
    for (n, id) in items.iter().enumerate() {
        let slots: Vec<String> =
            sqlx::query_scalar("SELECT image FROM candidates WHERE instance_id = $1 ORDER BY slot")
                .bind(id)
                .fetch_all(&db)
                .await
                .unwrap();
        let want = match value(n).parse::<usize>() {
            Ok(slot) if n < items.len() - 2 => &slots[slot],
            _ => &stand_in[id],
        };
        assert_eq!(&now[id], want, "item {n} (instance {id})");
        replaced += usize::from(want != &stand_in[id]);
    }
    assert!(replaced >= 3, "{replaced}");
    let report = crate::models::compare::compare(&db, crate::kinds::KINDS, "demo", &[], None).await.unwrap();
    let early = report.models.iter().find(|m| m.name == "early").unwrap();
    assert_eq!((early.left_out, early.n), (replaced, items.len() - replaced));

    // A later Step 3 study decides where it settles: a discard there puts
    // back the stand-in (verifier of audit AP), another slot replaces the choice.
    let spec = "name = \"S3b\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = \"all\"\nseed = 4\n";
    let s3b =
        create::create_study(&db, &REGISTRY, &create::parse_spec(&REGISTRY, spec, 0).unwrap(), spec).await.unwrap();
    let (first, second) = (items[0], items[1]);
    assert_ne!(now[&first], stand_in[&first], "item 0 chose slot 1");
    adjudication::adjudicate(&db, crate::kinds::KINDS, &researcher, s3b, first.into(), "none", None).await.unwrap();
    adjudication::adjudicate(&db, crate::kinds::KINDS, &researcher, s3b, second.into(), "0", None).await.unwrap();
    let later = negatives().await.unwrap();
    let slot0: String = sqlx::query_scalar("SELECT image FROM candidates WHERE instance_id = $1 AND slot = 0")
        .bind(second)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!((&later[&first], &later[&second]), (&stand_in[&first], &slot0));
    assert_eq!(later[&items[2]], now[&items[2]], "what the later study left open keeps the earlier choice");
}
