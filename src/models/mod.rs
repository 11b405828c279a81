//! Models against people: imported results, the comparison, the human row
//! and the failure drill-down.
pub mod compare;
pub mod failures;
pub mod human;
pub mod results;
