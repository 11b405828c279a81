//! A study spec as researchers write it (TOML in the shell), parsed into a
//! typed [`Study`]: once parsed, a study cannot name an unknown kind or rule.
use super::assignment::{Annotators, AssignmentRule};
pub use super::mapping::Mapping;
use super::resolution::ResolveRule;
use super::survey::SurveyKind;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    pub name: String,
    pub kind: String,
    pub dataset: String,
    pub instructions: Option<String>,
    /// Optional when the assignment rule names the annotators (pairs).
    pub annotators: Option<AnnotatorsSpec>,
    pub seed: Option<u64>,
    /// The study whose surviving instances become this study's items (Step 4).
    pub source: Option<String>,
    /// Category mapping for agreement: "binary" (kept vs dropped) or "full".
    pub agreement: Option<String>,
    /// How a disagreement on a multiply-annotated item is settled.
    pub resolve: Option<String>,
    /// The annotator whose answer wins under `resolve = "primary"` (pairs: the first of each pair).
    pub primary: Option<String>,
    #[serde(default)]
    pub assignment: AssignmentSpec,
    /// "accounts" (default) or "link": participants arrive by a join link (docs/crowd.md).
    pub access: Option<String>,
    pub link: Option<super::crowd::spec::LinkSpec>,
    /// `[prolific]`: publishing and paying through Prolific's API (docs/prolific.md).
    pub prolific: Option<super::prolific::spec::ProlificSpec>,
    /// Words the texts are checked against: a list, or a file in the data directory.
    pub vocabulary: Option<super::vocabulary::VocabularySpec>,
    /// Whether a word outside the vocabulary refuses the answer (default: it does; `false` only warns).
    pub vocabulary_strict: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AnnotatorsSpec {
    Keyword(String),
    Names(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignmentSpec {
    #[serde(default = "default_rule")]
    pub rule: String,
    pub pairs: Option<Vec<Vec<String>>>,
    pub overlap: Option<usize>,
    /// Rule `groups`: instances per annotator (BiVLC: 25).
    pub group_size: Option<usize>,
    /// Rule `groups`: how many instances to sample from the source (BiVLC:
    /// 500), or "all" of its survivors.
    pub sample: Option<SampleSpec>,
    /// `[assignment.adaptive]`: answers per item decided as they come in.
    pub adaptive: Option<super::adaptive::AdaptiveSpec>,
    /// Rule `stratified_sample`: items of each subset per person (SugarCrepe++: 30).
    pub per_subset: Option<usize>,
    /// Rule `stratified_sample`: the subsets drawn from (default: all the items have).
    pub subsets: Option<Vec<String>>,
}

/// `sample = 500` or `sample = "all"` as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum SampleSpec {
    Count(usize),
    Word(String),
}

/// How many of the source's survivors a study draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// Exactly this many (seeded); creating the study fails when the source has fewer.
    Count(usize),
    All,
}

impl Sample {
    /// The instances drawn from `available` survivors, or why not.
    pub fn size(self, available: usize) -> Result<usize, String> {
        match self {
            Sample::All => Ok(available),
            Sample::Count(n) if n <= available => Ok(n),
            Sample::Count(n) => Err(format!(
                "asks for {n} instances but the source has only {available} survivors; \
                 lower it, or write sample = \"all\" to take every survivor"
            )),
        }
    }
}

impl Default for AssignmentSpec {
    fn default() -> Self {
        AssignmentSpec {
            rule: default_rule(),
            pairs: None,
            overlap: None,
            group_size: None,
            sample: None,
            adaptive: None,
            per_subset: None,
            subsets: None,
        }
    }
}

pub const DEFAULT_SAMPLE: usize = 500;
const MISSING_SAMPLES: &str = "missing: how many samples (places) rule = \"stratified_sample\" makes";
pub const DEFAULT_GROUP_SIZE: usize = 25;

