//! Parsing a [`StudySpec`] into a [`Study`]: one step per part of the
//! spec, each refusing what it reads with the field's name. The order of
//! the steps is the order of the errors a researcher meets.
use super::{
    field, AnnotatorsSpec, AssignmentSpec, Sample, SampleSpec, SpecError, Study, StudySpec, DEFAULT_GROUP_SIZE,
    DEFAULT_SAMPLE, MISSING_SAMPLES,
};
use crate::domain::assignment::{Annotators, AssignmentRule};
use crate::domain::crowd::spec::LinkSettings;
use crate::domain::mapping::Mapping;
use crate::domain::resolution::ResolveRule;
use crate::domain::survey::SurveyKind;

use crate::domain::names::{plain_text, MAX_TEXT_CHARS};

impl StudySpec {
    /// Parses against a given list of kinds (`kinds::KINDS`, whose
    /// `StudySpec::parse` calls this; tests add kinds of their own).
    pub fn parse_in(self, kinds: &[SurveyKind], default_seed: u64) -> Result<Study, SpecError> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err(field("name", "must not be empty"));
        }
        plain_text(&name, MAX_NAME_CHARS, false).map_err(|m| field("name", m))?;
        if let Some(text) = &self.instructions {
            plain_text(text, MAX_TEXT_CHARS, true).map_err(|m| field("instructions", m))?;
        }
        let kind = SurveyKind::parse_in(kinds, &self.kind).ok_or_else(|| {
            let known: Vec<_> = kinds.iter().map(|k| k.name()).collect();
            field("kind", format!("unknown kind {:?}; known kinds: {}", self.kind, known.join(", ")))
        })?;
        if self.dataset.trim().is_empty() {
            return Err(field("dataset", "must name a dataset"));
        }
        let link = crate::domain::crowd::spec::parse_access(
            self.access.as_deref(),
            self.link.clone(),
            &kind.question_values(0),
        )
        .map_err(|e| SpecError::Field { field: e.field, message: e.message })?;
        let mut rule = parse_rule(&self.assignment)?;
        self.check_access(link.as_ref(), &mut rule)?;
        check_question_parts(kinds, kind, &rule)?;
        let annotators = parse_annotators(self.annotators.clone(), &rule, link.is_some())?;
        check_source(self.source.as_deref(), kind)?;
        let mapping = match self.agreement.as_deref() {
            None if kind.default_binary_agreement() => Mapping::Binary,
            None => Mapping::Full,
            Some(m) => match Mapping::parse(m) {
                Some(Mapping::Binary) if !kind.has_binary_agreement() => {
                    return Err(field(
                        "agreement",
                        format!(
                            "kind {kind} has no binary reading (an answer that keeps or drops an item): use \"full\""
                        ),
                    ))
                }
                Some(mapping) => mapping,
                None => return Err(field("agreement", format!("unknown mapping {m:?}; known: binary, full"))),
            },
        };
        if self.resolve.is_some() && !kind.spec().adjudicated {
            // As `agreement = "binary"` on a kind without that reading: a
            // setting that would change nothing is named, not ignored.
            return Err(field(
                "resolve",
                format!("kind {kind} settles no item between answers (its statistics count every answer); remove it"),
            ));
        }
        let (resolve, primary) = self.settlement(&rule, &annotators)?;
        let instructions = self
            .instructions
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| kind.default_instructions().to_string());
        let sample = parse_sample(self.assignment.sample.as_ref(), &rule)?;
        let (adaptive, link) = match &self.assignment.adaptive {
            None => (None, link),
            Some(a) => {
                let (a, link) =
                    crate::domain::adaptive::for_study(a, &rule, resolve, kind, &annotators, link, self.link.as_ref())
                        .map_err(|(field, message)| SpecError::Field { field, message })?;
                (Some(a), link)
            }
        };
        let vocabulary = crate::domain::vocabulary::for_study(kind, self.vocabulary, self.vocabulary_strict)
            .map_err(|message| field("vocabulary", message))?;
        let prolific =
            crate::domain::prolific::spec::of_study(self.prolific, link.as_ref().map(|l| l.time_limit_minutes))
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

    /// A link study's rule and people: samples only with the stratified
    /// rule, nobody named; an accounts study's `groups` rule takes its
    /// roster from the annotators list.
    fn check_access(&self, link: Option<&LinkSettings>, rule: &mut AssignmentRule) -> Result<(), SpecError> {
        let stratified = matches!(rule, AssignmentRule::StratifiedSample { .. });
        if let Some(given) = link.map(|l| l.samples.is_some()).filter(|&g| g != stratified) {
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
            if self.assignment.group_size.is_some() {
                return Err(field(
                    "assignment.group_size",
                    "a link study's bundles hold link.bundle_size items: group_size is for account studies",
                ));
            }
        } else if let AssignmentRule::Groups { roster, .. } = rule {
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
        Ok(())
    }

    /// How a disagreement is settled, and the primary annotator it may name.
    fn settlement(
        &self,
        rule: &AssignmentRule,
        annotators: &Annotators,
    ) -> Result<(ResolveRule, Option<String>), SpecError> {
        let resolve = match self.resolve.as_deref() {
            None => ResolveRule::default(),
            Some(r) => ResolveRule::parse(r)
                .ok_or_else(|| field("resolve", format!("unknown rule {r:?}; known: {}", ResolveRule::names())))?,
        };
        let primary = self.primary.as_ref().map(|p| p.trim().to_string());
        if primary.is_some() && resolve != ResolveRule::Primary {
            return Err(field(
                "primary",
                format!(
                    "it names whose answer wins under resolve = \"primary\"; this study resolves by {:?}",
                    resolve.as_str()
                ),
            ));
        }
        if resolve == ResolveRule::Primary && primary.is_none() && !matches!(rule, AssignmentRule::Pairs { .. }) {
            return Err(field("primary", "resolve = \"primary\" needs the primary annotator's username"));
        }
        if let (Some(p), Annotators::Named(names)) = (&primary, annotators) {
            if !names.contains(p) {
                return Err(field("primary", format!("{p:?} is not one of the study's annotators")));
            }
        }
        Ok((resolve, primary))
    }
}

