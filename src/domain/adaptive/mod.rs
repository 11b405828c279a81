//! Adaptive overlap: an item starts with `min` answers and gets one more,
//! from someone who has not answered it, until its answers meet the stop
//! rule or it has `max`. The decision is taken here, from the answers and
//! each person's earned reliability ([`reliability`]); the shell
//! (`studies::adaptive`) stores what it says, under the writer's gate.
use super::assignment::{Annotators, AssignmentRule};
use super::crowd::spec::{LinkSettings, LinkSpec};
use super::resolution::ResolveRule;
use super::survey::{Report, Role, SurveyKind};
use serde::{Deserialize, Serialize};

mod earned;
pub mod evidence;
pub mod reliability;
mod report;
pub use reliability::Reliability;
pub use report::{
    calibration_warning, no_gold_warning, AdaptiveItem, AdaptiveReport, Doubtful, LeftOut, Savings, StopCounts,
    CALIBRATED_ANSWERS_PER_PERSON, CALIBRATED_ITEMS, DOUBT_POSTERIOR,
};

/// The `[assignment.adaptive]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveSpec {
    pub min: Option<usize>,
    pub max: Option<usize>,
    pub stop: Option<String>,
    pub threshold: Option<f64>,
    /// With a model `resolve`: an item left at `max` may be settled on a
    /// value none of its answers gave.
    pub allow_unchosen: Option<bool>,
    /// With `stop = "posterior"` (the default there: true): a person
    /// recognised as carrying no information gets no more items.
    pub end_uninformative: Option<bool>,
}

/// More answers per item than any study needs; bounds a typo like `max = 50`.
pub const MAX_ANSWERS: usize = 20;

/// A confident stop needs at least this many people whose answers count
/// ([`Reliability::counts`]) to have given the value: no single answer,
/// however trusted its giver, settles an item.
pub const MIN_AGREEING: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stop", rename_all = "snake_case")]
pub enum Stop {
    /// The leading value is ahead of every other by at least [`AGREE_MARGIN`]
    /// answers: with two answers, both agree; one more dissent could only tie it.
    Agree,
    /// The leading value's posterior ([`Reliability::posterior`]) reaches
    /// `threshold`, under the fitted class priors and under flat ones alike,
    /// and [`MIN_AGREEING`] people who count gave it. The priors are fitted
    /// on the same answers as the confusions, and a share of the crowd that
    /// swaps two values moves them toward its value (the value's prior went
    /// from 22 % to 41 % on the bench's swapping crowd): the stop must not
    /// rest on that.
    Posterior { threshold: f64 },
}

pub const AGREE_MARGIN: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    pub min: usize,
    pub max: usize,
    #[serde(flatten)]
    pub stop: Stop,
    /// See [`AdaptiveSpec::allow_unchosen`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_unchosen: bool,
    /// See [`AdaptiveSpec::end_uninformative`]; settings stored before it
    /// existed read as false, so a running study keeps its behaviour.
    #[serde(default)]
    pub end_uninformative: bool,
}

/// Why an item got no more answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `stop = "agree"` was met.
    Agreed,
    /// `stop = "posterior"` was met.
    Confident,
    /// It reached `max` without meeting the stop rule.
    Max,
}

impl Reason {
    pub const ALL: [Reason; 3] = [Reason::Agreed, Reason::Confident, Reason::Max];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Agreed => "agreed",
            Reason::Confident => "confident",
            Reason::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Ask one more person.
    More,
    /// No more answers. `label` is the leading value among those given (by
    /// posterior under `stop = "posterior"`, by count otherwise, ties to the
    /// earliest given); `posterior` its posterior under either rule.
    Stop { reason: Reason, label: usize, posterior: f64 },
}

