//! Studies: the annotators' tasks, outcomes and the pipeline
//! they feed, adjudication, agreement and progress; a link study's stored
//! link, bundles and leases (`link`), which `crowd` builds on.
pub mod adaptive;
pub mod adaptive_report;
pub mod adjudication;
pub mod aggregate;
pub mod agreement;
mod agreement_detail;
mod agreement_questions;
pub mod answer_texts;
pub mod link;
pub mod meta;
#[cfg(test)]
mod negatives_tests;
mod next_read;
pub mod outcomes;
pub mod overview;
pub mod pipeline;
pub mod progress;
pub mod tasks;
pub mod vocabulary;
pub mod votes;
