//! Adaptive overlap: an item starts with `min` answers and gets one more,
//! from someone who has not answered it, until its answers meet the stop
//! rule or it has `max`. The decision is taken here, from the answers alone;
//! the shell (`studies::adaptive`) stores what it says, under the writer's gate.
use super::assignment::{Annotators, AssignmentRule};
use super::crowd::spec::{LinkSettings, LinkSpec};
use super::survey::SurveyKind;
use serde::{Deserialize, Serialize};

/// The `[assignment.adaptive]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveSpec {
    pub min: Option<usize>,
    pub max: Option<usize>,
    pub stop: Option<String>,
    pub threshold: Option<f64>,
}

/// More answers per item than any study needs; bounds a typo like `max = 50`.
pub const MAX_ANSWERS: usize = 20;

/// A person's accuracy before the model has estimated it (too few answers):
/// a middling crowd worker on a 5-way question.
pub const PRIOR_ACCURACY: f64 = 0.7;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stop", rename_all = "snake_case")]
pub enum Stop {
    /// The leading value is ahead of every other by at least [`AGREE_MARGIN`]
    /// answers: with two answers, both agree; one more dissent could only tie it.
    Agree,
    /// The leading value's posterior (one-coin model: each person right with
    /// their estimated accuracy, wrong answers spread evenly) reaches `threshold`.
    Posterior { threshold: f64 },
}

pub const AGREE_MARGIN: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    pub min: usize,
    pub max: usize,
    #[serde(flatten)]
    pub stop: Stop,
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
    /// No more answers; `label` is the leading value (by posterior under
    /// `stop = "posterior"`, by count otherwise, ties to the earliest given).
    Stop { reason: Reason, label: usize, posterior: Option<f64> },
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
        Ok(Adaptive { min, max, stop })
    }

    /// The decision once an item's round is in: `answers` are its answers in
    /// the order given, each the class (`< k`) and the accuracy of the person
    /// who gave it (only `stop = "posterior"` reads the accuracies).
    pub fn decide(&self, answers: &[(usize, f64)], k: usize) -> Decision {
        let n = answers.len();
        if n == 0 || n < self.min {
            return Decision::More;
        }
        let (label, posterior, met) = match self.stop {
            Stop::Agree => {
                let (label, margin) = leader(answers, k);
                (label, None, margin >= AGREE_MARGIN)
            }
            Stop::Posterior { threshold } => {
                let (label, p) = one_coin_posterior(answers, k);
                (label, Some(p), p >= threshold)
            }
        };
        let reason = match self.stop {
            _ if !met && n < self.max => return Decision::More,
            _ if !met => Reason::Max,
            Stop::Agree => Reason::Agreed,
            Stop::Posterior { .. } => Reason::Confident,
        };
        Decision::Stop { reason, label, posterior }
    }
}

/// The most given class (ties to the one given first) and its lead over the runner-up.
fn leader(answers: &[(usize, f64)], k: usize) -> (usize, usize) {
    let mut count = vec![0usize; k.max(1)];
    for &(c, _) in answers {
        if let Some(slot) = count.get_mut(c) {
            *slot += 1;
        }
    }
    let top = count.iter().copied().max().unwrap_or(0);
    let label = answers.iter().map(|a| a.0).find(|&c| count.get(c) == Some(&top)).unwrap_or(0);
    let runner_up = count.iter().enumerate().filter(|&(c, _)| c != label).map(|(_, &n)| n).max().unwrap_or(0);
    (label, top - runner_up)
}