impl Adaptive {
    /// Checks a written table; errors say which key is wrong.
    pub fn parse(spec: &AdaptiveSpec) -> Result<Adaptive, (&'static str, String)> {
        let min = spec.min.ok_or(("assignment.adaptive.min", "missing: the answers every item gets".to_string()))?;
        let max = spec.max.ok_or(("assignment.adaptive.max", "missing: the most answers an item gets".to_string()))?;
        if min == 0 {
            return Err(("assignment.adaptive.min", "must be at least 1".into()));
        }
        if max < min || max > MAX_ANSWERS {
            return Err((
                "assignment.adaptive.max",
                format!("must be between min ({min}) and {MAX_ANSWERS}, got {max}"),
            ));
        }
        let stop = match (spec.stop.as_deref(), spec.threshold) {
            (Some("agree"), None) => Stop::Agree,
            (Some("agree"), Some(_)) => {
                return Err(("assignment.adaptive.threshold", "belongs to stop = \"posterior\"".into()))
            }
            (Some("posterior"), Some(t)) if t > 0.0 && t < 1.0 => Stop::Posterior { threshold: t },
            (Some("posterior"), Some(t)) => {
                return Err(("assignment.adaptive.threshold", format!("must be between 0 and 1 (exclusive), got {t}")))
            }
            (Some("posterior"), None) => {
                return Err((
                    "assignment.adaptive.threshold",
                    "stop = \"posterior\" needs a threshold, e.g. 0.95".into(),
                ))
            }
            (Some(other), _) => {
                return Err(("assignment.adaptive.stop", format!("unknown rule {other:?}; known: agree, posterior")))
            }
            (None, _) => return Err(("assignment.adaptive.stop", "missing: \"agree\" or \"posterior\"".into())),
        };
        let end_uninformative = match (stop, spec.end_uninformative) {
            (Stop::Agree, Some(true)) => {
                return Err((
                    "assignment.adaptive.end_uninformative",
                    "needs stop = \"posterior\": only its reliability model recognises who carries no information"
                        .into(),
                ))
            }
            (Stop::Agree, _) => false,
            (Stop::Posterior { .. }, e) => e.unwrap_or(true),
        };
        Ok(Adaptive { min, max, stop, allow_unchosen: spec.allow_unchosen.unwrap_or(false), end_uninformative })
    }

    /// Whether `person` gets no more items: the study ends the places of
    /// people recognised as carrying no information, and they are.
    pub fn ends_place(&self, person: u64, rel: &Reliability) -> bool {
        self.end_uninformative && rel.uninformative(person)
    }

    /// The decision once an item's round is in: `answers` are its
    /// `(person, class)` answers in the order given, classes `< rel.k`.
    pub fn decide(&self, item: u64, answers: &[(u64, usize)], rel: &Reliability) -> Decision {
        let n = answers.len();
        if n == 0 || n < self.min {
            return Decision::More;
        }
        let reliability::Weighed { posterior, counted, flat } = rel.weigh(Some(item), answers);
        let (label, met) = match self.stop {
            Stop::Agree => {
                let (label, margin) = leader(answers, rel.k);
                (label, margin >= AGREE_MARGIN)
            }
            Stop::Posterior { threshold } => {
                let label = most_probable_given(answers, &posterior);
                let agreeing = answers.iter().zip(&counted).filter(|&(&(_, c), &counts)| c == label && counts).count();
                let sure = posterior[label] >= threshold && flat[label] >= threshold;
                (label, sure && agreeing >= MIN_AGREEING)
            }
        };
        let reason = match self.stop {
            _ if !met && n < self.max => return Decision::More,
            _ if !met => Reason::Max,
            Stop::Agree => Reason::Agreed,
            Stop::Posterior { .. } => Reason::Confident,
        };
        Decision::Stop { reason, label, posterior: posterior[label] }
    }
}

/// The most given class (ties to the one given first) and its lead over the runner-up.
fn leader(answers: &[(u64, usize)], k: usize) -> (usize, usize) {
    let mut count = vec![0usize; k.max(1)];
    for &(_, c) in answers {
        if let Some(slot) = count.get_mut(c) {
            *slot += 1;
        }
    }
    let top = count.iter().copied().max().unwrap_or(0);
    let label = answers.iter().map(|a| a.1).find(|&c| count.get(c) == Some(&top)).unwrap_or(0);
    let runner_up = count.iter().enumerate().filter(|&(c, _)| c != label).map(|(_, &n)| n).max().unwrap_or(0);
    (label, top - runner_up)
}

/// Of the classes somebody gave, the most probable (ties to the one given
/// first): a value nobody chose is never the stop rule's.
pub fn most_probable_given(answers: &[(u64, usize)], posterior: &[f64]) -> usize {
    let mut best: Option<usize> = None;
    for &(_, c) in answers.iter().filter(|a| a.1 < posterior.len()) {
        if best.is_none_or(|b| posterior[c] > posterior[b]) {
            best = Some(c);
        }
    }
    best.unwrap_or(0)
}

