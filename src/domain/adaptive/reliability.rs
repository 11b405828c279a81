//! How far each person's answers can be trusted when an adaptive item's
//! round is decided: a class-conditional model (one confusion row per true
//! value, as Dawid–Skene) whose per-person rows are *earned*:
//!
//! * **Shrunk toward the crowd.** A person's row for true value `t` is
//!   `(n[t][a] + S · crowd[t][a]) / (n[t] + S)`: their own (soft) counts plus
//!   a prior worth [`PRIOR_STRENGTH`] answers centred on the pooled crowd
//!   (spammers and all, so the centre is a middling worker). Two lucky
//!   answers move a person only part of the way from the crowd.
//! * **Class-conditional.** A person who confuses None with one slot, or who
//!   overuses None, gets rows that say so: their "None" then weighs little
//!   for that slot, where a one-coin accuracy would count it in full.
//! * **Spammers and adversaries weigh nothing.** A person whose answers agree
//!   with the truth no better than chance given how they spread their answers
//!   (Cohen's kappa of their rows at most [`MIN_KAPPA`]: always the same value,
//!   random, or below chance) is left out of every posterior.
//! * **Recognised spammers carry nothing, and are told apart early.** The
//!   shrunk rows take dozens of answers to give up on someone; their answers
//!   on items others settled ([`super::evidence`]) do not. Once a person has
//!   [`MIN_SETTLED`] such answers ([`MIN_CONTRAST`] of them settled on another
//!   value than the commonest) and agrees with those values no better than
//!   chance (kappa at most [`MIN_KAPPA`]), they are [`Person::uninformative`]:
//!   their answers count nowhere, and adaptive assignment sends them no more.
//! * **Gold answers count in full**: each is a known `(truth, answer)` count.
//!
//! * **The centre is fitted honestly.** The crowd's confusion and the class
//!   priors come from a pooled model first (one confusion for everybody, as
//!   a person drawn at random answers), then stay fixed while the
//!   per-person rows are fitted. Fitted together, per-person rows of a few
//!   answers each agreed with the posteriors they themselves made, and
//!   talked the centre and the priors into a confidence the crowd had not
//!   earned (a crowd of 60 % bad workers in bundles of 5: items stopped at
//!   0.95 were right on 80 %; docs/performance.md, session 38).
//! * **An item is decided on rows earned without its raters.** A fitted row
//!   counts a person's agreement with consensuses they helped make, and with
//!   the very people they are now weighed beside: two people who swap the
//!   same values and share a bundle made each other look reliable, and their
//!   agreement on a wrong value read as 0.99 (a session-48 audit: 8 % of
//!   stops at 0.95 wrong). [`Reliability::weigh`] earns each row again from
//!   the person's answers on items settled without any of the item's raters
//!   ([`super::earned`]); with no such items, they weigh as the crowd.
//!
//! Fitted by EM (majority-vote start, [`ITERATIONS`] rounds each), a separate
//! model from `domain::aggregate`'s Dawid–Skene, which stays crowd-kit's.
pub use super::earned::FittedItem;
use super::evidence::{settled, Settled};
pub use super::evidence::{MIN_CONTRAST, MIN_SETTLED};
use std::collections::HashMap;

/// Answers' worth of the crowd prior in each of a person's confusion rows.
pub const PRIOR_STRENGTH: f64 = 5.0;
/// A person's kappa (agreement beyond chance with the model's truth) must
/// exceed this for their answers to count.
pub const MIN_KAPPA: f64 = 0.2;
pub const ITERATIONS: usize = 30;
/// Before any answer: the crowd is a middling worker on the kind's values.
pub const PRIOR_ACCURACY: f64 = 0.7;

#[derive(Debug, Clone, PartialEq)]
pub struct Person {
    pub answers: usize,
    /// `confusion[t * k + a]` = P(answers `a` | truth `t`), shrunk.
    pub confusion: Vec<f64>,
    /// Agreement beyond chance; at most [`MIN_KAPPA`]: the answers do not count.
    pub kappa: f64,
    /// The `(item, class)` answers the fit read, and the gold answers' counts
    /// `[t * k + a]`: what [`Reliability::weigh`] earns the rows from again,
    /// without the item's raters ([`super::earned`]). Both empty for a person
    /// built by hand, who is weighed with `confusion` as it stands.
    pub answered: Vec<(u64, usize)>,
    pub gold: Vec<f64>,
    /// Answers on items others settled, and the agreement with those values.
    pub settled: Settled,
}

impl Person {
    pub fn counts(&self) -> bool {
        self.kappa > MIN_KAPPA && !self.uninformative()
    }

