//! The `hardneg score` command: picks the encoder, wires Ctrl-C to a
//! cancel flag checked between batches, scores the dataset (a ranking
//! dataset per image), prints the summary.
use super::clip::{ClipEncoder, DeviceChoice};
use super::encoder::Encoder;
use super::external::ExternalScorer;
use super::precision::Precision;
use super::rankings::{is_ranking_dataset, score_rankings};
use super::run::{dataset_id, score_dataset, Counts, ScoreRequest};
use crate::store::images::ImageStore;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub enum Model {
    /// A Hugging Face CLIP directory, run in-process.
    Dir { path: PathBuf, device: DeviceChoice, precision: Precision },
    /// A shell command speaking docs/scorer-protocol.md.
    External(String),
}

/// The first Ctrl-C sets the flag (the run stops after the current batch);
/// a second one exits at once.
fn cancel_on_ctrl_c() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if set.swap(true, Ordering::SeqCst) {
                eprintln!("interrupted again: exiting");
                std::process::exit(130);
            }
            eprintln!("cancelling after the current batch (Ctrl-C again to quit now)");
        }
    });
    flag
}

/// `negatives`: each instance's negative image (`studies::negatives`).
pub async fn run_score(
    db: &AnyPool,
    store: &ImageStore,
    model: Model,
    req: ScoreRequest,
    negatives: &HashMap<i64, String>,
) -> anyhow::Result<()> {
    anyhow::ensure!(req.batch > 0, "--batch must be at least 1");
    // The dataset named is found before a model takes seconds to load.
    let dataset_id = dataset_id(db, &req.dataset).await?;
    let cancel = cancel_on_ctrl_c();
    let encoder: Box<dyn Encoder> = match model {
        Model::Dir { path, device, precision } => {
            eprintln!("loading {} (hashing the weights for the cache key)", path.display());
            Box::new(tokio::task::spawn_blocking(move || ClipEncoder::load_with(&path, device, precision)).await??)
        }
        Model::External(cmd) => {
            let scorer = tokio::task::spawn_blocking(move || ExternalScorer::spawn(&cmd)).await??;
            eprintln!("scorer ready: {}", scorer.hello().model);
            Box::new(scorer)
        }
    };
    if is_ranking_dataset(db, dataset_id).await? {
        anyhow::ensure!(!req.name.trim().is_empty(), "--name must not be empty");
        let s = score_rankings(db, store, encoder, &req, dataset_id, cancel).await?;
        let replaced = if s.replaced { ", replacing its earlier scores" } else { "" };
        println!(
            "scored {} images of {} prompts of dataset {} as {} on {}{replaced}",
            s.scores, s.prompts, req.dataset, req.name, s.device
        );
        print_encoded(s.images, s.texts);
        return Ok(());
    }
    let s = score_dataset(db, store, encoder, &req, negatives, cancel).await?;
    let replaced = if s.replaced_run { ", replacing the earlier run" } else { "" };
    println!("scored {} instances of dataset {} as {} on {}{replaced}", s.instances, req.dataset, req.name, s.device);
    print_encoded(s.images, s.texts);
    if s.skipped > 0 {
        println!("skipped {} instances without a positive or a negative image", s.skipped);
    }
    Ok(())
}

fn print_encoded(images: Counts, texts: Counts) {
    println!(
        "encoded {} images and {} texts ({} images and {} texts from the cache)",
        images.encoded, texts.encoded, images.cached, texts.cached
    );
}
