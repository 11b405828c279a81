//! Crowd aggregation with per-person reliability: which label each item most
//! probably has, and how far each person can be trusted, from a sparse answer
//! matrix of `(item, person, label)` triples over `k` classes.
//!
//! [`aggregate`] runs either model:
//! * [`Model::DawidSkene`] — EM over one confusion matrix per person plus
//!   class priors (Dawid & Skene 1979), initialised from the majority-vote shares;
//! * [`Model::Mace`] — per-person competence (probability of not spamming)
//!   and a spamming strategy, EM with seeded random restarts (Hovy et al. 2013).
//!
//! Both follow crowd-kit 1.4.2 (`DawidSkene`, `MACE(method="em")`) so that a
//! committed fixture made by it can check us (`scripts/reference/`).
//!
//! Failure modes, decided here once:
//! * no answers → [`AggregateError::NoAnswers`];
//! * a class nobody chose (and no gold item names) is left out of the model:
//!   it gets probability 0 everywhere and is listed in `unseen_classes` (it
//!   has no evidence, and MACE's uniform prior would otherwise give it mass);
//! * a person with fewer than `min_answers_per_person` answers (default 2) →
//!   [`AggregateError::TooFewAnswers`]: one answer makes a confusion matrix
//!   that claims accuracy 0 or 1, and callers must decide (the study layer
//!   then leaves disagreements to adjudication);
//! * an (item, person) pair answered twice: the later answer counts, as in
//!   the agreement statistics.
//!
//! Pure: no IO, no framework types.
mod dawid_skene;
mod mace;
mod prepared;
#[cfg(test)]
pub(crate) mod reference_tests;
#[cfg(test)]
pub(crate) mod sim;
mod sparse;
#[cfg(test)]
mod tests;

use prepared::Prepared;
use serde::Serialize;
pub use sparse::{aggregate_pooling_sparse, answers_of_fitted_people};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    DawidSkene,
    Mace,
}

/// Knobs shared by both models; start from [`Options::dawid_skene`] or [`Options::mace`].
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Converged when the per-answer objective changes by less than this
    /// (a negative value never stops early: exactly `max_iter` iterations).
    pub tol: f64,
    pub max_iter: usize,
    /// MACE only: random restarts; the one with the best likelihood wins.
    pub restarts: usize,
    /// MACE only: seeds the restarts' initial parameters.
    pub seed: u64,
    /// MACE only: pseudo-count added before normalising; `None` is 0.01 / K.
    pub smoothing: Option<f64>,
    pub min_answers_per_person: usize,
    /// MACE only: the restarts run on this many threads (the caller knows
    /// the machine; the result is the same for any count).
    pub threads: usize,
}

impl Options {
    pub fn for_model(model: Model) -> Self {
        match model {
            Model::DawidSkene => Options::dawid_skene(),
            Model::Mace => Options::mace(),
        }
    }

    /// crowd-kit's defaults: tolerance 1e-5 on the evidence lower bound per answer, 100 iterations.
    pub fn dawid_skene() -> Self {
        Options {
            tol: 1e-5,
            max_iter: 100,
            restarts: 1,
            seed: 0,
            smoothing: None,
            min_answers_per_person: 2,
            threads: 1,
        }
    }

    /// crowd-kit's 10 restarts of at most 50 iterations; stops early once
    /// the log-likelihood per answer moves by less than 1e-7.
    pub fn mace() -> Self {
        Options {
            tol: 1e-7,
            max_iter: 50,
            restarts: 10,
            seed: 0,
            smoothing: None,
            min_answers_per_person: 2,
            threads: 1,
        }
    }
}