/// The most probable class and its posterior under a uniform prior, each
/// person right with their accuracy (clamped to [0.01, 0.99] so no single
/// answer is certain) and wrong evenly over the other `k - 1` classes.
pub fn one_coin_posterior(answers: &[(usize, f64)], k: usize) -> (usize, f64) {
    let k = k.max(2);
    let mut log = vec![0f64; k];
    for &(given, accuracy) in answers {
        let a = accuracy.clamp(0.01, 0.99);
        let (right, wrong) = (a.ln(), ((1.0 - a) / (k - 1) as f64).ln());
        for (c, l) in log.iter_mut().enumerate() {
            *l += if c == given { right } else { wrong };
        }
    }
    let top = log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = log.iter().map(|l| (l - top).exp()).sum();
    // Ties go to the smaller class, as the models do.
    let label = log.iter().position(|&l| l == top).unwrap_or(0);
    (label, 1.0 / total)
}

/// Checks `[assignment.adaptive]` against the rest of the spec: one
/// categorical question per item (the kind's descriptor says), items handed
/// out one by one (not pairs or groups), enough named annotators for `max`.
/// A link study's bundles then want `min` copies: `copies` and
/// `paired_bundles` belong to a fixed overlap.
pub fn for_study(
    spec: &AdaptiveSpec,
    rule: &AssignmentRule,
    kind: SurveyKind,
    annotators: &Annotators,
    link: Option<LinkSettings>,
    link_spec: Option<&LinkSpec>,
) -> Result<(Adaptive, Option<LinkSettings>), (&'static str, String)> {
    let a = Adaptive::parse(spec)?;
    if kind.question_count() != 1 || kind.values().len() < 2 {
        return Err((
            "assignment.adaptive",
            format!(
                "kind {kind} asks {} question(s) per item; adaptive overlap needs one categorical answer per item",
                kind.question_count()
            ),
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

/// Per item: what the research page and API show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveItem {
    pub instance_id: i64,
    /// Answers counted so far.
    pub answers: i64,
    /// Answers asked for so far (`min`, plus one per round that did not stop).
    pub wanted: i64,
    /// None while it is still collecting.
    pub reason: Option<Reason>,
    pub value: Option<String>,
    pub posterior: Option<f64>,
}

/// A study's adaptive overlap at a glance: answers spent against the same
/// items at a fixed overlap of `max` (the most any item may get here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveReport {
    pub study_id: i64,
    pub settings: Adaptive,
    pub items: Vec<AdaptiveItem>,
    pub answers_spent: i64,
    pub fixed_answers: i64,
    /// `1 - spent / fixed`, over stopped items only (in-flight ones would flatter it).
    pub saved_share: Option<f64>,
    pub stopped: StopCounts,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopCounts {
    pub agreed: i64,
    pub confident: i64,
    pub max: i64,
    pub collecting: i64,
}

impl AdaptiveReport {
    pub fn new(study_id: i64, settings: Adaptive, items: Vec<AdaptiveItem>) -> AdaptiveReport {
        let mut stopped = StopCounts::default();
        let (mut spent_done, mut done) = (0i64, 0i64);
        for it in &items {
            match it.reason {
                Some(Reason::Agreed) => stopped.agreed += 1,
                Some(Reason::Confident) => stopped.confident += 1,
                Some(Reason::Max) => stopped.max += 1,
                None => stopped.collecting += 1,
            }
            if it.reason.is_some() {
                spent_done += it.answers;
                done += 1;
            }
        }
        let answers_spent = items.iter().map(|i| i.answers).sum();
        let fixed_answers = items.len() as i64 * settings.max as i64;
        let saved_share = (done > 0).then(|| 1.0 - spent_done as f64 / (done * settings.max as i64) as f64);
        AdaptiveReport { study_id, settings, items, answers_spent, fixed_answers, saved_share, stopped }
    }

    /// The report without its items, for the live dashboard.
    pub fn savings(&self) -> Savings {
        Savings {
            max: self.settings.max,
            answers_spent: self.answers_spent,
            fixed_answers: self.fixed_answers,
            saved_share: self.saved_share,
            stopped: self.stopped.clone(),
        }
    }
}

/// An adaptive study's spending: answers spent against items × `max`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Savings {
    pub max: usize,
    pub answers_spent: i64,
    pub fixed_answers: i64,
    pub saved_share: Option<f64>,
    pub stopped: StopCounts,
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
