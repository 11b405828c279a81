//! At demo start, the two demo scorers ([`crate::demo::scorers`]) rate every
//! demo instance from its stored images and land in the run store like any
//! imported or scored model, so the comparison page shows real numbers.
//! Rerun on every start (a fraction of a second), so the runs follow the
//! negatives that curation has chosen since.
use crate::demo::reader::read_png;
use crate::demo::scorers::DemoScorer;
use crate::demo::Scene;
use crate::domain::metrics::Outcome;
use crate::store::images::ImageStore;
use crate::store::rows::from_row;
use crate::store::runs::{replace_run, RunOutcome};
use anyhow::Context;
use sqlx::AnyPool;
use std::collections::HashMap;

/// An instance as stored: its positive image may be missing.
struct Stored {
    id: i64,
    caption: String,
    negative_caption: String,
    positive: Option<String>,
}
from_row!(Stored { id, caption, negative_caption, positive });

struct Row {
    id: i64,
    caption: String,
    negative_caption: String,
    positive: String,
    negative: String,
}

/// Scores the dataset's instances that have both images with both demo
/// scorers and stores the runs. Returns the number of instances scored.
pub async fn score_demo_models(db: &AnyPool, images: &ImageStore, dataset: &str) -> anyhow::Result<usize> {
    let Some(dataset_id): Option<crate::domain::ids::DatasetId> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(dataset).fetch_optional(db).await?
    else {
        return Ok(0);
    };
    let negatives = crate::studies::negatives::of_dataset(db, crate::kinds::KINDS, dataset_id).await?;
    let rows: Vec<Stored> = sqlx::query_as(
        "SELECT i.id, i.caption, i.negative_caption, i.positive_image AS positive
         FROM instances i WHERE i.dataset_id = $1 ORDER BY i.id",
    )
    .bind(dataset_id)
    .fetch_all(db)
    .await?;
    let rows: Vec<Row> = rows
        .into_iter()
        .filter_map(|r| {
            let (positive, negative) = (r.positive?, negatives.get(&r.id)?.clone());
            Some(Row { id: r.id, caption: r.caption, negative_caption: r.negative_caption, positive, negative })
        })
        .collect();
    let images = images.clone();
    let runs = tokio::task::spawn_blocking(move || rate(&images, &rows)).await??;
    let mut tx = crate::store::db::begin_write(db).await?;
    for (scorer, outcomes) in DemoScorer::ALL.iter().zip(&runs) {
        replace_run(&mut tx, dataset_id, scorer.name(), "demo scorer", Some("cpu"), outcomes).await?;
    }
    tx.commit().await?;
    Ok(runs[0].len())
}

/// Reads a stored picture into a scene.
fn read_stored(images: &ImageStore, hash: &str) -> anyhow::Result<Scene> {
    let path = images.original_path(hash);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    read_png(&bytes).with_context(|| format!("{}: not a PNG", path.display()))
}

/// Per scorer, the outcome of every instance; each image is read once,
/// spread over the cores.
fn rate(images: &ImageStore, rows: &[Row]) -> anyhow::Result<Vec<Vec<RunOutcome>>> {
    let mut hashes: Vec<&str> = rows.iter().flat_map(|r| [r.positive.as_str(), r.negative.as_str()]).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let read: Vec<anyhow::Result<Scene>> = std::thread::scope(|s| {
        let parts: Vec<_> = hashes
            .chunks(hashes.len().div_ceil(threads).max(1))
            .map(|part| s.spawn(move || part.iter().map(|h| read_stored(images, h)).collect::<Vec<_>>()))
            .collect();
        parts.into_iter().flat_map(|p| p.join().expect("reading does not panic")).collect()
    });
    let mut scenes: HashMap<&str, Scene> = HashMap::with_capacity(hashes.len());
    for (hash, scene) in hashes.iter().zip(read) {
        scenes.insert(hash, scene?);
    }
    Ok(DemoScorer::ALL
        .iter()
        .map(|scorer| {
            rows.iter()
                .map(|r| {
                    let s = scorer.similarities(
                        &r.caption,
                        &r.negative_caption,
                        &scenes[r.positive.as_str()],
                        &scenes[r.negative.as_str()],
                    );
                    (r.id, Outcome::from_scores(s), Some(r.negative.clone()))
                })
                .collect()
        })
        .collect())
}