    /// Enough evidence that the person's answers carry no information.
    pub fn uninformative(&self) -> bool {
        self.settled.enough() && self.settled.kappa <= MIN_KAPPA
    }

    /// Share of answers expected right under the class priors.
    pub fn accuracy(&self, priors: &[f64]) -> f64 {
        let k = priors.len();
        (0..k).map(|t| priors[t] * self.confusion[t * k + t]).sum()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reliability {
    pub k: usize,
    /// How common each true value is (estimated, smoothed).
    pub priors: Vec<f64>,
    /// The pooled crowd's confusion: the prior centre, and what a person the
    /// fit has not seen yet counts as.
    pub crowd: Vec<f64>,
    pub people: HashMap<u64, Person>,
    /// Per item in the fit: its posterior as the fit ended and the answers
    /// the fit read, to take them out again ([`super::earned`]).
    pub items: HashMap<u64, FittedItem>,
}

/// An item's answers weighed: the posterior, and per answer whether it counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Weighed {
    pub posterior: Vec<f64>,
    pub counted: Vec<bool>,
    /// The posterior from the same answers under flat class priors.
    pub flat: Vec<f64>,
}

impl Reliability {
    /// No answers yet: uniform priors, everyone a middling worker.
    pub fn uninformed(k: usize) -> Reliability {
        let k = k.max(2);
        let wrong = (1.0 - PRIOR_ACCURACY) / (k - 1) as f64;
        let crowd = (0..k * k).map(|x| if x / k == x % k { PRIOR_ACCURACY } else { wrong }).collect();
        Reliability { k, priors: vec![1.0 / k as f64; k], crowd, people: HashMap::new(), items: HashMap::new() }
    }

    /// Fits `(item, person, class)` answers and `(person, truth, class)` gold
    /// answers over `k` classes; classes out of range are ignored.
    pub fn fit(answers: &[(u64, u64, usize)], gold: &[(u64, usize, usize)], k: usize) -> Reliability {
        let k = k.max(2);
        // Sorted: the sums below then run in one order however the answers were read.
        let mut answers: Vec<_> = answers.iter().copied().filter(|a| a.2 < k).collect();
        answers.sort_unstable();
        let mut gold: Vec<_> = gold.iter().copied().filter(|g| g.1 < k && g.2 < k).collect();
        gold.sort_unstable();
        let mut rel = Reliability::uninformed(k);
        if answers.is_empty() && gold.is_empty() {
            return rel;
        }
        let mut items: Vec<u64> = answers.iter().map(|a| a.0).collect();
        items.sort_unstable();
        items.dedup();
        let mut people: Vec<u64> = answers.iter().map(|a| a.1).chain(gold.iter().map(|g| g.0)).collect();
        people.sort_unstable();
        people.dedup();
        let item_ix = |id: u64| items.binary_search(&id).unwrap_or(0);
        let person_ix = |id: u64| people.binary_search(&id).unwrap_or(0);
        let rows: Vec<(usize, usize, usize)> = answers.iter().map(|a| (item_ix(a.0), person_ix(a.1), a.2)).collect();
        let gold: Vec<(usize, usize, usize)> = gold.iter().map(|g| (person_ix(g.0), g.1, g.2)).collect();
        let mut n_answers = vec![0usize; people.len()];
        rows.iter().for_each(|r| n_answers[r.1] += 1);
        gold.iter().for_each(|g| n_answers[g.0] += 1);
        // Start from the vote shares.
        let mut q = vec![0.0; items.len() * k];
        for &(i, _, c) in &rows {
            q[i * k + c] += 1.0;
        }
        normalise_rows(&mut q, k);
        // The pooled model: everybody shares the crowd's rows.
        for _ in 0..ITERATIONS {
            (rel.crowd, rel.priors) = pooled(&rows, &gold, &q, k);
            q = e_step(&rows, &rel.priors, items.len(), Rows::Shared(&rel.crowd), k);
        }
        // Per-person rows around that centre, which stays where it is.
        let (mut confusion, mut kappa) = (vec![0.0; people.len() * k * k], vec![0.0; people.len()]);
        let (mut soft, mut counts_of) = (vec![0.0; people.len() * k * k], vec![true; people.len()]);
        for _ in 0..ITERATIONS {
            m_step(&rows, &gold, &q, &rel, &mut soft, &mut confusion, &mut kappa, &mut counts_of);
            let per_person = Rows::PerPerson { confusion: &confusion, counts: &counts_of };
            q = e_step(&rows, &rel.priors, items.len(), per_person, k);
        }
        // The rows stored are the ones the stored posteriors imply.
        m_step(&rows, &gold, &q, &rel, &mut soft, &mut confusion, &mut kappa, &mut counts_of);
        let evidence = settled(&rows, &gold, &q, &confusion, &counts_of, k);
        let mut answered = vec![Vec::new(); people.len()];
        rows.iter().for_each(|&(i, w, c)| answered[w].push((items[i], c)));
        let mut gold_counts = vec![Vec::new(); people.len()];
        for &(w, t, c) in &gold {
            let counts = &mut gold_counts[w];
            counts.resize(k * k, 0.0);
            counts[t * k + c] += 1.0;
        }
        let fitted = answered.into_iter().zip(gold_counts).enumerate();
        rel.people = fitted
            .map(|(w, (answered, gold))| {
                let person = Person {
                    answers: n_answers[w],
                    confusion: confusion[w * k * k..(w + 1) * k * k].to_vec(),
                    kappa: kappa[w],
                    answered,
                    gold,
                    settled: evidence[w],
                };
                (people[w], person)
            })
            .collect();
        for &(i, w, c) in &rows {
            let entry = rel.items.entry(items[i]).or_insert_with(|| (q[i * k..(i + 1) * k].to_vec(), Vec::new()));
            entry.1.push((people[w], c, kappa[w] > MIN_KAPPA));
        }
        rel
    }

