//! In-process CLIP throughput on CPU: `cargo bench --bench scoring`.
//! A ViT-B/32-shaped model (12 layers, width 768 vision / 512 text, patch
//! 32, 224 px) with deterministic random weights, written and loaded like a
//! real checkpoint. Prints images/s and texts/s per batch size, then a full
//! `score` of a small demo dataset and its cached re-run. Few batches: the
//! figures are indicative, not statistically tight. With
//! `HARDNEG_BENCH_DIR=DIR` the data dir (`DIR/data`) and the checkpoint
//! (`DIR/vit-b-32`) are kept there, e.g. for a cross-check with
//! `scripts/scorers/hf_clip_torch_scorer.py`.
use candle_core::{Device, Tensor};
use hardneg::scoring::clip::{read_rgb, ClipEncoder, DeviceChoice};
use hardneg::scoring::config::ClipConfig;
use hardneg::scoring::model::{self, ClipModel};
use hardneg::scoring::preprocess::preprocess;
use hardneg::scoring::run::{score_dataset, ScoreRequest};
use hardneg::scoring::seqs::Seqs;
use hardneg::scoring::testing::{wordlevel_tokenizer_json, write_checkpoint};
use hardneg::scoring::text::{pad_batch, PaddedBatch, TextTokenizer};
use hardneg::store::images::ImageStore;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

const INSTANCES: usize = 16;
/// Issue 15, target 3, beside the figures before it (2 threads, same loaded machine).
const TARGET: &str = "target: images >= 1.0x PyTorch, texts >= 1.5x, embeddings within 1e-5 (before: candle's own ops, printed beside each line)";

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
    drop(ClipEncoder::load(&model, DeviceChoice::Cpu)?);
    println!("loaded (sha256 of the weights included) in {:.1} s", start.elapsed().as_secs_f64());

    let speed = SpeedInputs::new(&model, &store, &rows, &captions)?;
    speed.run(&model, root.join("clip-speed"), std::env::var_os("HARDNEG_BENCH_DIR").is_some())?;
    if std::env::var_os("HARDNEG_BENCH_BATCHES").is_some() {
        return Ok(()); // a profile of the forward passes alone
    }

    let req = ScoreRequest { name: "bench".into(), dataset: "demo".into(), batch: 32 };
    let dataset = hardneg::studies::pipeline::dataset_id(&db, "demo").await?;
    let negatives = hardneg::studies::negatives::of_dataset(&db, hardneg::kinds::KINDS, dataset).await?;
    for label in ["first run", "cached re-run"] {
        let start = Instant::now();
        let enc = ClipEncoder::load(&model, DeviceChoice::Cpu)?;
        let s = score_dataset(&db, &store, Box::new(enc), &req, &negatives, Arc::new(AtomicBool::new(false))).await?;
        println!(
            "score {INSTANCES} instances, {label}: {:.1} s including load ({} images, {} texts encoded)",
            start.elapsed().as_secs_f64(),
            s.images.encoded,
            s.texts.encoded
        );
    }
    Ok(())
}

/// (batch, image reps, text reps): the median of the reps is reported.
const BATCHES: [(usize, usize, usize); 3] = [(1, 7, 21), (8, 3, 9), (32, 3, 5)];
const SPEED_ROWS: usize = 32;

/// The towers' inputs, prepared once so that only the forward passes are timed.
struct SpeedInputs {
    config: ClipConfig,
    pixels: Vec<f32>,
    ids: PaddedBatch,
}