/// Checks `[assignment.adaptive]` against the rest of the spec: one
/// categorical question per item (the kind's descriptor says), items handed
/// out one by one (not pairs or groups), enough named annotators for `max`.
/// A link study's bundles then want `min` copies: `copies` and
/// `paired_bundles` belong to a fixed overlap.
pub fn for_study(
    spec: &AdaptiveSpec,
    rule: &AssignmentRule,
    resolve: ResolveRule,
    kind: SurveyKind,
    annotators: &Annotators,
    link: Option<LinkSettings>,
    link_spec: Option<&LinkSpec>,
) -> Result<(Adaptive, Option<LinkSettings>), (&'static str, String)> {
    let a = Adaptive::parse(spec)?;
    if a.allow_unchosen && resolve.model().is_none() {
        return Err((
            "assignment.adaptive.allow_unchosen",
            format!(
                "only a model resolve (dawid_skene, mace) can settle on a value nobody chose; resolve is {:?}",
                resolve.as_str()
            ),
        ));
    }
    // Adaptive overlap gives the primary only some items: every item it left
    // at max without the primary's answer would wait for adjudication (audit AW).
    if resolve == ResolveRule::Primary {
        return Err((
            "resolve",
            "\"primary\" needs the primary annotator's answer on every item, which adaptive overlap does not \
             assign; use adjudication, first, dawid_skene or mace"
                .into(),
        ));
    }
    if kind.question_count() != 1 || kind.values().len() < 2 {
        return Err((
            "assignment.adaptive",
            format!(
                "kind {kind} asks {} question(s) per item; adaptive overlap needs one categorical answer per item",
                kind.question_count()
            ),
        ));
    }
    // Its answers are graded against a known answer: no item label to settle
    // (an audit: caption_match items "settled" wrong, nearly all at max).
    if matches!(kind.spec().role, Role::Report(Report::Accuracy { .. })) {
        return Err((
            "assignment.adaptive",
            format!("kind {kind} measures people against a known answer; it has no item label for adaptive overlap to settle"),
        ));
    }
    if !matches!(rule, AssignmentRule::EachAnnotatorAll) {
        return Err((
            "assignment.adaptive",
            "decides who answers each item itself: use it without rule = \"pairs\" or \"groups\"".into(),
        ));
    }
    if let (None, Annotators::Named(names)) = (&link, annotators) {
        if names.len() < a.max {
            return Err((
                "assignment.adaptive.max",
                format!(
                    "{} answers per item need at least {} annotators; the study names {}",
                    a.max,
                    a.max,
                    names.len()
                ),
            ));
        }
    }
    let link = match link {
        None => None,
        Some(mut l) => {
            if link_spec.is_some_and(|s| s.copies.is_some() || s.paired_bundles.is_some_and(|p| p > 0)) {
                return Err((
                    "link.copies",
                    "with adaptive overlap every bundle wants `min` copies: leave out copies and paired_bundles".into(),
                ));
            }
            l.copies = a.min as i64;
            Some(l)
        }
    };
    Ok((a, link))
}

/// Link studies: whether the items waiting for another answer are bundled
/// now. A full bundle's worth waits for nobody; fewer are bundled once no
/// participant is still working (whose answers could add to them), or they
/// would wait forever.
pub fn bundle_now(waiting: usize, working: usize, bundle_size: usize) -> bool {
    waiting > 0 && (waiting >= bundle_size.max(1) || working == 0)
}

/// Account studies: who gets an item's next answer: of the annotators who
/// have started (`(user, open tasks)`), one who has not had the item, with
/// the fewest open tasks, ties to the lower id; None: it waits for a newcomer.
pub fn pick_annotator(started: &[(i64, i64)], had_it: &[i64]) -> Option<i64> {
    started.iter().filter(|(u, _)| !had_it.contains(u)).min_by_key(|&&(u, open)| (open, u)).map(|&(u, _)| u)
}

/// The answer count a study's reliabilities are fitted at when it has
/// `answers` (every stored answer, checks included): the largest point of a
/// fixed grid (0, 1, 2, …, 10, then a tenth more each step) not past it. The
/// fit at a point reads only the first that many answers in vote order, so
/// it is the same from any server, before and after a restart: a decision
/// depends on the answers and their order, not on when a process last fitted.
pub fn fit_point(answers: u64) -> u64 {
    let mut point = 0u64;
    loop {
        let next = point + point.div_ceil(10).max(1);
        if next > answers {
            return point;
        }
        point = next;
    }
}

#[cfg(test)]
mod tests;
