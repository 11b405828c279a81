//! SugarCrepe's comparison of two negative sources (Table 9): per subset and
//! criterion, how often each source's negative was judged better and how
//! often it was a tie, with a two-sided sign test on the non-tied judgements.
use crate::domain::category::Category;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One judgement: which source's negative was better, None for a tie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub category: Category,
    pub criterion: String,
    pub better: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceCount {
    pub source: String,
    pub better: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreferenceRow {
    pub criterion: String,
    /// The subset; None for all judgements of the criterion.
    pub subset: Option<Category>,
    /// Every source of the criterion, by name, zero counts included.
    pub sources: Vec<SourceCount>,
    pub ties: usize,
    /// Two-sided sign test of the two sources (ties dropped); None unless
    /// exactly two sources and at least one non-tied judgement.
    pub sign_test_p: Option<f64>,
}

/// Per criterion (in the given order): a row per subset with judgements in
/// the paper's table order, then the overall row.
pub fn preference_table(judgements: &[Judgement], criteria: &[&str]) -> Vec<PreferenceRow> {
    let mut rows = Vec::new();
    for &criterion in criteria {
        let of: Vec<&Judgement> = judgements.iter().filter(|j| j.criterion == criterion).collect();
        let sources: BTreeSet<&str> = of.iter().filter_map(|j| j.better.as_deref()).collect();
        let subsets = Category::ALL.iter().map(|&c| Some(c)).chain([None]);
        for subset in subsets {
            let these: Vec<&&Judgement> = of.iter().filter(|j| subset.is_none_or(|c| j.category == c)).collect();
            if these.is_empty() {
                continue;
            }
            let counts: Vec<SourceCount> = sources
                .iter()
                .map(|&s| SourceCount {
                    source: s.to_string(),
                    better: these.iter().filter(|j| j.better.as_deref() == Some(s)).count(),
                })
                .collect();
            let sign_test_p = match counts.as_slice() {
                [a, b] if a.better + b.better > 0 => Some(sign_test(a.better, a.better + b.better)),
                _ => None,
            };
            rows.push(PreferenceRow {
                criterion: criterion.to_string(),
                subset,
                ties: these.iter().filter(|j| j.better.is_none()).count(),
                sources: counts,
                sign_test_p,
            });
        }
    }
    rows
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
mod tests {
    use super::*;
    use crate::domain::category::{NegType, Subtype};

    #[test]
    fn sign_test_matches_hand_worked_binomial_tails() {
        // 2 of 10: P(X <= 2) = (1 + 10 + 45) / 1024 = 56/1024; two-sided 112/1024.
        assert!((sign_test(2, 10) - 112.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test(8, 10) - 112.0 / 1024.0).abs() < 1e-12, "symmetric");
        // 0 of 5: 2 * 1/32.
        assert!((sign_test(0, 5) - 0.0625).abs() < 1e-12);
        // 15 of 20: P(X >= 15) = (15504 + 4845 + 1140 + 190 + 20 + 1) / 2^20 = 21700 / 1048576.
        assert!((sign_test(15, 20) - 2.0 * 21700.0 / 1048576.0).abs() < 1e-12);
        // The middle is capped at 1: 3 of 6 gives 2 * 42/64 > 1.
        assert_eq!(sign_test(3, 6), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // Large n stays finite: 500 of 1000 is 1, 400 of 1000 is far below 1e-9.
        assert_eq!(sign_test(500, 1000), 1.0);
        let p = sign_test(400, 1000);
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }

    fn j(c: Category, criterion: &str, better: Option<&str>) -> Judgement {
        Judgement { category: c, criterion: criterion.into(), better: better.map(str::to_string) }
    }

    #[test]
    fn counts_per_subset_and_criterion_with_ties_apart() {
        let obj = Category { neg_type: NegType::Replace, subtype: Subtype::Obj };
        let att = Category { neg_type: NegType::Swap, subtype: Subtype::Att };
        let mut js = vec![j(obj, "grammar", Some("SugarCrepe")); 5];
        js.push(j(obj, "grammar", None));
        js.push(j(att, "grammar", Some("ARO")));
        js.push(j(att, "commonsense", Some("SugarCrepe")));
        let rows = preference_table(&js, &["commonsense", "grammar"]);
        let shape: Vec<(&str, Option<Category>)> = rows.iter().map(|r| (r.criterion.as_str(), r.subset)).collect();
        assert_eq!(
            shape,
            [
                ("commonsense", Some(att)),
                ("commonsense", None),
                ("grammar", Some(obj)),
                ("grammar", Some(att)),
                ("grammar", None)
            ]
        );
        // commonsense knows one source only: no test.
        assert_eq!(rows[0].sources, [SourceCount { source: "SugarCrepe".into(), better: 1 }]);
        assert_eq!(rows[0].sign_test_p, None);
        // grammar, replace/obj: ARO 0, SugarCrepe 5, one tie dropped: 2 / 32.
        let g = &rows[2];
        assert_eq!((g.sources[0].source.as_str(), g.sources[0].better, g.sources[1].better, g.ties), ("ARO", 0, 5, 1));
        assert!((g.sign_test_p.unwrap() - 0.0625).abs() < 1e-12);
        // grammar overall: ARO 1 of 6 non-tied: 2 * (1 + 6) / 64.
        let all = &rows[4];
        assert_eq!((all.sources[0].better, all.sources[1].better, all.ties), (1, 5, 1));
        assert!((all.sign_test_p.unwrap() - 14.0 / 64.0).abs() < 1e-12);
    }
}
