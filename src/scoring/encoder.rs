//! What the scoring run needs from a model, in-process or external.
use std::path::PathBuf;

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
}
