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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
}

fn field(field: &'static str, message: impl Into<String>) -> SpecError {
    SpecError::Field { field, message: message.into() }
}

impl StudySpec {
    /// Parses against a given list of kinds (`kinds::KINDS`, whose
    /// `StudySpec::parse` calls this; tests add kinds of their own).
    pub fn parse_in(self, kinds: &[SurveyKind], default_seed: u64) -> Result<Study, SpecError> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err(field("name", "must not be empty"));
        }
        let kind = SurveyKind::parse_in(kinds, &self.kind).ok_or_else(|| {
            let known: Vec<_> = kinds.iter().map(|k| k.name()).collect();
            field("kind", format!("unknown kind {:?}; known kinds: {}", self.kind, known.join(", ")))
        })?;
        if self.dataset.trim().is_empty() {
            return Err(field("dataset", "must name a dataset"));
        }
        let link = super::crowd::spec::parse_access(self.access.as_deref(), self.link.clone(), kind.values())
            .map_err(|e| SpecError::Field { field: e.field, message: e.message })?;
        let mut rule = parse_rule(&self.assignment)?;
        let stratified = matches!(rule, AssignmentRule::StratifiedSample { .. });
        if let Some(given) = link.as_ref().map(|l| l.samples.is_some()).filter(|&g| g != stratified) {
            let why = if given { "belongs to rule = \"stratified_sample\"" } else { MISSING_SAMPLES };
            return Err(field("link.samples", why));
        }
        if link.is_some() {
            // Participants are not named: no roster, no annotators, no pairs.
            if self.annotators.is_some() || matches!(rule, AssignmentRule::Pairs { .. }) {
                return Err(field(
                    "annotators",
                    "a link study's participants arrive by link: name no annotators or pairs",
                ));
            }
            if self.resolve.as_deref() == Some("primary") {
                return Err(field("resolve", "a link study has no primary annotator"));
            }
        } else if let AssignmentRule::Groups { roster, .. } = &mut rule {
            *roster = match &self.annotators {
                Some(AnnotatorsSpec::Names(n)) if !n.is_empty() => n.clone(),
                _ => {
                    return Err(field(
                        "annotators",
                        "rule = \"groups\" needs the list of annotators (the k-th gets group k)",
                    ))
                }
            };
        }
        // Groups hand out a kind's several questions per item in parts; the
        // other rules ask one part's questions about an item together.
        let groups = matches!(rule, AssignmentRule::Groups { .. });
        if (kind.spec().questions.len() > 1 && !groups) || (kind.question_count() == 1 && groups) {
            let several: Vec<_> = kinds.iter().filter(|k| k.spec().questions.len() > 1).map(|k| k.name()).collect();
            return Err(field(
                "assignment.rule",
                format!(
                    "kind {kind} asks {} question(s) per item in {} part(s); rule = \"groups\" hands out \
                     questions in parts (kinds: {}), and only it does",
                    kind.question_count(),
                    kind.spec().questions.len(),
                    several.join(", ")
                ),
            ));
        }
        let annotators = match (self.annotators, rule.named_annotators()) {
            _ if link.is_some() => Annotators::Named(Vec::new()),
            (None, Some(names)) => Annotators::Named(names),
            (None, None) => return Err(field("annotators", "missing: \"all\" or a list of usernames")),
            (Some(a), named) => {
                let a = parse_annotators(a)?;
                if let Some(names) = named {
                    let mut listed = match &a {
                        Annotators::Named(n) => n.clone(),
                        Annotators::All | Annotators::AllBut(_) => {
                            return Err(field("annotators", "must list the pairs' annotators, not \"all\""))
                        }
                    };
                    let mut paired = names;
                    listed.sort();
                    paired.sort();
                    if listed != paired {
                        return Err(field("annotators", "must be exactly the annotators named in assignment.pairs"));
                    }
                }
                a
            }
        };
        let sources = kind.spec().sources;
        match &self.source {
            None if !sources.is_empty() => {
                let from: Vec<_> = sources.iter().map(|k| format!("{} ({})", k.name(), k.label())).collect();
                return Err(field(
                    "source",
                    format!("kind {kind} takes the survivors of a {} study; name it", from.join(" or ")),
                ));
            }
            Some(_) if sources.is_empty() => {
                return Err(field("source", format!("kind {kind} takes its items from its dataset, not a source")))
            }
            Some(s) if s.trim().is_empty() => return Err(field("source", "must name a study")),
            _ => {}
        }
        let mapping = match self.agreement.as_deref() {
            None if kind.default_binary_agreement() => Mapping::Binary,
            None => Mapping::Full,
            Some(m) => Mapping::parse(m)
                .ok_or_else(|| field("agreement", format!("unknown mapping {m:?}; known: binary, full")))?,
        };
        let resolve = match self.resolve.as_deref() {
            None => ResolveRule::default(),
            Some(r) => ResolveRule::parse(r)
                .ok_or_else(|| field("resolve", format!("unknown rule {r:?}; known: {}", ResolveRule::names())))?,
        };
        let primary = self.primary.map(|p| p.trim().to_string());
        if resolve == ResolveRule::Primary && primary.is_none() && !matches!(rule, AssignmentRule::Pairs { .. }) {
            return Err(field("primary", "resolve = \"primary\" needs the primary annotator's username"));
        }
        if let (Some(p), Annotators::Named(names)) = (&primary, &annotators) {
            if !names.contains(p) {
                return Err(field("primary", format!("{p:?} is not one of the study's annotators")));
            }
        }
        let instructions = self
            .instructions
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| kind.default_instructions().to_string());
        let sample = match &self.assignment.sample {
            _ if !matches!(rule, AssignmentRule::Groups { .. }) => None,
            None => Some(Sample::Count(DEFAULT_SAMPLE)),
            Some(SampleSpec::Count(n)) => Some(Sample::Count(*n)),
            Some(SampleSpec::Word(w)) if w == "all" => Some(Sample::All),
            Some(SampleSpec::Word(w)) => {
                return Err(field("assignment.sample", format!("expected a number or \"all\", got {w:?}")))
            }
        };
        let (adaptive, link) = match &self.assignment.adaptive {
            None => (None, link),
            Some(a) => {
                let (a, link) =
                    super::adaptive::for_study(a, &rule, resolve, kind, &annotators, link, self.link.as_ref())
                        .map_err(|(field, message)| SpecError::Field { field, message })?;
                (Some(a), link)
            }
        };
        let vocabulary = super::vocabulary::for_study(kind, self.vocabulary, self.vocabulary_strict)
            .map_err(|message| field("vocabulary", message))?;
        let prolific = super::prolific::spec::of_study(self.prolific, link.as_ref().map(|l| l.time_limit_minutes))
            .map_err(|e| SpecError::Field { field: e.field, message: e.message })?;
        Ok(Study {
            prolific,
            vocabulary,
            adaptive,
            link,
            sample,
            name,
            kind,
            dataset: self.dataset.trim().to_string(),
            instructions,
            annotators,
            seed: self.seed.unwrap_or(default_seed),
            rule,
            source: self.source.map(|s| s.trim().to_string()),
            mapping,
            resolve,
            primary,
        })
    }
}

