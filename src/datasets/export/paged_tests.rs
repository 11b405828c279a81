//! Paged reads give the same export, byte for byte, whatever the page size:
//! a dataset of more instances than one default page (1,024 ids), exported
//! with pages of 4 ids (hundreds of page boundaries, each inside the answer
//! stream) and with a single page.
use super::*;
use crate::cli::bulk_seed;
use crate::studies::outcomes::study_outcomes_paged;

const INSTANCES: usize = 3_000;

async fn export_files(pool: &AnyPool, dir: &Path, format: &str, stage: &str, shift: u32) -> Vec<(String, Vec<u8>)> {
    let req = ExportRequest::parse(bulk_seed::DATASET, format, Some(stage), None, None).unwrap();
    let out = dir.join(format!("out-{format}-{stage}-{shift}"));
    let store = ImageStore::new(dir.join("images"));
    let summary = export_paged(pool, &store, &req, &out, "test", &|| false, shift).await.unwrap();
    let names = summary.files.iter().map(String::as_str).chain(["README.md"]);
    let files = names.map(|f| (f.to_string(), std::fs::read(out.join(f)).unwrap())).collect();
    std::fs::remove_dir_all(&out).unwrap();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_many_page_export_equals_a_single_page_export() {
    let dir = tempfile::tempdir().unwrap();
    let pool = bulk_seed::build(dir.path(), INSTANCES).await.unwrap();
    for format in ["csv", "jsonl", "parquet"] {
        for stage in ["final", "candidates"] {
            let small = export_files(&pool, dir.path(), format, stage, 2).await;
            let whole = export_files(&pool, dir.path(), format, stage, 20).await;
            assert_eq!(small, whole, "{format} {stage}");
            if format == "jsonl" {
                // The rows files (the answers files are CSV beside them).
                let rows = whole.iter().filter(|(name, _)| name.ends_with(".jsonl"));
                let lines: usize = rows.map(|(_, b)| b.iter().filter(|&&c| c == b'\n').count()).sum();
                let want = if stage == "candidates" { INSTANCES } else { final_rows(&pool).await };
                assert_eq!(lines, want, "{stage}");
                assert!(want > 1024, "more rows than one default page: {want}");
            }
        }
    }
    // The card's funnel counts every instance, also those the final stage
    // drops (the rows skip them): as the dataset's own funnel does.
    let card = export_files(&pool, dir.path(), "csv", "final", 10).await.pop().unwrap();
    let card = String::from_utf8(card.1).unwrap();
    let f = crate::studies::pipeline::dataset_funnel(&pool, crate::kinds::KINDS, bulk_seed::DATASET).await.unwrap();
    let row = |name: &str, c: &crate::domain::funnel::StageCounts| {
        format!("| {name} | {} | {} | {} |", c.candidates, c.step3_kept, c.step3_discarded)
    };
    assert_eq!(f.overall.candidates, INSTANCES as u64);
    assert!(card.contains(&row("**all**", &f.overall)), "{card}");
    for (name, counts) in &f.by_subtype {
        assert!(card.contains(&row(name, counts)), "{name}: {card}");
    }
    // Every row carries its votes of both steps; shared items carry both annotators'.
    let (_, jsonl) = &export_files(&pool, dir.path(), "jsonl", "final", 3).await[0];
    let mut shared = 0;
    for line in String::from_utf8_lossy(jsonl).lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for step in ["step3_votes", "step4_votes"] {
            let votes = row[step].as_array().unwrap();
            assert!(!votes.is_empty() && votes.len() <= 2, "{line}");
            shared += (votes.len() == 2) as usize;
        }
    }
    assert!(shared > 0);
}

/// Instances both steps kept, counted from the stored answers alone:
/// "first" settles on the earliest answer (same second: the earlier arrival, then the lower task id).
async fn final_rows(pool: &AnyPool) -> usize {
    let n: i64 = sqlx::query_scalar(
        "WITH firsts AS (SELECT s.name, a.instance_id, a.value,
                                row_number() OVER (PARTITION BY a.study_id, a.instance_id ORDER BY a.answered_at, a.arrival, a.task_id) AS k
                         FROM answers a JOIN studies s ON s.id = a.study_id)
         SELECT count(*) FROM firsts f3 JOIN firsts f4 ON f4.instance_id = f3.instance_id AND f4.name = 'S4' AND f4.k = 1
         WHERE f3.name = 'S3' AND f3.k = 1 AND f3.value <> 'none' AND f4.value = 'real'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    n as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn study_outcomes_do_not_depend_on_the_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let pool = bulk_seed::build(dir.path(), INSTANCES).await.unwrap();
    let studies: Vec<crate::domain::ids::StudyId> =
        sqlx::query_scalar("SELECT id FROM studies ORDER BY id").fetch_all(&pool).await.unwrap();
    for study in studies {
        let (_, small, small_votes) = study_outcomes_paged(&pool, crate::kinds::KINDS, study, 1).await.unwrap();
        let (_, whole, whole_votes) = study_outcomes_paged(&pool, crate::kinds::KINDS, study, 20).await.unwrap();
        assert!(small.len() > 1024, "{}", small.len());
        assert_eq!(format!("{small:?}"), format!("{whole:?}"));
        for i in 0..small.len() {
            let (a, b): (Vec<_>, Vec<_>) = (small_votes.of(i).collect(), whole_votes.of(i).collect());
            assert_eq!(a, b, "item {i}");
            assert!(!a.is_empty(), "every planned task of the bench is answered");
        }
    }
}