    /// Whether the person's answers count (someone not yet fitted counts as the crowd).
    pub fn counts(&self, person: u64) -> bool {
        self.people.get(&person).is_none_or(Person::counts)
    }

    /// Whether adaptive assignment sends the person no more items: recognised
    /// as carrying no information ([`Person::uninformative`]).
    pub fn uninformative(&self, person: u64) -> bool {
        self.people.get(&person).is_some_and(Person::uninformative)
    }

    /// The posterior over the `k` values given `(person, class)` answers,
    /// weighed with the rows as fitted.
    pub fn posterior(&self, answers: &[(u64, usize)]) -> Vec<f64> {
        self.weigh(None, answers).posterior
    }

    /// `item`'s answers weighed, each person's rows earned again without
    /// any of these answers' givers in the evidence ([`super::earned`]):
    /// people who shared a bundle vouch for nobody's skill but their own
    /// agreement, which is what the posterior already counts.
    pub fn weigh(&self, item: Option<u64>, answers: &[(u64, usize)]) -> Weighed {
        let k = self.k;
        let mut log: Vec<f64> = self.priors.iter().map(|p| p.ln()).collect();
        let mut counted = Vec::with_capacity(answers.len());
        let mut rows = vec![0.0; k * k];
        // The raters whose answers are in the fitted posteriors, with their rows.
        let raters: Vec<(u64, &[f64])> = answers
            .iter()
            .filter_map(|&(r, _)| {
                self.people.get(&r).filter(|p| p.kappa > MIN_KAPPA).map(|p| (r, p.confusion.as_slice()))
            })
            .collect();
        for &(person, c) in answers {
            let counts = match self.people.get(&person) {
                None => {
                    rows.copy_from_slice(&self.crowd);
                    true
                }
                Some(p) if p.answered.is_empty() && p.gold.is_empty() => {
                    rows.copy_from_slice(&p.confusion);
                    p.counts()
                }
                Some(p) => {
                    let mine = (p.gold.as_slice(), p.answered.as_slice());
                    let soft = super::earned::soft_counts(k, mine, &self.items, item, &raters);
                    shrink(&mut rows, &soft, &self.crowd, k);
                    p.counts() && kappa_of(&rows, &self.priors) > MIN_KAPPA
                }
            };
            counted.push(counts && c < k);
            if counts && c < k {
                for (t, l) in log.iter_mut().enumerate() {
                    *l += rows[t * k + c].ln();
                }
            }
        }
        let mut flat: Vec<f64> = log.iter().zip(&self.priors).map(|(l, p)| l - p.ln()).collect();
        softmax(&mut flat);
        softmax(&mut log);
        Weighed { posterior: log, counted, flat }
    }
}

/// A person's rows from their soft counts, shrunk toward the crowd's.
fn shrink(rows: &mut [f64], soft: &[f64], crowd: &[f64], k: usize) {
    for ((row, counts), centre) in rows.chunks_mut(k).zip(soft.chunks(k)).zip(crowd.chunks(k)) {
        let sum: f64 = counts.iter().sum();
        for ((x, c), prior) in row.iter_mut().zip(counts).zip(centre) {
            *x = (c + PRIOR_STRENGTH * prior) / (sum + PRIOR_STRENGTH);
        }
    }
}

/// Cohen's kappa between a person's answers and the truth under `priors`:
/// observed agreement against the agreement their answer shares would get by chance.
fn kappa_of(confusion: &[f64], priors: &[f64]) -> f64 {
    let k = priors.len();
    let observed: f64 = (0..k).map(|t| priors[t] * confusion[t * k + t]).sum();
    let chance: f64 = (0..k).map(|a| priors[a] * (0..k).map(|t| priors[t] * confusion[t * k + a]).sum::<f64>()).sum();
    if chance >= 1.0 {
        return 0.0;
    }
    (observed - chance) / (1.0 - chance)
}

fn normalise_rows(m: &mut [f64], k: usize) {
    for row in m.chunks_mut(k) {
        let sum: f64 = row.iter().sum();
        if sum > 0.0 {
            row.iter_mut().for_each(|x| *x /= sum);
        } else {
            row.iter_mut().for_each(|x| *x = 1.0 / k as f64);
        }
    }
}

/// Log scores to probabilities, in place.
fn softmax(row: &mut [f64]) {
    let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = (*x - top).exp();
        sum += *x;
    }
    row.iter_mut().for_each(|x| *x /= sum);
}