fn parse_annotators(a: AnnotatorsSpec) -> Result<Annotators, SpecError> {
    match a {
        AnnotatorsSpec::Keyword(k) if k == "all" => Ok(Annotators::All),
        AnnotatorsSpec::Keyword(k) => {
            Err(field("annotators", format!("expected \"all\" or a list of usernames, got {k:?}")))
        }
        AnnotatorsSpec::Names(names) if names.is_empty() => Err(field("annotators", "the list is empty")),
        AnnotatorsSpec::Names(names) => Ok(Annotators::Named(names)),
    }
}

fn parse_rule(a: &AssignmentSpec) -> Result<AssignmentRule, SpecError> {
    if a.rule != "stratified_sample" && (a.per_subset.is_some() || a.subsets.is_some()) {
        let name = if a.per_subset.is_some() { "assignment.per_subset" } else { "assignment.subsets" };
        return Err(field(name, "per_subset and subsets belong to rule = \"stratified_sample\""));
    }
    match a.rule.as_str() {
        "stratified_sample" => {
            if a.pairs.is_some() || a.overlap.is_some() || a.group_size.is_some() || a.sample.is_some() {
                return Err(field("assignment.rule", "stratified_sample takes per_subset and subsets only"));
            }
            let (per_subset, subsets) = super::stratified::parse(a.per_subset, a.subsets.as_deref())
                .map_err(|(name, message)| field(name, message))?;
            Ok(AssignmentRule::StratifiedSample { per_subset, subsets })
        }
        "groups" => {
            if a.pairs.is_some() || a.overlap.is_some() {
                return Err(field("assignment.pairs", "pairs and overlap belong to rule = \"pairs\""));
            }
            let size = a.group_size.unwrap_or(DEFAULT_GROUP_SIZE);
            if size == 0 || a.sample == Some(SampleSpec::Count(0)) {
                return Err(field("assignment.group_size", "group_size and sample must be at least 1"));
            }
            Ok(AssignmentRule::Groups { size, roster: Vec::new() }) // roster: the annotators list
        }
        "each_annotator_all" => {
            if a.pairs.is_some() || a.overlap.is_some() {
                return Err(field("assignment.pairs", "pairs and overlap belong to rule = \"pairs\""));
            }
            Ok(AssignmentRule::EachAnnotatorAll)
        }
        "pairs" => {
            let given = a
                .pairs
                .as_ref()
                .filter(|p| !p.is_empty())
                .ok_or_else(|| field("assignment.pairs", "list the pairs, e.g. [[\"ana\", \"bo\"]]"))?;
            let mut pairs = Vec::with_capacity(given.len());
            let mut seen = std::collections::HashSet::new();
            for (i, p) in given.iter().enumerate() {
                let [x, y] = p.as_slice() else {
                    return Err(field("assignment.pairs", format!("pair {} has {} names, not 2", i + 1, p.len())));
                };
                for n in [x, y] {
                    if !seen.insert(n.clone()) {
                        return Err(field("assignment.pairs", format!("{n:?} appears in more than one place")));
                    }
                }
                pairs.push([x.clone(), y.clone()]);
            }
            let overlap =
                a.overlap.ok_or_else(|| field("assignment.overlap", "how many items each pair annotates together"))?;
            if a.group_size.is_some() || a.sample.is_some() {
                return Err(field("assignment.group_size", "group_size and sample belong to rule = \"groups\""));
            }
            Ok(AssignmentRule::Pairs { pairs, overlap })
        }
        other => Err(field(
            "assignment.rule",
            format!("unknown rule {other:?}; known rules: each_annotator_all, pairs, groups, stratified_sample"),
        )),
    }
}

#[cfg(test)]
#[path = "study_fixture.rs"]
pub mod fixture;
#[cfg(test)]
#[path = "study_tests.rs"]
mod tests;
