//! The blind text-only audit (SugarCrepe; the LLaVA-score paper): a scorer
//! that sees only the two captions of an instance "picks" the one it scores
//! higher. If it picks the positive far more often than half the time, the
//! negatives are tellable from their wording alone and a benchmark built on
//! them measures language priors. Here: the pick rate per subset with a 95%
//! Wilson score interval, and two baselines that need no model.
use crate::domain::category::{Category, NegType};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The two-sided 95% normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// One instance as the scorer saw it: its subset and the two captions' scores
/// (higher: more plausible to the scorer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub category: Category,
    pub positive: f64,
    pub negative: f64,
}

/// The instances of a stage (its subsets and the two captions of each), in
/// id order. The captions share one buffer: the export collects them as its
/// rows go by, a few bytes beyond the text per instance.
#[derive(Debug, Default)]
pub struct Pairs {
    text: String,
    /// Subset, end of the caption and end of the negative caption in `text`.
    ends: Vec<(Category, usize, usize)>,
}

impl Pairs {
    /// Adds an instance, unless it has no negative caption (a prompt to
    /// rank): then there is nothing to tell apart.
    pub fn push(&mut self, category: Category, caption: &str, negative: &str) {
        if negative.trim().is_empty() {
            return;
        }
        self.text.push_str(caption);
        let mid = self.text.len();
        self.text.push_str(negative);
        self.ends.push((category, mid, self.text.len()));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Subset, caption and negative caption of each instance.
    pub fn iter(&self) -> impl Iterator<Item = (Category, &str, &str)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|e| e.2));
        self.ends.iter().zip(starts).map(|(&(c, mid, end), start)| (c, &self.text[start..mid], &self.text[mid..end]))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    /// "all", a type ("swap") or a type/subtype ("swap/att").
    pub subset: String,
    pub instances: usize,
    /// Instances whose positive scored strictly higher.
    pub positive: usize,
    /// Equal scores: counted as half a pick, as a coin flip would score them.
    pub ties: usize,
    /// (positive + ties / 2) / instances; near 0.5 means no blind bias.
    pub rate: f64,
    /// The 95% Wilson score interval of `rate`.
    pub low: f64,
    pub high: f64,
}

/// One scorer's audit of one stage of a dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditResult {
    pub dataset: String,
    /// candidates, step3 or final.
    pub stage: String,
    /// A baseline's name, or the name given to an external scorer.
    pub scorer: String,
    /// What ran: the baseline's rule, or the external command and its model.
    pub source: String,
    pub rows: Vec<AuditRow>,
    /// When an external run was stored (seconds since the epoch); None for
    /// baselines, computed on the spot.
    pub created_at: Option<i64>,
}

impl AuditResult {
    /// The overall row; None when the stage has no instances.
    pub fn overall(&self) -> Option<&AuditRow> {
        self.rows.first().filter(|r| r.subset == "all")
    }
}

/// The audits as a plain-text table (CLI, export card).
pub fn render(audits: &[AuditResult]) -> String {
    let mut out = format!(
        "{:<16} {:<14} {:>9} {:>9} {:>6} {:>7} {:>17}\n",
        "scorer", "subset", "instances", "positive", "ties", "rate", "95% CI (Wilson)"
    );
    for a in audits {
        for r in &a.rows {
            out.push_str(&format!(
                "{:<16} {:<14} {:>9} {:>9} {:>6} {:>6.1}% {:>7.1}% – {:>5.1}%\n",
                a.scorer,
                r.subset,
                r.instances,
                r.positive,
                r.ties,
                100.0 * r.rate,
                100.0 * r.low,
                100.0 * r.high
            ));
        }
    }
    out
}

/// The 95% Wilson score interval of `successes` out of `n` (successes may be
/// fractional: ties count half). Wilson rather than Clopper–Pearson: it
/// needs no beta quantiles and stays inside [0, 1] with good coverage.
pub fn wilson(successes: f64, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = successes / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    // At 0 or n the bound is exactly 0 or 1 (centre and half-width are equal
    // there), which the float difference misses by ~1e-17.
    let low = if successes <= 0.0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if successes >= n { 1.0 } else { (centre + half).min(1.0) };
    Some((low, high))
}

/// Overall, then per type, then per type/subtype, in the paper's table
/// order; subsets without instances are left out.
pub fn audit_table(scored: &[Scored]) -> Vec<AuditRow> {
    let mut rows: Vec<AuditRow> = row("all".into(), scored.iter()).into_iter().collect();
    for t in NegType::ALL {
        rows.extend(row(t.as_str().into(), scored.iter().filter(|s| s.category.neg_type == t)));
    }
    for c in Category::ALL {
        rows.extend(row(c.to_string(), scored.iter().filter(|s| s.category == c)));
    }
    rows
}

