//! The in-process encoder: a Hugging Face CLIP directory (`config.json`,
//! `model.safetensors`, `tokenizer.json`) run with candle.
use super::config::ClipConfig;
use super::encoder::{CacheIdentity, Encoder, ImagePrep, ImageRef, PreparedImages};
use super::model::{self, ClipModel};
use super::precision::Precision;
use super::preprocess::{preprocess, Rgb, PREPROCESS_VERSION};
use super::text::{pad_batch, TextTokenizer};
use anyhow::Context;
use candle_core::{Device, Tensor};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceChoice {
    /// CUDA device 0 when built with `cuda` and one is present, else CPU.
    Auto,
    Cpu,
    Cuda,
}

impl DeviceChoice {
    pub fn parse(s: &str) -> Option<DeviceChoice> {
        match s {
            "auto" => Some(DeviceChoice::Auto),
            "cpu" => Some(DeviceChoice::Cpu),
            "cuda" => Some(DeviceChoice::Cuda),
            _ => None,
        }
    }
}

/// What a checkpoint directory holds: [`ClipEncoder::load_with`] reads each.
pub const CHECKPOINT_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

pub const NO_CUDA: &str = "--device cuda: this hardneg was built without the `cuda` feature";

/// The device and its label for the run record.
pub fn select_device(choice: DeviceChoice) -> anyhow::Result<(Device, String)> {
    let device = match choice {
        DeviceChoice::Cpu => Device::Cpu,
        // Built with cuda but no usable GPU (or driver): the CPU, said once.
        DeviceChoice::Auto if cfg!(feature = "cuda") => Device::new_cuda(0).unwrap_or_else(|e| {
            eprintln!("--device auto: no usable CUDA device 0 ({e}); running on the CPU");
            Device::Cpu
        }),
        DeviceChoice::Auto => Device::Cpu,
        DeviceChoice::Cuda if !cfg!(feature = "cuda") => {
            anyhow::bail!(NO_CUDA)
        }
        DeviceChoice::Cuda => Device::new_cuda(0).context("--device cuda: no usable CUDA device 0")?,
    };
    let label = if device.is_cuda() { "cuda:0" } else { "cpu" };
    Ok((device, label.to_string()))
}

/// Streams the file through SHA-256 (hex).
pub fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

pub struct ClipEncoder {
    model: ClipModel,
    precision: Precision,
    tokenizer: TextTokenizer,
    config: ClipConfig,
    device: Device,
    label: String,
    weights_sha256: String,
    /// Digest of config.json and tokenizer.json: they shape embeddings as
    /// much as the preprocessing does, so editing them must miss the cache.
    setup: String,
    dir: PathBuf,
}

impl ClipEncoder {
    /// In f32.
    pub fn load(dir: &Path, choice: DeviceChoice) -> anyhow::Result<ClipEncoder> {
        ClipEncoder::load_with(dir, choice, Precision::F32)
    }

    /// With the products in `precision` (`--dtype`).
    pub fn load_with(dir: &Path, choice: DeviceChoice, precision: Precision) -> anyhow::Result<ClipEncoder> {
        // First: a wrong --device should not wait for the weights to be hashed.
        let (device, label) = select_device(choice)?;
        if precision != Precision::F32 && !device.is_cuda() {
            // Measured at ViT-B/32 (docs/performance.md, session 57): bf16 at ~0.55x f32's speed.
            eprintln!(
                "--dtype {}: emulated on the CPU (rounded to {0}, multiplied in f32), slower than f32: \
                 for checking the GPU's numbers, not for speed",
                precision.as_str()
            );
        }
        let config_path = dir.join("config.json");
        let text =
            std::fs::read_to_string(&config_path).with_context(|| format!("reading {}", config_path.display()))?;
        let config = ClipConfig::parse(&text).with_context(|| config_path.display().to_string())?;
        let weights = dir.join("model.safetensors");
        let weights_sha256 = sha256_file(&weights)?;
        let model = model::load_precision(&weights, &config, &device, precision)
            .with_context(|| format!("loading {}", weights.display()))?;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = TextTokenizer::from_file(&tokenizer_path, config.text_config.max_position_embeddings)?;
        let mut setup = Sha256::new();
        setup.update(text.as_bytes());
        setup.update(std::fs::read(&tokenizer_path)?);
        let setup = hex::encode(setup.finalize())[..16].to_string();
        Ok(ClipEncoder {
            model,
            precision,
            tokenizer,
            config,
            device,
            label,
            weights_sha256,
            setup,
            dir: dir.to_path_buf(),
        })
    }

    pub fn config(&self) -> &ClipConfig {
        &self.config
    }
}

/// Reads and decodes an image file to RGB (alpha dropped, as PIL's
/// `convert("RGB")` does).
pub fn read_rgb(path: &Path) -> anyhow::Result<Rgb> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    decode_rgb(&bytes, path)
}