fn median_rate(batch: usize, reps: usize, mut f: impl FnMut() -> candle_core::Result<Tensor>) -> anyhow::Result<f64> {
    f()?; // warm-up
    let mut secs = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        f()?;
        secs.push(start.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    Ok(batch as f64 / secs[reps / 2])
}

impl SpeedInputs {
    fn new(
        model_dir: &Path,
        store: &ImageStore,
        rows: &[(String, String, String)],
        captions: &[String],
    ) -> anyhow::Result<Self> {
        let config = ClipConfig::parse(&std::fs::read_to_string(model_dir.join("config.json"))?)?;
        let size = config.vision_config.image_size;
        let images = (0..SPEED_ROWS)
            .map(|i| Ok(preprocess(&read_rgb(&store.original_path(&rows[i % rows.len()].2))?, size)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let tokenizer =
            TextTokenizer::from_file(&model_dir.join("tokenizer.json"), config.text_config.max_position_embeddings)?;
        let texts: Vec<String> = (0..SPEED_ROWS).map(|i| captions[i % captions.len()].clone()).collect();
        let ids = pad_batch(&tokenizer.encode(&texts)?, config.text_config.eos_token_id);
        Ok(SpeedInputs { pixels: images.concat(), ids, config })
    }

    fn images(&self, b: usize) -> candle_core::Result<Tensor> {
        let size = self.config.vision_config.image_size;
        Tensor::from_slice(&self.pixels[..b * 3 * size * size], (b, 3, size, size), &Device::Cpu)
    }

    fn texts(&self, b: usize) -> candle_core::Result<Tensor> {
        Tensor::from_slice(&self.ids.ids[..b * self.ids.len], (b, self.ids.len), &Device::Cpu)
    }

    /// The first `b` captions' tokens up to end-of-text, and the rows the
    /// text tower computes for them (each distinct prefix once).
    fn rows(&self, b: usize) -> (usize, usize) {
        let rows: Vec<&[u32]> =
            self.ids.ids.chunks(self.ids.len).zip(&self.ids.pool).take(b).map(|(r, &p)| &r[..=p]).collect();
        (rows.iter().map(|r| r.len()).sum(), Seqs::shared(&rows).0.rows())
    }

    /// Rates (images/s, texts/s) of one model's forward passes alone.
    fn rates(&self, model: &ClipModel, b: usize, img_reps: usize, txt_reps: usize) -> anyhow::Result<(f64, f64)> {
        let (pixels, ids) = (self.images(b)?, self.texts(b)?);
        // HARDNEG_BENCH_REPS=N: N times the repetitions, e.g. for a profile.
        let times: usize = std::env::var("HARDNEG_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
        let (img_reps, txt_reps) = (img_reps * times, txt_reps * times);
        // HARDNEG_BENCH_TOWER=images (or texts): time only that tower, e.g. to profile it.
        let tower = std::env::var("HARDNEG_BENCH_TOWER").unwrap_or_default();
        let (img, txt) = (tower != "texts", tower != "images");
        let img = if img { median_rate(b, img_reps, || model.encode_images(&pixels))? } else { f64::NAN };
        let txt =
            if txt { median_rate(b, txt_reps, || model.encode_text(&ids, &self.ids.pool[..b]))? } else { f64::NAN };
        Ok((img, txt))
    }

    /// Unit-length (images, texts) embeddings of all the inputs.
    fn embeddings(&self, model: &ClipModel) -> anyhow::Result<(Tensor, Tensor)> {
        let images = model.encode_images(&self.images(SPEED_ROWS)?)?;
        Ok((images, model.encode_text(&self.texts(SPEED_ROWS)?, &self.ids.pool)?))
    }

    /// Times the towers' forward passes alone, the CPU kernels alternating
    /// with the plain candle ops they replace; with `keep`, writes the
    /// inputs, the rates and the embeddings to `out` for
    /// `scripts/reference/clip_speed.py`.
    fn run(&self, model_dir: &Path, out: PathBuf, keep: bool) -> anyhow::Result<()> {
        let weights = model_dir.join("model.safetensors");
        let kernels = model::load(&weights, &self.config, &Device::Cpu)?;
        let ops = model::load_candle_ops(&weights, &self.config, &Device::Cpu)?;
        let threads = candle_core::utils::get_num_threads();
        println!("forward passes only, {threads} threads (RAYON_NUM_THREADS), same inputs as clip_speed.py:");
        let (mut img_rates, mut txt_rates) = (serde_json::Map::new(), serde_json::Map::new());
        // HARDNEG_BENCH_OPS=0: the kernels alone (quicker runs to alternate with PyTorch's).
        let with_ops = std::env::var("HARDNEG_BENCH_OPS").map_or(true, |v| v != "0");
        // HARDNEG_BENCH_BATCHES=32 (or 1,8): only those batch sizes and no
        // embeddings or scoring after them, e.g. to profile one.
        let only = std::env::var("HARDNEG_BENCH_BATCHES").ok();
        let picked = |b: usize| only.as_deref().is_none_or(|o| o.split(',').any(|s| s.trim() == b.to_string()));
        for (b, img_reps, txt_reps) in BATCHES.into_iter().filter(|&(b, ..)| picked(b)) {
            let (old_img, old_txt) =
                if with_ops { self.rates(&ops, b, img_reps, txt_reps)? } else { (f64::NAN, f64::NAN) };
            let (img, txt) = self.rates(&kernels, b, img_reps, txt_reps)?;
            let (tokens, rows) = self.rows(b);
            println!(
                "batch {b:>2}: {img:6.2} images/s  {txt:6.2} texts/s  (candle ops: {old_img:6.2} images/s  {old_txt:6.2} texts/s; \
                 captions: {tokens} tokens, {rows} distinct prefixes computed)"
            );
            img_rates.insert(b.to_string(), img.into());
            txt_rates.insert(b.to_string(), txt.into());
        }
        if only.is_some() {
            return Ok(());
        }
        let (images, texts) = self.embeddings(&kernels)?;
        let (old_images, old_texts) = self.embeddings(&ops)?;
        let diff =
            |a: &Tensor, b: &Tensor| -> anyhow::Result<f32> { Ok((a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar()?) };
        println!(
            "max |kernels - candle ops| per component: images {:.1e}, texts {:.1e}",
            diff(&images, &old_images)?,
            diff(&texts, &old_texts)?
        );
        println!("{TARGET}");
        if keep {
            std::fs::create_dir_all(&out)?;
            let bytes: Vec<u8> = self.pixels.iter().flat_map(|v| v.to_le_bytes()).collect();
            std::fs::write(out.join("pixels.f32"), bytes)?;
            let rows: Vec<&[u32]> = self.ids.ids.chunks(self.ids.len).collect();
            std::fs::write(out.join("ids.json"), serde_json::json!({ "ids": rows }).to_string())?;
            let candle = serde_json::json!({
                "threads": threads,
                "images_per_s": img_rates,
                "texts_per_s": txt_rates,
                "image_embeddings": images.to_vec2::<f32>()?,
                "text_embeddings": texts.to_vec2::<f32>()?,
            });
            std::fs::write(out.join("candle.json"), candle.to_string())?;
            println!("kept the inputs, rates and embeddings in {}", out.display());
        }
        Ok(())
    }
}
