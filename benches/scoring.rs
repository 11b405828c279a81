//! In-process CLIP throughput on CPU: `cargo bench --bench scoring`.
//! A ViT-B/32-shaped model (12 layers, width 768 vision / 512 text, patch
//! 32, 224 px) with deterministic random weights, written and loaded like a
//! real checkpoint. Prints images/s and texts/s per batch size, then a full
//! `score` of a small demo dataset and its cached re-run. Few batches: the
//! figures are indicative, not statistically tight. With
//! `HARDNEG_BENCH_DIR=DIR` the data dir (`DIR/data`) and the checkpoint
//! (`DIR/vit-b-32`) are kept there, e.g. for a cross-check with
//! `scripts/scorers/hf_clip_torch_scorer.py`.
use hardneg::scoring::clip::{ClipEncoder, DeviceChoice};
use hardneg::scoring::config::ClipConfig;
use hardneg::scoring::encoder::{Encoder, ImageRef};
use hardneg::scoring::run::{score_dataset, ScoreRequest};
use hardneg::scoring::testing::{wordlevel_tokenizer_json, write_checkpoint};
use hardneg::store::images::ImageStore;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

const INSTANCES: usize = 16;

fn rate(n: usize, start: Instant) -> f64 {
    n as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let root =
        std::env::var_os("HARDNEG_BENCH_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().to_path_buf());
    let data = root.join("data");
    std::fs::create_dir_all(&data)?;
    let db = hardneg::store::db::open_pool(&data.join("hardneg.sqlite")).await?;
    let store = ImageStore::new(data.join("images"));
    hardneg::cli::demo_seed::seed_demo_dataset(&db, &store, INSTANCES).await?;
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT caption, negative_caption, positive_image FROM instances").fetch_all(&db).await?;
    let captions: Vec<String> = rows.iter().flat_map(|(a, b, _)| [a.clone(), b.clone()]).collect();
    let words: Vec<&str> =
        captions.iter().flat_map(|c| c.split(|ch: char| !ch.is_alphanumeric())).filter(|w| !w.is_empty()).collect();

    let model = root.join("vit-b-32");
    let start = Instant::now();
    let (tokenizer, vocab) = wordlevel_tokenizer_json(&words);
    let mut config = ClipConfig::vit_b_32();
    config.text_config.eos_token_id = Some(vocab as u32 - 1);
    write_checkpoint(&model, &config, &tokenizer, 1)?;
    println!("wrote a ViT-B/32-shaped checkpoint in {:.1} s", start.elapsed().as_secs_f64());
    let start = Instant::now();
    let mut enc = ClipEncoder::load(&model, DeviceChoice::Cpu)?;
    println!("loaded (sha256 of the weights included) in {:.1} s", start.elapsed().as_secs_f64());

    let image = |i: usize| {
        let h = &rows[i % rows.len()].2;
        ImageRef { hash: h.clone(), path: store.original_path(h) }
    };
    enc.encode_images(&[image(0)])?; // warm-up
    for (batch, reps) in [(1usize, 3usize), (8, 1), (32, 1)] {
        let images: Vec<ImageRef> = (0..batch).map(image).collect();
        let start = Instant::now();
        for _ in 0..reps {
            enc.encode_images(&images)?;
        }
        let img_rate = rate(batch * reps, start);
        let texts: Vec<String> = (0..batch).map(|i| captions[i % captions.len()].clone()).collect();
        let start = Instant::now();
        for _ in 0..reps * 4 {
            enc.encode_texts(&texts)?;
        }
        println!("batch {batch:>2}: {img_rate:6.1} images/s  {:6.1} texts/s", rate(batch * reps * 4, start));
    }
    drop(enc);

    let req = ScoreRequest { name: "bench".into(), dataset: "demo".into(), batch: 32 };
    for label in ["first run", "cached re-run"] {
        let start = Instant::now();
        let enc = ClipEncoder::load(&model, DeviceChoice::Cpu)?;
        let s = score_dataset(&db, &store, Box::new(enc), &req, Arc::new(AtomicBool::new(false))).await?;
        println!(
            "score {INSTANCES} instances, {label}: {:.1} s including load ({} images, {} texts encoded)",
            start.elapsed().as_secs_f64(),
            s.images.encoded,
            s.texts.encoded
        );
    }
    Ok(())
}
