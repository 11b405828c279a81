//! Studies: creating them, the annotators' tasks, outcomes and the pipeline
//! they feed, adjudication, agreement and progress.
pub mod adaptive;
pub mod adjudication;
pub mod aggregate;
pub mod agreement;
mod agreement_detail;
mod agreement_questions;
pub mod answer_texts;
pub mod create;
pub mod item_cache;
pub mod meta;
#[cfg(test)]
mod negatives_tests;
pub mod outcomes;
pub mod overview;
pub mod pipeline;
pub mod progress;
pub mod task_cache;
pub mod tasks;
pub mod vocabulary;
pub mod votes;
pub mod writing;
pub mod written_pairs;
