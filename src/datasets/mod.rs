//! Datasets: writing instances, importing candidates, exporting curated splits.
pub mod audit;
pub mod export;
pub mod import;
pub mod write;