/// Runs `model` over `(item, person, label)` answers with labels `< k`;
/// `gold` clamps items to a known label in every E-step.
pub fn aggregate(
    model: Model,
    answers: &[(u64, u64, usize)],
    k: usize,
    gold: &[(u64, usize)],
    opts: &Options,
) -> Result<Aggregation, AggregateError> {
    let p = Prepared::new(answers, k, gold, opts)?;
    let fit = match model {
        Model::DawidSkene => dawid_skene::fit(&p, opts),
        Model::Mace => mace::fit(&p, opts),
    };
    Ok(finish(model, &p, fit))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AggregateError {
    #[error("no answers to aggregate")]
    NoAnswers,
    #[error("the models need at least 2 classes, got {0}")]
    TooFewClasses(usize),
    #[error("answer {index} (item {item}, person {person}): label {label} is out of range for {k} classes")]
    LabelOutOfRange { index: usize, item: u64, person: u64, label: usize, k: usize },
    #[error("gold item {item}: label {label} is out of range for {k} classes")]
    GoldOutOfRange { item: u64, label: usize, k: usize },
    #[error("gold item {item} has no answers")]
    GoldWithoutAnswers { item: u64 },
    #[error(
        "person {person} gave {answers} answer(s); at least {min} per person are needed \
         to estimate a reliability"
    )]
    TooFewAnswers { person: u64, answers: usize, min: usize },
    #[error("{0} must be at least 1")]
    ZeroOption(&'static str),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemPosterior {
    pub item: u64,
    /// The most probable label (ties, within a relative 1e-9, go to the smaller label).
    pub label: usize,
    /// Its posterior probability.
    pub posterior: f64,
    /// Posterior over all `k` classes.
    pub probabilities: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PersonReliability {
    pub person: u64,
    pub answers: usize,
    /// Expected share of this person's answers that are right: the mean
    /// posterior probability of the label they gave (comparable across models).
    pub accuracy: f64,
    /// Dawid–Skene: `confusion[truth][answer]` = P(answer | truth), rows sum to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Vec<Vec<f64>>>,
    /// MACE: probability that the person is not spamming on an item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub competence: Option<f64>,
    /// MACE: the label distribution the person answers with when spamming.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Vec<f64>>,
    /// Too few answers to be fitted: their answers were weighed at the
    /// pooled crowd's confusion ([`aggregate_pooling_sparse`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pooled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregation {
    pub model: Model,
    pub k: usize,
    /// Items in ascending id order.
    pub items: Vec<ItemPosterior>,
    /// People in ascending id order.
    pub people: Vec<PersonReliability>,
    /// Class priors (Dawid–Skene's estimate; MACE's fixed uniform prior over seen classes).
    pub priors: Vec<f64>,
    pub unseen_classes: Vec<usize>,
    pub iterations: usize,
    pub converged: bool,
    /// The objective at the end: DS's evidence lower bound per answer, MACE's log-likelihood per answer.
    pub objective: f64,
}

/// MACE's competence at or below which a person carries no information:
/// they answer at random at least 80 % of the time (the floor earned
/// reliability's kappa uses, `adaptive::reliability::MIN_KAPPA`).
pub const MACE_NO_INFORMATION: f64 = 0.2;

impl PersonReliability {
    /// MACE found this person answering (nearly) at random; a person without
    /// a competence of their own (Dawid–Skene, or pooled) is not judged here.
    pub fn carries_no_information(&self) -> bool {
        self.competence.is_some_and(|c| c <= MACE_NO_INFORMATION)
    }
}

impl Aggregation {
    /// Whether every one of `givers` carries no information, so that the
    /// model's value for an item only they answered is their spamming
    /// habits, not evidence (false for no givers).
    pub fn none_informed(&self, givers: &[u64]) -> bool {
        !givers.is_empty()
            && givers.iter().all(|&p| self.person(p).is_some_and(PersonReliability::carries_no_information))
    }

    pub fn item(&self, id: u64) -> Option<&ItemPosterior> {
        self.items.binary_search_by_key(&id, |i| i.item).ok().map(|x| &self.items[x])
    }

    pub fn person(&self, id: u64) -> Option<&PersonReliability> {
        self.people.binary_search_by_key(&id, |p| p.person).ok().map(|x| &self.people[x])
    }
}

/// Per-person extras each model adds to the shared output.
struct PersonExtra {
    confusion: Option<Vec<Vec<f64>>>,
    competence: Option<f64>,
    strategy: Option<Vec<f64>>,
}

/// What a model run ends with; `q` is the n × kc posterior over seen classes.
struct Fit {
    q: Vec<f64>,
    priors: Vec<f64>,
    extras: Vec<PersonExtra>,
    iterations: usize,
    converged: bool,
    objective: f64,
}

/// The shared output: posteriors expanded to all `k` classes, most probable
/// labels, and each person's accuracy from the posteriors.
fn finish(model: Model, p: &Prepared, fit: Fit) -> Aggregation {
    let kc = p.classes.len();
    let expand = |v: &[f64]| {
        let mut out = vec![0.0; p.k];
        for (c, &x) in v.iter().enumerate() {
            out[p.classes[c]] = x;
        }
        out
    };
    let items = (0..p.items.len())
        .map(|i| {
            let row = &fit.q[i * kc..(i + 1) * kc];
            let best = argmax(row);
            ItemPosterior { item: p.items[i], label: p.classes[best], posterior: row[best], probabilities: expand(row) }
        })
        .collect();
    let mut right = vec![0.0; p.people.len()];
    for i in 0..p.items.len() {
        for x in p.starts[i]..p.starts[i + 1] {
            right[p.person[x] as usize] += fit.q[i * kc + p.label[x] as usize];
        }
    }
    let people = fit
        .extras
        .into_iter()
        .enumerate()
        .map(|(w, e)| PersonReliability {
            person: p.people[w],
            answers: p.per_person[w],
            accuracy: right[w] / p.per_person[w] as f64,
            confusion: e.confusion.map(|m| {
                let mut full = vec![vec![0.0; p.k]; p.k];
                for (t, row) in m.iter().enumerate() {
                    full[p.classes[t]] = expand(row);
                }
                full
            }),
            competence: e.competence,
            strategy: e.strategy.map(|s| expand(&s)),
            pooled: false,
        })
        .collect();
    Aggregation {
        model,
        k: p.k,
        items,
        people,
        priors: expand(&fit.priors),
        unseen_classes: p.unseen.clone(),
        iterations: fit.iterations,
        converged: fit.converged,
        objective: fit.objective,
    }
}

/// Index of the largest value; the first one on ties.
/// Two labels whose evidence is exactly symmetric come out of EM a rounding
/// error apart, in a direction set by the order the sums ran in; within this
/// relative margin they tie, and the tie goes to the smaller label.
const TIE_MARGIN: f64 = 1e-9;

fn argmax(row: &[f64]) -> usize {
    let mut best = 0;
    for (c, &x) in row.iter().enumerate() {
        if x > row[best] + TIE_MARGIN * row[best].abs() {
            best = c;
        }
    }
    best
}

/// Turns log scores into probabilities in place; returns log Σ exp(row).
fn softmax_in_place(row: &mut [f64]) -> f64 {
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in row.iter_mut() {
        *x /= sum;
    }
    max + sum.ln()
}
