//! The survey kinds, one folder each, and their list. A kind's folder holds
//! everything about it: `mod.rs` its descriptor (`pub const KIND: KindSpec`)
//! and presentation, then its own statistics and, in the shell, its report,
//! export files and task card. This layer sits above the pure core
//! (`domain` never names a kind) and below the shell. Add a kind by copying
//! a folder and naming it in `register_kinds!` below (README, "How to add a
//! survey kind").
use crate::domain::study::{SpecError, Study, StudySpec};
use crate::domain::survey::SurveyKind;
use serde::{Deserialize, Deserializer};

#[cfg(feature = "ssr")]
pub mod report;
#[cfg(feature = "ssr")]
pub mod server;

/// Declares the kinds' modules, [`KINDS`], the one list of kinds, and
/// `server`, which finds a kind's server part: a kind followed by
/// `+ server` has `<kind>/server.rs` with `pub const SERVER`.
macro_rules! register_kinds {
    (@server server $kind:ident $k:ident) => {
        if $k == SurveyKind::of(&$kind::KIND) {
            return Some(&$kind::server::SERVER);
        }
    };
    ($($kind:ident $(+ $part:ident)*),+ $(,)?) => {
        $(pub mod $kind;)+
        /// Every survey kind, in the order researchers see them listed.
        pub const KINDS: &[SurveyKind] = &[$(SurveyKind::of(&$kind::KIND)),+];

        /// A kind's server part: its own report, its export files.
        #[cfg(feature = "ssr")]
        pub fn server(kind: SurveyKind) -> Option<&'static server::Server> {
            $($(register_kinds!(@server $part $kind kind);)*)+
            None
        }
    };
}

register_kinds![
    four_image,
    ambiguity,
    human_baseline,
    odd_one_out,
    odd_one_out_text,
    ab_tie,
    ranking + server,
    triplet_check + server,
    caption_writing + server,
    pair_validation + server,
    caption_match,
];

/// Lookups over the registered kinds.
impl SurveyKind {
    /// Every registered kind.
    pub fn all() -> &'static [SurveyKind] {
        KINDS
    }

    pub fn parse(s: &str) -> Option<SurveyKind> {
        Self::parse_in(KINDS, s)
    }

    /// The kinds whose answers are reported as statistics.
    pub fn reports() -> impl Iterator<Item = SurveyKind> {
        KINDS.iter().copied().filter(|k| k.report().is_some())
    }

    /// The kinds that measure people.
    pub fn measurements() -> impl Iterator<Item = SurveyKind> {
        KINDS.iter().copied().filter(|k| k.outcome_fn().is_some())
    }

    /// The first curation step: the one whose items are the dataset's instances.
    pub fn first_step() -> Option<SurveyKind> {
        steps().find(|k| k.spec().sources.is_empty())
    }

    /// The curation step that checks this step's survivors.
    pub fn next_step(self) -> Option<SurveyKind> {
        let step = self.curation()?.step;
        steps().filter(|k| k.spec().sources.contains(&self)).find(|k| k.curation().is_some_and(|c| c.step > step))
    }
}

fn steps() -> impl Iterator<Item = SurveyKind> {
    let mut steps: Vec<SurveyKind> = KINDS.iter().copied().filter(|k| k.curation().is_some()).collect();
    steps.sort_by_key(|k| k.curation().map(|c| c.step));
    steps.into_iter()
}

impl<'de> Deserialize<'de> for SurveyKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        SurveyKind::parse(&name).ok_or_else(|| {
            let known: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
            serde::de::Error::custom(format!("unknown survey kind {name:?}; known kinds: {}", known.join(", ")))
        })
    }
}

impl StudySpec {
    /// Parses against the registered kinds. `default_seed` is used when the
    /// spec names none, so that a study's orders are still fixed (and
    /// recorded) from creation on.
    pub fn parse(self, default_seed: u64) -> Result<Study, SpecError> {
        self.parse_in(KINDS, default_seed)
    }
}

#[cfg(test)]
mod tests;