fn default_rule() -> String {
    "each_annotator_all".into()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub name: String,
    pub kind: SurveyKind,
    pub dataset: String,
    pub instructions: String,
    pub annotators: Annotators,
    pub seed: u64,
    pub rule: AssignmentRule,
    pub source: Option<String>,
    pub mapping: Mapping,
    pub resolve: ResolveRule,
    pub primary: Option<String>,
    /// Items drawn (seeded) from the source instead of taking them all.
    pub sample: Option<Sample>,
    /// Participants arrive by link and get bundles (`access = "link"`).
    pub link: Option<super::crowd::spec::LinkSettings>,
    /// Adaptive overlap (`[assignment.adaptive]`); link studies' bundles then want `min` copies.
    pub adaptive: Option<super::adaptive::Adaptive>,
    /// How the link study is published on Prolific (`[prolific]`).
    pub prolific: Option<super::prolific::spec::ProlificSettings>,
    /// The vocabulary the texts are checked against, and whether strictly.
    pub vocabulary: Option<(super::vocabulary::VocabularySource, bool)>,
}

impl Study {
    /// What a valid spec allows but a researcher most likely did not mean:
    /// `study create` prints these and `POST /api/v1/studies` returns them.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self.link.iter().flat_map(|l| l.warnings()).collect();
        if let (Some(link), Some(a)) = (&self.link, &self.adaptive) {
            if let super::adaptive::Stop::Posterior { threshold } = a.stop {
                if link.checks.gold.is_empty() {
                    out.push(super::adaptive::no_gold_warning(threshold));
                }
            }
        }
        if self.link.is_some() && self.resolve == ResolveRule::Mace {
            out.push(MACE_IN_LINK_STUDY.to_string());
        }
        out
    }
}

/// A link study's bundles share no people, so MACE fits each bundle's
/// people from each other alone (docs/api.md, "MACE on separate sub-crowds").
pub const MACE_IN_LINK_STUDY: &str = "resolve = \"mace\" in a link study: each bundle's people share no \
     items with anyone else, so MACE fits them from each other alone and can find a whole bundle uninformed, \
     settling its items against a 2-of-3 majority (an audit of a crowd with 85 % None truths: 8 to 21 % of \
     outcomes right); prefer resolve = \"dawid_skene\" or \"adjudication\" (docs/api.md, \"Crowd models\")";

/// Whether the spec gives every item the `n` people its kind's protocol
/// wants: a link study's copies; named annotators, or "all" over the
/// `accounts` annotator accounts it covers now (at most `n`), each seeing every item; or
/// BiVLC's pairs for two, when their shared blocks cover all the study's
/// `items` (the rest would go to one person each). Adaptive overlap,
/// samples and groups vary the number.
pub fn check_raters(study: &Study, n: usize, accounts: usize, items: u64) -> Result<(), SpecError> {
    let kind = study.kind.name();
    let wants = format!("{kind} wants {n} people on every item");
    if study.adaptive.is_some() {
        return Err(field("assignment.adaptive", format!("{wants}; adaptive overlap varies the number")));
    }
    if let Some(link) = &study.link {
        return match usize::try_from(link.copies) == Ok(n) {
            true => Ok(()),
            false => Err(field("link.copies", format!("{wants}: set it to {n}, not {}", link.copies))),
        };
    }
    match &study.rule {
        AssignmentRule::EachAnnotatorAll => {}
        AssignmentRule::Pairs { pairs, overlap } if n == 2 => {
            let shared = (pairs.len() as u64).saturating_mul(*overlap as u64);
            return match shared >= items {
                true => Ok(()),
                false => Err(field(
                    "assignment.overlap",
                    format!(
                        "{wants}; {} pair(s) sharing {overlap} items each leave {} of the study's {items} items \
                         to one person (one pair: an overlap of at least the items; several: pairs × overlap = items)",
                        pairs.len(),
                        items - shared
                    ),
                )),
            };
        }
        _ => return Err(field("assignment.rule", format!("{wants}; this rule gives items to varying numbers"))),
    }
    // "all" grows with the accounts added later (a new server's demo has
    // none yet): refused only when it already covers more than `n`.
    let (given, what, fits) = match &study.annotators {
        Annotators::Named(names) => (names.len(), "the spec names", names.len() == n),
        Annotators::All | Annotators::AllBut(_) => (accounts, "\"all\" is, in annotator accounts now,", accounts <= n),
    };
    match fits {
        true => Ok(()),
        false => Err(field("annotators", format!("{wants}; {what} {given}"))),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
}

fn field(field: &'static str, message: impl Into<String>) -> SpecError {
    SpecError::Field { field, message: message.into() }
}

#[cfg(test)]
#[path = "study_fixture.rs"]
pub mod fixture;
#[path = "study_parse.rs"]
mod parse;
#[cfg(test)]
#[path = "study_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "study_warnings_tests.rs"]
mod warnings_tests;
