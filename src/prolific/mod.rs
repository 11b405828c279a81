//! Prolific, the recruitment platform hardneg's link studies run on.
pub mod fake;
