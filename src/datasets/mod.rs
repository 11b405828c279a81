//! Datasets: importing candidates, exporting curated splits, the blind
//! audit. Above `studies` (an export reads study outcomes); rows are
//! written through `store::dataset_rows`.
pub mod audit;
pub mod export;
pub mod import;
pub(crate) mod stage;
