//! The survey kinds, one folder each, and their registry. A kind's folder
//! holds everything about it: `mod.rs` its descriptor (`pub const KIND:
//! KindSpec`) and presentation, then its own statistics and, behind `ssr`,
//! its report and export files (`server.rs`), and its task card with the
//! card's no-JavaScript form (`ui.rs`, `form.rs`). The parts speak the hook
//! contracts below this layer (`studies::hooks` for the server part,
//! `ui_kit::card` for the UI part); the shell finds them through the tables
//! here ([`REGISTRY`], handed to the services below, and [`ui`]) and never
//! names a kind. Add a kind by copying a folder and naming it in
//! `register_kinds!` below (README, "How to add a survey kind").
use crate::domain::study::{SpecError, Study, StudySpec};
use crate::domain::survey::SurveyKind;
#[cfg(feature = "ssr")]
use crate::studies::hooks::{Entry, Registry};
use crate::ui_kit::card::Ui;
use serde::{Deserialize, Deserializer};

/// Declares the kinds' modules, [`KINDS`], the one list of kinds, and the
/// tables of their parts: a kind followed by `+ server` has
/// `<kind>/server.rs` with `pub const SERVER` (in [`REGISTRY`]), one
/// followed by `+ ui` has `<kind>/ui.rs` with `pub const UI` (found by [`ui`]).
macro_rules! register_kinds {
    (@part $want:ident $kind:ident;) => { None };
    (@part server $kind:ident; server $($rest:ident)*) => { Some(&$kind::server::SERVER) };
    (@part ui $kind:ident; ui $($rest:ident)*) => { Some(&$kind::ui::UI) };
    (@part $want:ident $kind:ident; $other:ident $($rest:ident)*) => { register_kinds!(@part $want $kind; $($rest)*) };
    ($($kind:ident $(+ $part:ident)*),+ $(,)?) => {
        $(pub mod $kind;)+
        /// Every survey kind, in the order researchers see them listed.
        pub const KINDS: &[SurveyKind] = &[$(SurveyKind::of(&$kind::KIND)),+];

        /// The kinds with their server parts (own report, export files,
        /// items from a source study), for the services that run them.
        #[cfg(feature = "ssr")]
        pub static REGISTRY: Registry = Registry {
            entries: &[$(Entry { kind: SurveyKind::of(&$kind::KIND), server: register_kinds!(@part server $kind; $($part)*) }),+],
            list: KINDS,
        };

        static UIS: &[(SurveyKind, Option<&Ui>)] = &[$((SurveyKind::of(&$kind::KIND), register_kinds!(@part ui $kind; $($part)*))),+];
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

/// A kind's UI part: its own task card, its no-JavaScript forms, its panel
/// on the comparison page; None for a kind answered on the option card.
pub fn ui(kind: SurveyKind) -> Option<&'static Ui> {
    UIS.iter().find(|(k, _)| *k == kind).and_then(|(_, ui)| *ui)
}

/// Lookups over the registered kinds, for the layers above this one; the
/// services below are handed the list and call the `_in` versions.
impl SurveyKind {
    /// Every registered kind.
    pub fn all() -> &'static [SurveyKind] {
        KINDS
    }

    pub fn parse(s: &str) -> Option<SurveyKind> {
        Self::parse_in(KINDS, s)
    }

    /// The kinds that measure people.
    pub fn measurements() -> impl Iterator<Item = SurveyKind> {
        Self::measurements_in(KINDS)
    }

    /// The first curation step: the one whose items are the dataset's instances.
    #[cfg(test)]
    pub fn first_step() -> Option<SurveyKind> {
        Self::first_step_in(KINDS)
    }

    /// The curation step that checks this step's survivors.
    pub fn next_step(self) -> Option<SurveyKind> {
        self.next_step_in(KINDS)
    }
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
