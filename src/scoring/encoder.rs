//! What the scoring run needs from a model, in-process or external.
use std::path::PathBuf;
use std::sync::Arc;

/// An image to encode: its content hash (the store's id) and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub hash: String,
    pub path: PathBuf,
}

/// Besides the run name and the content hash, what an embedding depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheIdentity {
    /// sha256 of the weights file, or an external scorer's fingerprint.
    pub weights: String,
    pub preprocess: String,
}

/// Blocking: the run calls it on a blocking thread, one batch at a time.
/// Every returned vector has unit length.
pub trait Encoder: Send {
    /// `None` when the model cannot name its weights: nothing is cached.
    fn identity(&self) -> Option<CacheIdentity>;
    /// Where it runs, recorded with the run: `cpu`, `cuda:0`, ….
    fn device(&self) -> String;
    /// Provenance recorded with the run.
    fn source(&self) -> String;
    fn encode_images(&mut self, images: &[ImageRef]) -> anyhow::Result<Vec<Vec<f32>>>;
    fn encode_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>>;
    /// The CPU half of `encode_images` (decoding, resizing), when the
    /// model can take its output: the run then prepares the next batches
    /// on other threads while the model encodes one (`feed`).
    fn image_prep(&self) -> Option<Arc<dyn ImagePrep>> {
        None
    }
    /// The model half: what `image_prep` made.
    fn encode_prepared(&mut self, batch: PreparedImages) -> anyhow::Result<Vec<Vec<f32>>> {
        anyhow::bail!("this encoder takes no prepared images ({} given)", batch.count)
    }
}

/// A batch of images ready for the model: `count` inputs, flat.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedImages {
    pub count: usize,
    pub pixels: Vec<f32>,
}

/// Pure CPU work on a batch of images, safe to run beside the model.
pub trait ImagePrep: Send + Sync {
    fn prepare(&self, images: &[ImageRef]) -> anyhow::Result<PreparedImages>;
}