fn row<'a>(subset: String, items: impl Iterator<Item = &'a Scored>) -> Option<AuditRow> {
    let (mut instances, mut positive, mut ties) = (0, 0, 0);
    for s in items {
        instances += 1;
        if s.positive > s.negative {
            positive += 1;
        } else if s.positive == s.negative {
            ties += 1;
        }
    }
    let picks = positive as f64 + ties as f64 / 2.0;
    let (low, high) = wilson(picks, instances)?;
    Some(AuditRow { subset, instances, positive, ties, rate: picks / instances as f64, low, high })
}

/// The scorers that run without a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The longer caption (in characters) is the more plausible.
    Length,
    /// Mean log-probability of the caption's words under a unigram model of
    /// the dataset's own positive captions, leaving the caption itself out.
    WordFrequency,
}

impl Baseline {
    pub const ALL: [Baseline; 2] = [Baseline::Length, Baseline::WordFrequency];

    pub fn name(self) -> &'static str {
        match self {
            Baseline::Length => "length",
            Baseline::WordFrequency => "word-frequency",
        }
    }

    /// The rule, as the card and the page state it.
    pub fn source(self) -> &'static str {
        match self {
            Baseline::Length => "built-in: picks the longer caption (characters)",
            Baseline::WordFrequency => {
                "built-in: mean word log-frequency among the dataset's other positive captions (add-one smoothed)"
            }
        }
    }

    pub fn parse(s: &str) -> Option<Baseline> {
        Baseline::ALL.into_iter().find(|b| b.name() == s)
    }

    /// (positive, negative) scores of each (caption, negative caption) pair.
    pub fn score(self, pairs: &[(&str, &str)]) -> Vec<(f64, f64)> {
        match self {
            Baseline::Length => {
                let len = |s: &str| s.chars().count() as f64;
                pairs.iter().map(|(p, n)| (len(p), len(n))).collect()
            }
            Baseline::WordFrequency => word_frequency(pairs),
        }
    }
}

/// Lower-cased alphanumeric words; a word already lower-case ASCII (most)
/// is borrowed rather than copied.
fn words(s: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| {
        if w.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
            Cow::Borrowed(w)
        } else {
            Cow::Owned(w.to_lowercase())
        }
    })
}

/// Counts come from the distinct positive captions: the real captions are
/// the language the negatives try to pass as. A caption's own words are
/// taken out before it is scored, or every positive would find itself
/// familiar; add-one smoothing gives unseen words a small probability.
fn word_frequency(pairs: &[(&str, &str)]) -> Vec<(f64, f64)> {
    let mut distinct: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut counts: FxHashMap<Cow<'_, str>, f64> = FxHashMap::default();
    for w in distinct.iter().flat_map(|c| words(c)) {
        *counts.entry(w).or_default() += 1.0;
    }
    let total: f64 = counts.values().sum();
    let mut vocabulary: FxHashSet<Cow<'_, str>> = counts.keys().cloned().collect();
    vocabulary.extend(pairs.iter().flat_map(|p| words(p.1)));
    let v = vocabulary.len() as f64 + 1.0;
    // A caption's own words: a few, so a list beats a map.
    let mut own: Vec<(Cow<'_, str>, f64)> = Vec::new();
    let mut terms: Vec<f64> = Vec::new();
    pairs
        .iter()
        .map(|(positive, negative)| {
            own.clear();
            for w in words(positive) {
                match own.iter_mut().find(|(o, _)| *o == w) {
                    Some((_, n)) => *n += 1.0,
                    None => own.push((w, 1.0)),
                }
            }
            let held_out = total - own.iter().map(|(_, n)| n).sum::<f64>();
            let own = &own;
            let mut score = |s: &str| {
                terms.clear();
                terms.extend(words(s).map(|w| {
                    let mine = own.iter().find(|(o, _)| *o == w).map_or(0.0, |(_, c)| *c);
                    let c = counts.get(&w).copied().unwrap_or(0.0) - mine;
                    ((c + 1.0) / (held_out + v)).ln()
                }));
                mean_in_fixed_order(&mut terms)
            };
            (score(positive), score(negative))
        })
        .collect()
}

/// The mean of a caption's per-word terms, summed smallest first: a float
/// sum depends on its order (by ~1e-16), and a swap (the same words in
/// another order) must tie exactly. None of the words: minus infinity.
fn mean_in_fixed_order(terms: &mut [f64]) -> f64 {
    if terms.is_empty() {
        return f64::NEG_INFINITY;
    }
    terms.sort_unstable_by(f64::total_cmp);
    terms.iter().sum::<f64>() / terms.len() as f64
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