/// Groups hand out a kind's several questions per item in parts; the other
/// rules ask one part's questions about an item together.
fn check_question_parts(kinds: &[SurveyKind], kind: SurveyKind, rule: &AssignmentRule) -> Result<(), SpecError> {
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
    Ok(())
}

/// Who annotates: nobody named in a link study, the pairs' people when the
/// rule names them (a list given beside them must be exactly those), else
/// the list or "all".
fn parse_annotators(spec: Option<AnnotatorsSpec>, rule: &AssignmentRule, link: bool) -> Result<Annotators, SpecError> {
    match (spec, rule.named_annotators()) {
        _ if link => Ok(Annotators::Named(Vec::new())),
        (None, Some(names)) => Ok(Annotators::Named(names)),
        (None, None) => Err(field("annotators", "missing: \"all\" or a list of usernames")),
        (Some(a), named) => {
            let a = annotators_as_written(a)?;
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
            Ok(a)
        }
    }
}

fn annotators_as_written(a: AnnotatorsSpec) -> Result<Annotators, SpecError> {
    match a {
        AnnotatorsSpec::Keyword(k) if k == "all" => Ok(Annotators::All),
        AnnotatorsSpec::Keyword(k) => {
            Err(field("annotators", format!("expected \"all\" or a list of usernames, got {k:?}")))
        }
        AnnotatorsSpec::Names(names) if names.is_empty() => Err(field("annotators", "the list is empty")),
        AnnotatorsSpec::Names(names) => {
            // Counted twice, a name would pass the checks on how many people
            // each item gets, and then nobody could give the missing answers.
            let mut seen = std::collections::HashSet::with_capacity(names.len());
            match names.iter().find(|n| !seen.insert(n.as_str())) {
                Some(twice) => Err(field("annotators", format!("{twice:?} is named twice; a name may appear once"))),
                None => Ok(Annotators::Named(names)),
            }
        }
    }
}

/// A kind that checks another step's survivors names its source study; a
/// kind that takes its dataset's items names none.
fn check_source(source: Option<&str>, kind: SurveyKind) -> Result<(), SpecError> {
    let sources = kind.spec().sources;
    match source {
        None if !sources.is_empty() => {
            let from: Vec<_> = sources.iter().map(|k| format!("{} ({})", k.name(), k.label())).collect();
            Err(field("source", format!("kind {kind} takes the survivors of a {} study; name it", from.join(" or "))))
        }
        Some(_) if sources.is_empty() => {
            Err(field("source", format!("kind {kind} takes its items from its dataset, not a source")))
        }
        Some(s) if s.trim().is_empty() => Err(field("source", "must name a study")),
        _ => Ok(()),
    }
}

/// Only the `groups` rule samples its source: a number (default 500) or "all".
/// A study's name is shown in lists and headings: one line, at most this long.
const MAX_NAME_CHARS: usize = 200;

fn parse_sample(sample: Option<&SampleSpec>, rule: &AssignmentRule) -> Result<Option<Sample>, SpecError> {
    if sample.is_some() && !matches!(rule, AssignmentRule::Groups { .. }) {
        return Err(field("assignment.sample", "sample belongs to rule = \"groups\""));
    }
    Ok(match sample {
        _ if !matches!(rule, AssignmentRule::Groups { .. }) => None,
        None => Some(Sample::Count(DEFAULT_SAMPLE)),
        Some(SampleSpec::Count(n)) => Some(Sample::Count(*n)),
        Some(SampleSpec::Word(w)) if w == "all" => Some(Sample::All),
        Some(SampleSpec::Word(w)) => {
            return Err(field("assignment.sample", format!("expected a number or \"all\", got {w:?}")))
        }
    })
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
            let (per_subset, subsets) = crate::domain::stratified::parse(a.per_subset, a.subsets.as_deref())
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
