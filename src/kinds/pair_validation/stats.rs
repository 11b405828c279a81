//! HNC's validation statistics: the validated share per caption type and
//! the validators' Cohen's kappa on the four answers.
use super::{VALID, VALUES};
use crate::domain::agreement::cohen_kappa;
use crate::domain::agreement::PairKappa;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One validated pair: its type, its settled value (None while open) and
/// each validator's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedPair<'a> {
    pub caption_type: &'a str,
    pub final_value: Option<&'a str>,
    pub answers: Vec<(&'a str, &'a str)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    pub caption_type: Option<String>,
    pub pairs: usize,
    pub settled: usize,
    /// Settled pairs per value, in `pair_validation::VALUES` order.
    pub values: BTreeMap<String, usize>,
    /// Valid among the settled.
    pub valid_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairValidationStats {
    pub rows: Vec<PairRow>,
    /// Per pair of validators who answered the same pairs, on the four values.
    pub kappa: Vec<PairKappa>,
    pub mean_kappa: Option<f64>,
}

pub fn pair_validation_stats(pairs: &[ValidatedPair<'_>]) -> PairValidationStats {
    let mut types: Vec<&str> = pairs.iter().map(|p| p.caption_type).collect();
    types.sort_unstable();
    types.dedup();
    let mut rows: Vec<PairRow> =
        types.iter().map(|&t| pair_row(Some(t), pairs.iter().filter(|p| p.caption_type == t))).collect();
    rows.push(pair_row(None, pairs.iter()));
    let kappa = kappas(pairs);
    let defined: Vec<f64> = kappa.iter().filter_map(|k| k.kappa).collect();
    let mean_kappa = (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64);
    PairValidationStats { rows, kappa, mean_kappa }
}

fn pair_row<'a>(caption_type: Option<&str>, pairs: impl Iterator<Item = &'a ValidatedPair<'a>>) -> PairRow {
    let mut values: BTreeMap<String, usize> = VALUES.iter().map(|v| (v.to_string(), 0)).collect();
    let (mut n, mut settled) = (0, 0);
    for p in pairs {
        n += 1;
        if let Some(count) = p.final_value.and_then(|v| values.get_mut(v)) {
            *count += 1;
            settled += 1;
        }
    }
    let valid_share = (settled > 0).then(|| values[VALID] as f64 / settled as f64);
    PairRow { caption_type: caption_type.map(str::to_string), pairs: n, settled, values, valid_share }
}

fn kappas(pairs: &[ValidatedPair<'_>]) -> Vec<PairKappa> {
    let index = |v: &str| VALUES.iter().position(|&x| x == v);
    let mut by_pair: BTreeMap<(&str, &str), Vec<(usize, usize)>> = BTreeMap::new();
    for p in pairs {
        let given: Vec<(&str, usize)> = p.answers.iter().filter_map(|&(who, v)| Some((who, index(v)?))).collect();
        for (i, &(a, va)) in given.iter().enumerate() {
            for &(b, vb) in &given[i + 1..] {
                let (key, labels) = if a < b { ((a, b), (va, vb)) } else { ((b, a), (vb, va)) };
                by_pair.entry(key).or_default().push(labels);
            }
        }
    }
    by_pair
        .into_iter()
        .filter_map(|((a, b), labels)| {
            let k = cohen_kappa(&labels, VALUES.len()).ok()?;
            Some(PairKappa {
                annotators: (a.to_string(), b.to_string()),
                n: k.n,
                observed: k.observed,
                kappa: k.kappa,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair<'a>(t: &'a str, fin: Option<&'a str>, a: &'a str, b: &'a str) -> ValidatedPair<'a> {
        ValidatedPair { caption_type: t, final_value: fin, answers: vec![("ana", a), ("bo", b)] }
    }

    #[test]
    fn the_validated_share_is_among_settled_pairs_per_type() {
        let pairs = [
            pair("attribute", Some("valid"), "valid", "valid"),
            pair("attribute", Some("negative_wrong"), "negative_wrong", "valid"),
            pair("attribute", None, "valid", "both_wrong"),
            pair("counting", Some("valid"), "valid", "valid"),
        ];
        let s = pair_validation_stats(&pairs);
        let attr = &s.rows[0];
        assert_eq!((attr.caption_type.as_deref(), attr.pairs, attr.settled), (Some("attribute"), 3, 2));
        assert_eq!((attr.values["valid"], attr.values["negative_wrong"]), (1, 1));
        assert_eq!(attr.valid_share, Some(0.5));
        let all = s.rows.last().unwrap();
        assert_eq!((all.caption_type.as_deref(), all.pairs, all.settled), (None, 4, 3));
        assert!((all.valid_share.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn kappa_is_cohens_on_the_four_values() {
        // ana: v v n b v; bo: v v v b p. Agree on 3 of 5: p_o = 0.6.
        // Marginals ana (v 3, n 1, b 1), bo (v 3, b 1, p 1): p_e = (9 + 1) / 25 = 0.4.
        let pairs = [
            pair("t", None, "valid", "valid"),
            pair("t", None, "valid", "valid"),
            pair("t", None, "negative_wrong", "valid"),
            pair("t", None, "both_wrong", "both_wrong"),
            pair("t", None, "valid", "positive_wrong"),
        ];
        let s = pair_validation_stats(&pairs);
        assert_eq!(s.kappa.len(), 1);
        let k = &s.kappa[0];
        assert_eq!((k.annotators.0.as_str(), k.annotators.1.as_str(), k.n), ("ana", "bo", 5));
        assert!((k.observed - 0.6).abs() < 1e-12);
        assert!((k.kappa.unwrap() - (0.6 - 0.4) / (1.0 - 0.4)).abs() < 1e-12, "{k:?}");
        assert_eq!(s.mean_kappa, k.kappa);
    }
}
