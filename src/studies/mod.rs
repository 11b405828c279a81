//! Studies: creating them from a spec (`create`), the annotators' tasks,
//! outcomes and the pipeline they feed, adjudication, agreement, progress
//! and reports (`report`); a link study's stored link, bundles and leases
//! (`link`), which `crowd` builds on. What a kind may add (its server part)
//! is the contract in `hooks`; the kinds' registry is handed in as a table,
//! so nothing here names a kind.
pub mod adaptive;
pub mod adaptive_report;
pub mod adjudication;
pub mod aggregate;
pub mod agreement;
mod agreement_detail;
mod agreement_questions;
pub mod answer_texts;
pub mod create;
pub mod hooks;
pub mod link;
pub mod meta;
pub mod negatives;
#[cfg(test)]
mod negatives_tests;
mod next_read;
pub mod outcomes;
pub mod overview;
pub mod pipeline;
pub mod progress;
pub mod queue_write;
pub mod reopen;
pub mod report;
pub mod report_text;
pub mod step4;
pub mod sweeps;
pub mod tasks;
pub mod vocabulary;
pub mod votes;
