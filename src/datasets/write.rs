//! The old path of `store::dataset_rows`, kept only for
//! `studies/written_pairs.rs` until that file moves with its kind (issue 35);
//! new code uses `store::dataset_rows`.
pub use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