fn decode_rgb(bytes: &[u8], path: &Path) -> anyhow::Result<Rgb> {
    let img = image::load_from_memory(bytes).with_context(|| format!("decoding {}", path.display()))?.to_rgb8();
    Ok(Rgb { width: img.width() as usize, height: img.height() as usize, data: img.into_raw() })
}

/// A stored image, refused unless its bytes still hash to its id: the
/// embedding is cached under that id, so a file changed in the store would
/// leave a wrong vector in the cache for good (audit AP).
fn read_stored_rgb(image: &ImageRef) -> anyhow::Result<Rgb> {
    let path = &image.path;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    anyhow::ensure!(
        crate::store::images::sha256_hex(&bytes) == image.hash,
        "image {} ({}): its bytes no longer hash to its id; the image store was changed (restore the file)",
        image.hash,
        path.display()
    );
    decode_rgb(&bytes, path)
}

/// OpenAI's CLIP preprocessing of a batch, spread over the rayon pool.
struct ClipPrep {
    size: usize,
}

impl ImagePrep for ClipPrep {
    fn prepare(&self, images: &[ImageRef]) -> anyhow::Result<PreparedImages> {
        let pixels: Vec<Vec<f32>> = images
            .par_iter()
            .map(|r| Ok(preprocess(&read_stored_rgb(r)?, self.size)))
            .collect::<anyhow::Result<_>>()?;
        Ok(PreparedImages { count: images.len(), pixels: pixels.concat() })
    }
}

impl Encoder for ClipEncoder {
    /// f32 keeps the key it always had; bf16 and f16 vectors get their own
    /// (`;dtype=bf16`), so the precisions never mix in the cache.
    fn identity(&self) -> Option<CacheIdentity> {
        let dtype = match self.precision {
            Precision::F32 => String::new(),
            p => format!(";dtype={}", p.as_str()),
        };
        Some(CacheIdentity {
            weights: self.weights_sha256.clone(),
            preprocess: format!("{PREPROCESS_VERSION};setup={}{dtype}", self.setup),
        })
    }

    /// `cpu`, `cuda:0`, and the precision unless f32: `cuda:0 bf16`.
    fn device(&self) -> String {
        match self.precision {
            Precision::F32 => self.label.clone(),
            p => format!("{} {}", self.label, p.as_str()),
        }
    }

    fn source(&self) -> String {
        format!("candle: {}", self.dir.display())
    }

    fn encode_images(&mut self, images: &[ImageRef]) -> anyhow::Result<Vec<Vec<f32>>> {
        let prepared = ClipPrep { size: self.config.vision_config.image_size }.prepare(images)?;
        self.encode_prepared(prepared)
    }

    fn image_prep(&self) -> Option<Arc<dyn ImagePrep>> {
        Some(Arc::new(ClipPrep { size: self.config.vision_config.image_size }))
    }

    fn encode_prepared(&mut self, batch: PreparedImages) -> anyhow::Result<Vec<Vec<f32>>> {
        let size = self.config.vision_config.image_size;
        let input = Tensor::from_vec(batch.pixels, (batch.count, 3, size, size), &self.device)?;
        Ok(self.model.encode_images(&input)?.to_vec2::<f32>()?)
    }

    fn encode_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let batch = pad_batch(&self.tokenizer.encode(texts)?, self.config.text_config.eos_token_id);
        let ids = Tensor::from_vec(batch.ids, (batch.rows, batch.len), &self.device)?;
        Ok(self.model.encode_text(&ids, &batch.pool)?.to_vec2::<f32>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_image_whose_bytes_changed_is_refused_not_encoded() {
        let dir = tempfile::tempdir().unwrap();
        let mut png = Vec::new();
        image::RgbImage::from_pixel(3, 2, image::Rgb([200, 10, 10]))
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, &png).unwrap();
        let hash = crate::store::images::sha256_hex(&png);
        let rgb = read_stored_rgb(&ImageRef { hash: hash.clone(), path: path.clone() }).unwrap();
        assert_eq!((rgb.width, rgb.height, &rgb.data[..3]), (3, 2, &[200, 10, 10][..]));
        // Another valid image under the same id: decodable, but not the image the id names.
        let mut other = Vec::new();
        image::RgbImage::from_pixel(3, 2, image::Rgb([0, 0, 255]))
            .write_to(&mut std::io::Cursor::new(&mut other), image::ImageFormat::Png)
            .unwrap();
        std::fs::write(&path, &other).unwrap();
        let err = read_stored_rgb(&ImageRef { hash: hash.clone(), path }).unwrap_err().to_string();
        assert!(err.contains(&hash) && err.contains("no longer hash to its id"), "{err}");
    }
}