/// Every instance of the bench dataset shows the same six images: the rows
/// name them all, yet each is placed once, as the store's own file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_images_are_placed_once_and_every_row_finds_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let pool = bulk_seed::build(dir.path(), 1_500).await.unwrap();
    let store = ImageStore::new(dir.path().join("images"));
    let req = ExportRequest::parse(bulk_seed::DATASET, "jsonl", Some("candidates"), None, None).unwrap();
    let out = dir.path().join("out");
    let summary = export_to_dir(&pool, &store, &req, &out, "test").await.unwrap();
    let placed: Vec<_> = std::fs::read_dir(out.join("images")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!((summary.images, placed.len()), (6, 6));
    for file in &placed {
        let hash = file.file_stem().unwrap().to_str().unwrap();
        assert_eq!(std::fs::read(file).unwrap(), std::fs::read(store.original_path(hash)).unwrap());
    }
    let rows = std::fs::read_to_string(out.join("data.jsonl")).unwrap();
    let mut named = std::collections::BTreeSet::new();
    for line in rows.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for col in ["image", "candidate_0", "candidate_1", "candidate_2", "candidate_3"] {
            named.insert(row[col].as_str().unwrap().to_string());
        }
    }
    assert_eq!(rows.lines().count(), 1_500);
    let on_disk: std::collections::BTreeSet<_> =
        placed.iter().map(|p| format!("images/{}", p.file_name().unwrap().to_str().unwrap())).collect();
    assert_eq!(named, on_disk);
}

/// The card's blind audit is scored on the captions of the rows as they are
/// exported; it must equal the audit of the stage read on its own (the
/// dataset page's), stored external results included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cards_audit_equals_the_stages_audit() {
    let dir = tempfile::tempdir().unwrap();
    let pool = bulk_seed::build(dir.path(), 1_500).await.unwrap();
    // A prompt to rank (no negative caption) is left out of the audit.
    sqlx::query("UPDATE instances SET negative_caption = ' ' WHERE id % 10 = 0").execute(&pool).await.unwrap();
    let rows = r#"[{"subset":"all","instances":3,"positive":2,"ties":0,"rate":0.66,"low":0.2,"high":0.9}]"#;
    sqlx::query("INSERT INTO audits (dataset_id, stage, scorer, source, rows, created_at) SELECT id, 'final', 'ext', 'external: x', $1, 1 FROM datasets")
        .bind(rows)
        .execute(&pool)
        .await
        .unwrap();
    let store = ImageStore::new(dir.path().join("images"));
    for stage in ["final", "candidates"] {
        let req = ExportRequest::parse(bulk_seed::DATASET, "csv", Some(stage), None, None).unwrap();
        let out = dir.path().join(format!("out-{stage}"));
        export_to_dir(&pool, &store, &req, &out, "test").await.unwrap();
        let card = std::fs::read_to_string(out.join("README.md")).unwrap();
        let audits = crate::datasets::audit::stage_audits(&pool, bulk_seed::DATASET, Some(req.stage)).await.unwrap();
        // Ids 1..=1500, every tenth without a negative caption.
        let audited = audits[0].rows[0].instances;
        assert!(if stage == "final" { audited > 500 } else { audited == 1_350 }, "{stage}: {audited}");
        assert_eq!(audits.len(), if stage == "final" { 3 } else { 2 });
        let table = crate::domain::audit::render(&audits);
        assert!(card.contains(&format!("\n```\n{table}```\n")), "{stage}:\n{card}");
    }
}

/// An export that fails partway (an image the store lost) leaves nothing
/// at `--out` and no partial directory; one into an empty directory fills it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_export_leaves_no_short_dataset_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pool = bulk_seed::build(dir.path(), 200).await.unwrap();
    let store = ImageStore::new(dir.path().join("images"));
    let req = ExportRequest::parse(bulk_seed::DATASET, "csv", Some("candidates"), None, None).unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    export_to_dir(&pool, &store, &req, &empty, "test").await.unwrap();
    assert_eq!(std::fs::read_to_string(empty.join("data.csv")).unwrap().lines().count(), 201);

    let hash: String =
        sqlx::query_scalar("SELECT positive_image FROM instances WHERE positive_image IS NOT NULL LIMIT 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    std::fs::remove_file(store.original_path(&hash)).unwrap();
    let out = dir.path().join("out");
    let err = export_to_dir(&pool, &store, &req, &out, "test").await.unwrap_err();
    assert!(!out.exists(), "{err}");
    assert!(
        err.to_string().contains(&format!("the image store lacks {}", store.original_path(&hash).display())),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains("partial")), "{left:?}");
}