/// The pooled model's M-step: the crowd's confusion from everybody's soft
/// counts and the class priors (both with add-one smoothing).
fn pooled(rows: &[(usize, usize, usize)], gold: &[(usize, usize, usize)], q: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut crowd = vec![1.0; k * k];
    for &(i, _, c) in rows {
        for (t, share) in q[i * k..(i + 1) * k].iter().enumerate() {
            crowd[t * k + c] += share;
        }
    }
    for &(_, t, c) in gold {
        crowd[t * k + c] += 1.0;
    }
    normalise_rows(&mut crowd, k);
    let mut priors = vec![1.0; k];
    for (x, v) in q.iter().enumerate() {
        priors[x % k] += v;
    }
    let total: f64 = priors.iter().sum();
    priors.iter_mut().for_each(|p| *p /= total);
    (crowd, priors)
}

/// The per-person M-step: soft counts per person from the items'
/// posteriors `q` and the gold answers; each person's confusion shrunk
/// toward the (fixed) crowd's, their kappa, and whether they count.
#[allow(clippy::too_many_arguments)]
fn m_step(
    rows: &[(usize, usize, usize)],
    gold: &[(usize, usize, usize)],
    q: &[f64],
    rel: &Reliability,
    soft: &mut [f64],
    confusion: &mut [f64],
    kappa: &mut [f64],
    counts_of: &mut [bool],
) {
    let k = rel.k;
    soft.iter_mut().for_each(|x| *x = 0.0);
    for &(i, w, c) in rows {
        for (t, share) in q[i * k..(i + 1) * k].iter().enumerate() {
            soft[(w * k + t) * k + c] += share;
        }
    }
    for &(w, t, c) in gold {
        soft[(w * k + t) * k + c] += 1.0;
    }
    let per_person = confusion.chunks_mut(k * k).zip(soft.chunks(k * k));
    for ((mine, theirs), (kap, counts_of)) in per_person.zip(kappa.iter_mut().zip(counts_of.iter_mut())) {
        shrink(mine, theirs, &rel.crowd, k);
        *kap = kappa_of(mine, &rel.priors);
        *counts_of = *kap > MIN_KAPPA;
    }
}

/// Whose rows an E-step weighs answers with.
enum Rows<'a> {
    /// The crowd's, for everybody (the pooled model).
    Shared(&'a [f64]),
    /// Each person's `k * k` rows; only the answers of people who count.
    PerPerson { confusion: &'a [f64], counts: &'a [bool] },
}

/// The E-step: each item's posterior from the priors and the answers, weighed by `with`.
fn e_step(rows: &[(usize, usize, usize)], priors: &[f64], items: usize, with: Rows, k: usize) -> Vec<f64> {
    let log_priors: Vec<f64> = priors.iter().map(|p| p.ln()).collect();
    let mut log: Vec<f64> = (0..items).flat_map(|_| log_priors.iter().copied()).collect();
    for &(i, w, c) in rows {
        let person = match with {
            Rows::Shared(crowd) => crowd,
            Rows::PerPerson { counts, .. } if !counts[w] => continue,
            Rows::PerPerson { confusion, .. } => &confusion[w * k * k..(w + 1) * k * k],
        };
        for (t, l) in log[i * k..(i + 1) * k].iter_mut().enumerate() {
            *l += person[t * k + c].ln();
        }
    }
    for row in log.chunks_mut(k) {
        softmax(row);
    }
    log
}

#[cfg(test)]
#[path = "reliability_tests.rs"]
mod tests;
