//! Inter-annotator agreement for nominal labels.
//!
//! A curated benchmark is only as trustworthy as the agreement of the people
//! who curated it, so every coefficient here states *why* it is missing when
//! it cannot be computed, instead of returning NaN or a misleading 0.
//!
//! * [`cohen_kappa`] — one pair of annotators over the items both rated;
//! * [`mean_kappa`] — unweighted mean of the defined pairwise kappas (Light);
//! * [`fleiss_kappa`] — many raters, the same number on every item;
//! * [`krippendorff_alpha`] — any number of raters, missing answers allowed;
//! * [`study_agreement`] — all of the above from raw `(item, annotator,
//!   category)` triples, as stored by the annotation tool;
//! * [`bootstrap_agreement`] — seeded bootstrap 95% intervals for each of them;
//! * [`annotator_confusion`] — each annotator against the settled outcomes;
//! * [`of_question`], [`keyed_by_question`] — kinds with several questions
//!   per item, one question at a time or keyed by (item, question).
//!
//! Labels are category indices `0..k`; [`CategoryMap`] turns raw answer
//! strings into them (and can merge answers, e.g. BiVLC's four image options
//! into one "image" category). Pure: no IO, no framework types.

mod against_outcome;
mod alpha;
mod bootstrap;
#[cfg(test)]
mod bootstrap_tests;
mod category_map;
mod cohen;
mod fleiss;
mod questions;
mod study;
#[cfg(test)]
mod tests;

pub use against_outcome::{annotator_confusion, AnnotatorConfusion};
#[cfg(test)]
pub use alpha::krippendorff_alpha_matrix;
pub use alpha::{krippendorff_alpha, Alpha};
pub use bootstrap::{
    bootstrap_agreement, percentile, Bootstrap, BootstrapCis, Coefficients, Interval, PairInterval, DEFAULT_RESAMPLES,
};
pub use category_map::{CategoryMap, BIVLC_STEP3_BINARY, BIVLC_STEP3_FULL};
pub use cohen::{cohen_kappa, mean_kappa, PairAgreement};
pub use fleiss::{fleiss_kappa, Fleiss};
pub use questions::{keyed_by_question, of_question, QuestionRating};
pub use study::{study_agreement, PairReport, StudyAgreement};

/// Cohen's kappa of two named annotators on the items both answered (the
/// expert reports of the triplet check and HNC's validation list these).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairKappa {
    pub annotators: (String, String),
    /// Items both answered.
    pub n: usize,
    pub observed: f64,
    pub kappa: Option<f64>,
}

/// Why a coefficient could not be computed. `Display` is the human-readable
/// reason that ends up in the `*_reason` fields of reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgreementError {
    #[error("no items rated by both annotators")]
    NoSharedItems,
    #[error(
        "both annotators put every answer in one and the same category, \
         so chance agreement is 1 and kappa is undefined"
    )]
    CohenSingleCategory,
    #[error("no annotator pair shares an item")]
    NoPairs,
    #[error("kappa is undefined for every annotator pair ({0} {s})", s = if .0 == &1 { "pair" } else { "pairs" })]
    NoDefinedPairs(usize),
    #[error("no items to rate")]
    NoItems,
    #[error("no item was rated by at least 2 annotators")]
    NoMultiplyRatedItems,
    #[error("Fleiss' kappa needs at least 2 raters per item, got {0}")]
    TooFewRaters(u64),
    #[error(
        "Fleiss' kappa needs the same number of raters on every item \
         (item 0 has {expected}, item {item} has {found})"
    )]
    UnequalRaters { item: usize, expected: u64, found: u64 },
    #[error(
        "every rating is in one and the same category, so chance agreement P_e is 1 and Fleiss' kappa is undefined"
    )]
    FleissSingleCategory,
    #[error("fewer than 2 pairable values (no unit has at least 2 answers)")]
    TooFewPairable,
    #[error(
        "every pairable value is in one and the same category, so expected \
         disagreement D_e is 0 and alpha is undefined"
    )]
    AlphaNoVariation,
    #[error("label {label} is out of range for {k} categories")]
    LabelOutOfRange { label: usize, k: usize },
    #[error("item {item} has {found} category counts, expected {expected}")]
    RaggedCounts { item: usize, expected: usize, found: usize },
}

/// Splits a `Result` into the `(value, reason)` pair used by serialisable
/// reports, so a missing value always travels with its explanation.
fn split<T>(r: Result<T, AgreementError>) -> (Option<T>, Option<String>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e.to_string())),
    }
}
