//! Model scoring: CLIP-like models embed a dataset's captions and images
//! and every instance gets the Winoground outcome of its four similarities;
//! on a ranking dataset, every (prompt, image) its similarity (`rankings`).
//! In-process with candle (`clip`, `model`), or through an external scorer
//! process (`external`, `protocol`); embeddings are cached in SQLite.
//! Pure parts: `config`, `preprocess`, `rank`, `protocol`, `text::pad_batch`.
mod aligned;
pub mod cache;
pub mod clip;
pub mod command;
pub mod config;
pub mod cpu_layer;
pub mod cpu_tower;
pub mod encoder;
pub mod external;
pub mod feed;
pub mod kernels;
pub mod model;
pub mod packed;
pub mod precision;
pub mod preprocess;
pub mod protocol;
pub mod rank;
pub mod rankings;
pub mod run;
pub mod seqs;
pub mod testing;
pub mod text;
