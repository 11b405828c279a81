//! The survey kinds, one folder each, and their list. A kind's folder holds
//! everything about it: `mod.rs` its descriptor (`pub const KIND: KindSpec`)
//! and presentation, then its own statistics and, behind `ssr`, its report
//! and export files (`server.rs`), and its task card with the card's
//! no-JavaScript form (`ui.rs`, `form.rs`). The shell finds these parts
//! through the tables `server` and `ui` below and never names a kind. This
//! layer sits above the pure core (`domain` never names a kind), the
//! services it uses (`studies`) and `ui_kit` (what cards share with the
//! pages: card head, progress text, caller, error pages), and below the
//! shell (`datasets`, `http`, `ui`, `cli`). Add a kind by copying
//! a folder and naming it in `register_kinds!` below (README, "How to add a
//! survey kind").
use crate::domain::study::{SpecError, Study, StudySpec};
use crate::domain::survey::SurveyKind;
use serde::{Deserialize, Deserializer};

#[cfg(feature = "ssr")]
pub mod create;
#[cfg(feature = "ssr")]
pub mod report;
#[cfg(feature = "ssr")]
pub mod server;
pub mod ui;

/// Declares the kinds' modules, [`KINDS`], the one list of kinds, and the
/// lookups of a kind's parts: a kind followed by `+ server` has
/// `<kind>/server.rs` with `pub const SERVER` (found by `server`), one
/// followed by `+ ui` has `<kind>/ui.rs` with `pub const UI` (found by `ui`).
macro_rules! register_kinds {
    (@server server $kind:ident $k:ident) => {
        if $k == SurveyKind::of(&$kind::KIND) {
            return Some(&$kind::server::SERVER);
        }
    };
    (@server ui $kind:ident $k:ident) => {};
    (@ui ui $kind:ident $k:ident) => {
        if $k == SurveyKind::of(&$kind::KIND) {
            return Some(&$kind::ui::UI);
        }
    };
    (@ui server $kind:ident $k:ident) => {};
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

        /// A kind's UI part: its own task card, its no-JavaScript forms.
        pub fn ui(kind: SurveyKind) -> Option<&'static ui::Ui> {
            $($(register_kinds!(@ui $part $kind kind);)*)+
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
    ranking + server + ui,
    triplet_check + server + ui,
    caption_writing + server + ui,
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
