//! Storage shared by the server and scoring: the SQLite file, the
//! content-addressed image store, the answer writer and model runs.
pub mod backup;
mod batch;
pub mod db;
pub mod images;
pub mod leftovers;
pub mod negatives;
pub mod pages;
pub mod recent;
pub mod runs;
pub mod sessions;
pub mod writer;
