//! The statistics of an expert triplet check (SugarCrepe++): per subset and
//! overall, how many triplets were settled valid (as they were, or once P2 was
//! corrected) or not valid; how often each error tag was given; and Cohen's
//! kappa between each pair of experts on the verdict alone (valid / not valid).
use crate::domain::agreement::{cohen_kappa, PairKappa};
use crate::domain::category::Category;
use super::{split, TAGS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One item: its subset, its final value when settled, and each expert's
/// answer (name, stored value).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedItem<'a> {
    pub category: Category,
    pub final_value: Option<&'a str>,
    pub answers: Vec<(&'a str, &'a str)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationRow {
    /// The subset; None for every item together.
    pub subset: Option<Category>,
    pub items: usize,
    /// Items with a final value (agreed or adjudicated).
    pub settled: usize,
    /// Settled valid as they were.
    pub valid: usize,
    /// Settled valid once P2 was corrected.
    pub corrected: usize,
    pub not_valid: usize,
    /// (valid + corrected) / settled; None while nothing is settled.
    pub valid_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagCount {
    pub tag: String,
    /// Settled items whose final value carries the tag.
    pub settled: usize,
    /// Answers that gave it.
    pub answers: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationStats {
    pub rows: Vec<ValidationRow>,
    pub tags: Vec<TagCount>,
    pub kappa: Vec<PairKappa>,
    /// The mean of the defined pairwise kappas.
    pub mean_kappa: Option<f64>,
}

pub fn validation_stats(items: &[CheckedItem<'_>]) -> ValidationStats {
    let mut rows: Vec<ValidationRow> =
        Category::ALL.iter().filter_map(|&c| row(Some(c), items.iter().filter(|i| i.category == c))).collect();
    rows.extend(row(None, items.iter()));
    let tag_of = |v: &str| split(v).and_then(|(_, t)| t);
    let tags = TAGS
        .iter()
        .map(|&tag| TagCount {
            tag: tag.to_string(),
            settled: items.iter().filter(|i| i.final_value.and_then(tag_of) == Some(tag)).count(),
            answers: items.iter().flat_map(|i| &i.answers).filter(|(_, v)| tag_of(v) == Some(tag)).count(),
        })
        .collect();
    let kappa = verdict_kappa(items);
    let defined: Vec<f64> = kappa.iter().filter_map(|k| k.kappa).collect();
    let mean_kappa = (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64);
    ValidationStats { rows, tags, kappa, mean_kappa }
}

fn row<'a>(subset: Option<Category>, items: impl Iterator<Item = &'a CheckedItem<'a>>) -> Option<ValidationRow> {
    let mut r = ValidationRow { subset, items: 0, settled: 0, valid: 0, corrected: 0, not_valid: 0, valid_share: None };
    for item in items {
        r.items += 1;
        match item.final_value.and_then(split) {
            Some((true, None)) => r.valid += 1,
            Some((true, Some(_))) => r.corrected += 1,
            Some((false, _)) => r.not_valid += 1,
            None => continue,
        }
        r.settled += 1;
    }
    r.valid_share = (r.settled > 0).then(|| (r.valid + r.corrected) as f64 / r.settled as f64);
    (r.items > 0).then_some(r)
}

/// Per pair of experts, over the items both answered: valid (0) or not (1).
fn verdict_kappa(items: &[CheckedItem<'_>]) -> Vec<PairKappa> {
    let mut pairs: BTreeMap<(&str, &str), Vec<(usize, usize)>> = BTreeMap::new();
    for item in items {
        let verdicts: Vec<(&str, usize)> =
            item.answers.iter().filter_map(|&(who, v)| Some((who, usize::from(!split(v)?.0)))).collect();
        for (i, &(a, va)) in verdicts.iter().enumerate() {
            for &(b, vb) in &verdicts[i + 1..] {
                let (key, pair) = if a < b { ((a, b), (va, vb)) } else { ((b, a), (vb, va)) };
                pairs.entry(key).or_default().push(pair);
            }
        }
    }
    pairs
        .into_iter()
        .filter_map(|(annotators, labels)| {
            let k = cohen_kappa(&labels, 2).ok()?;
            let annotators = (annotators.0.to_string(), annotators.1.to_string());
            Some(PairKappa { annotators, n: k.n, observed: k.observed, kappa: k.kappa })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::{NegType, Subtype};

    const OBJ: Category = Category { neg_type: NegType::Replace, subtype: Subtype::Obj };
    const SWAP: Category = Category { neg_type: NegType::Swap, subtype: Subtype::Att };

    fn item<'a>(category: Category, final_value: Option<&'a str>, a: &'a str, b: &'a str) -> CheckedItem<'a> {
        CheckedItem { category, final_value, answers: vec![("ana", a), ("bo", b)] }
    }

    #[test]
    fn counts_settled_verdicts_per_subset_and_overall() {
        let items = [
            item(OBJ, Some("valid"), "valid", "valid"),
            item(OBJ, Some("valid:hallucination"), "valid:hallucination", "valid:hallucination"),
            item(OBJ, None, "valid", "not_valid:hallucination"),
            item(SWAP, Some("not_valid:change_of_meaning"), "not_valid:change_of_meaning", "valid"),
        ];
        let s = validation_stats(&items);
        let obj = &s.rows[0];
        assert_eq!(
            (obj.subset, obj.items, obj.settled, obj.valid, obj.corrected, obj.not_valid),
            (Some(OBJ), 3, 2, 1, 1, 0)
        );
        assert_eq!(obj.valid_share, Some(1.0));
        let all = s.rows.last().unwrap();
        assert_eq!((all.subset, all.items, all.settled, all.not_valid), (None, 4, 3, 1));
        assert!((all.valid_share.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.rows.len(), 3, "subsets without items have no row");
        let count = |t: &str| s.tags.iter().find(|c| c.tag == t).map(|c| (c.settled, c.answers)).unwrap();
        assert_eq!(count("hallucination"), (1, 3));
        assert_eq!(count("change_of_meaning"), (1, 1));
        assert_eq!(count("spatial_mismatch"), (0, 0));
        assert_eq!(s.tags.len(), 5);
    }

    #[test]
    fn kappa_is_on_the_verdict_alone() {
        // Tags differ on agreeing verdicts; only valid / not valid counts.
        let items = [
            item(OBJ, None, "valid", "valid:hallucination"),
            item(OBJ, None, "valid:spatial_mismatch", "valid"),
            item(OBJ, None, "not_valid:hallucination", "not_valid:negligible_change"),
            item(OBJ, None, "valid", "not_valid:hallucination"),
            item(OBJ, None, "not_valid:hallucination", "valid"),
        ];
        let s = validation_stats(&items[..4]);
        assert_eq!(s.kappa.len(), 1);
        let k = &s.kappa[0];
        assert_eq!((k.annotators.0.as_str(), k.annotators.1.as_str(), k.n), ("ana", "bo", 4));
        assert!((k.observed - 0.75).abs() < 1e-12);
        // ana: V V N V; bo: V V N N -> p_o 3/4; p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2; kappa = 1/2.
        assert!((k.kappa.unwrap() - 0.5).abs() < 1e-12, "{k:?}");
        let s = validation_stats(&items);
        // ana: V V N V N; bo: V V N N V -> p_o 3/5; p_e = (3/5)(3/5) + (2/5)(2/5) = 13/25; kappa = (15−13)/(25−13) = 1/6.
        assert!((s.kappa[0].kappa.unwrap() - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.mean_kappa, s.kappa[0].kappa);
    }

    #[test]
    fn pairs_are_ordered_and_undefined_kappa_is_not_averaged() {
        let items = [CheckedItem { category: OBJ, final_value: None, answers: vec![("cy", "valid"), ("al", "valid")] }];
        let s = validation_stats(&items);
        assert_eq!(s.kappa[0].annotators, ("al".to_string(), "cy".to_string()));
        assert_eq!(s.kappa[0].kappa, None, "one category only");
        assert_eq!(s.mean_kappa, None);
        assert!(validation_stats(&[]).rows.is_empty());
    }
}
