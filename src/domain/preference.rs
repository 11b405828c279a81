//! SugarCrepe's comparison of two negative sources (appendix E.2, its
//! table): per criterion, and per subset, per type (REPLACE, SWAP,
//! NEGATE/ADD) and overall, how often each source's negative was judged
//! better and how often it was a tie, with a two-sided sign test.
//!
//! Several raters on one item are not independent trials, so the test
//! counts items, not answers: each item gets one vote, its raters'
//! majority (the outcome given most often, if only one is), and items whose
//! majority is Tie or shared between outcomes are dropped as tied.
use crate::domain::category::{Category, NegType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What the rows' `sign_test_p` tests, as the report names it.
pub const TEST: &str = "item_majority_sign_test";

/// A stored preference answer, `<criterion>_<a|b|tie>`, as its criterion
/// and choice; None when it is not one of `criteria`'s.
pub fn split_value<'a>(value: &'a str, criteria: &[&str]) -> Option<(&'a str, &'a str)> {
    let (criterion, choice) = value.rsplit_once('_')?;
    (criteria.contains(&criterion) && ["a", "b", "tie"].contains(&choice)).then_some((criterion, choice))
}

/// One judgement: which source's negative was better on an item, None for a tie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The item (instance) judged; its raters' answers make one vote.
    pub item: i64,
    pub category: Category,
    pub criterion: String,
    pub better: Option<String>,
    /// The item's sources: they are the row's even when nobody chose one.
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceCount {
    pub source: String,
    /// Answers that judged this source's negative better.
    pub better: usize,
    /// Items whose raters' majority is this source.
    pub items: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreferenceRow {
    pub criterion: String,
    /// The type of a type row or a subset row; None for the overall row.
    #[serde(rename = "type")]
    pub neg_type: Option<NegType>,
    /// The subset of a subset row; None for type and overall rows.
    pub subset: Option<Category>,
    /// As a table prints it: `replace/obj`, `REPLACE`, `SWAP`, `NEGATE/ADD`, `all`.
    pub label: String,
    /// Every source of the criterion, by name, zero counts included.
    pub sources: Vec<SourceCount>,
    pub answers: usize,
    /// Answers that were Tie.
    pub ties: usize,
    /// Items with at least one answer.
    pub items: usize,
    /// Items dropped from the test: their majority is Tie, or no outcome leads.
    pub items_tied: usize,
    /// Items the test counts (`items - items_tied`).
    pub n: usize,
    /// Exact two-sided sign test over the `n` items (the first source's
    /// items of `n`, p = 1/2); None unless exactly two sources and `n` > 0.
    pub sign_test_p: Option<f64>,
}

/// The label SugarCrepe's table gives a type: its ADD row is compared with
/// other benchmarks' NEGATE.
pub fn type_label(t: NegType) -> &'static str {
    match t {
        NegType::Replace => "REPLACE",
        NegType::Swap => "SWAP",
        NegType::Add => "NEGATE/ADD",
    }
}

/// Per criterion (in the given order): a row per subset with judgements in
/// the paper's table order, a row per type, then the overall row.
pub fn preference_table(judgements: &[Judgement], criteria: &[&str]) -> Vec<PreferenceRow> {
    let mut rows = Vec::new();
    for &criterion in criteria {
        let of: Vec<&Judgement> = judgements.iter().filter(|j| j.criterion == criterion).collect();
        let chosen = of.iter().filter_map(|j| j.better.as_deref());
        let sources: BTreeSet<&str> =
            of.iter().flat_map(|j| j.sources.iter().map(String::as_str)).chain(chosen).collect();
        let subsets = Category::ALL.iter().map(|&c| (Some(c.neg_type), Some(c), c.to_string()));
        let types = NegType::ALL.iter().map(|&t| (Some(t), None, type_label(t).to_string()));
        for (neg_type, subset, label) in subsets.chain(types).chain([(None, None, "all".to_string())]) {
            let these: Vec<&Judgement> = of
                .iter()
                .copied()
                .filter(|j| subset.is_none_or(|c| j.category == c) && neg_type.is_none_or(|t| j.category.neg_type == t))
                .collect();
            if these.is_empty() {
                continue;
            }
            let majorities = item_majorities(&these);
            let counts: Vec<SourceCount> = sources
                .iter()
                .map(|&s| SourceCount {
                    source: s.to_string(),
                    better: these.iter().filter(|j| j.better.as_deref() == Some(s)).count(),
                    items: majorities.values().filter(|m| **m == Some(s)).count(),
                })
                .collect();
            let n: usize = majorities.values().filter(|m| m.is_some()).count();
            let sign_test_p = match counts.as_slice() {
                [a, _] if n > 0 => Some(sign_test(a.items, n)),
                _ => None,
            };
            rows.push(PreferenceRow {
                criterion: criterion.to_string(),
                neg_type,
                subset,
                label,
                answers: these.len(),
                ties: these.iter().filter(|j| j.better.is_none()).count(),
                items: majorities.len(),
                items_tied: majorities.len() - n,
                n,
                sources: counts,
                sign_test_p,
            });
        }
    }
    rows
}

/// Each item's vote: the source its raters chose most often, or None when
/// Tie was chosen most often or no outcome (a source or Tie) leads alone.
fn item_majorities<'a>(judgements: &[&'a Judgement]) -> BTreeMap<i64, Option<&'a str>> {
    let mut counts: BTreeMap<i64, BTreeMap<Option<&str>, usize>> = BTreeMap::new();
    for j in judgements {
        *counts.entry(j.item).or_default().entry(j.better.as_deref()).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(item, outcomes)| {
            let top = outcomes.values().copied().max().unwrap_or(0);
            let mut leaders = outcomes.iter().filter(|(_, &c)| c == top).map(|(o, _)| *o);
            let vote = match (leaders.next(), leaders.next()) {
                (Some(Some(source)), None) => Some(source),
                _ => None,
            };
            (item, vote)
        })
        .collect()
}

/// The exact two-sided sign test: `k` successes of `n` under p = 1/2, as
/// scipy's `binomtest(k, n).pvalue` (the distribution is symmetric, so
/// twice the smaller tail, at most 1). Summed in log space: no underflow
/// for large `n`.
pub fn sign_test(k: usize, n: usize) -> f64 {
    assert!(k <= n, "{k} successes of {n}");
    let tail = k.min(n - k);
    let ln_half_n = n as f64 * 0.5f64.ln();
    let (mut ln_choose, mut sum) = (0.0f64, 0.0f64);
    for i in 0..=tail {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (ln_choose + ln_half_n).exp();
    }
    (2.0 * sum).min(1.0)
}

#[cfg(test)]
#[path = "preference_tests.rs"]
mod tests;
