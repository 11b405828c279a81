//! HNC's statistics: of a writing study, the pairs written, skips by reason
//! and words outside the vocabulary, per caption type; of a validation
//! study, the validated share per caption type and the validators' Cohen's
//! kappa on the four answers.
use crate::domain::agreement::cohen_kappa;
use super::{skip_reason, SKIP_REASONS, WRITTEN};
use crate::kinds::pair_validation::{VALID, VALUES};
use crate::kinds::triplet_check::stats::VerdictKappa;
use crate::domain::vocabulary::Vocabulary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One writing answer: the item's type, the stored value and the two captions.
#[derive(Debug, Clone, PartialEq)]
pub struct WritingAnswer<'a> {
    pub caption_type: &'a str,
    pub value: &'a str,
    pub positive: Option<&'a str>,
    pub negative: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WritingRow {
    /// None: every type.
    pub caption_type: Option<String>,
    pub answers: usize,
    pub written: usize,
    /// Skips per reason, in `SKIP_REASONS` order.
    pub skipped: BTreeMap<String, usize>,
}

/// Words outside the vocabulary in the written pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OovCounts {
    pub vocabulary_words: usize,
    pub strict: bool,
    /// Pairs with at least one unknown word in either caption.
    pub pairs_with_unknown: usize,
    pub positive_unknown_words: usize,
    pub negative_unknown_words: usize,
    /// The unknown words and how often each was used, most used first.
    pub top_unknown: Vec<(String, usize)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WritingStats {
    pub rows: Vec<WritingRow>,
    pub vocabulary: Option<OovCounts>,
}

pub fn writing_stats(answers: &[WritingAnswer<'_>], vocabulary: Option<(&Vocabulary, bool)>) -> WritingStats {
    let mut types: Vec<&str> = answers.iter().map(|a| a.caption_type).collect();
    types.sort_unstable();
    types.dedup();
    let mut rows: Vec<WritingRow> =
        types.iter().map(|&t| writing_row(Some(t), answers.iter().filter(|a| a.caption_type == t))).collect();
    rows.push(writing_row(None, answers.iter()));
    let vocabulary = vocabulary.map(|(v, strict)| oov(answers, v, strict));
    WritingStats { rows, vocabulary }
}

fn writing_row<'a>(caption_type: Option<&str>, answers: impl Iterator<Item = &'a WritingAnswer<'a>>) -> WritingRow {
    let mut skipped: BTreeMap<String, usize> = SKIP_REASONS.iter().map(|r| (r.to_string(), 0)).collect();
    let (mut n, mut written) = (0, 0);
    for a in answers {
        n += 1;
        if a.value == WRITTEN {
            written += 1;
        } else if let Some(r) = skip_reason(a.value) {
            *skipped.entry(r.to_string()).or_default() += 1;
        }
    }
    WritingRow { caption_type: caption_type.map(str::to_string), answers: n, written, skipped }
}

fn oov(answers: &[WritingAnswer<'_>], v: &Vocabulary, strict: bool) -> OovCounts {
    let mut c = OovCounts {
        vocabulary_words: v.len(),
        strict,
        pairs_with_unknown: 0,
        positive_unknown_words: 0,
        negative_unknown_words: 0,
        top_unknown: Vec::new(),
    };
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for a in answers.iter().filter(|a| a.value == WRITTEN) {
        let p = v.unknown(a.positive.unwrap_or_default());
        let n = v.unknown(a.negative.unwrap_or_default());
        c.positive_unknown_words += p.len();
        c.negative_unknown_words += n.len();
        c.pairs_with_unknown += usize::from(!p.is_empty() || !n.is_empty());
        for w in p.into_iter().chain(n) {
            *uses.entry(w).or_default() += 1;
        }
    }
    let mut top: Vec<(String, usize)> = uses.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(20);
    c.top_unknown = top;
    c
}

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
    pub kappa: Vec<VerdictKappa>,
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

fn kappas(pairs: &[ValidatedPair<'_>]) -> Vec<VerdictKappa> {
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
            Some(VerdictKappa {
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

    fn w<'a>(t: &'a str, value: &'a str, p: &'a str, n: &'a str) -> WritingAnswer<'a> {
        let text = |s: &'a str| (!s.is_empty()).then_some(s);
        WritingAnswer { caption_type: t, value, positive: text(p), negative: text(n) }
    }

    #[test]
    fn writing_counts_pairs_and_skips_per_type_and_overall() {
        let answers = [
            w("attribute", "written", "A red dog.", "A blue dog."),
            w("attribute", "skip:unclear_image", "", ""),
            w("counting", "written", "Two cats.", "Three cats."),
            w("counting", "skip:other", "", ""),
            w("counting", "skip:other", "", ""),
        ];
        let s = writing_stats(&answers, None);
        let row = |t: Option<&str>| s.rows.iter().find(|r| r.caption_type.as_deref() == t).unwrap();
        assert_eq!((row(Some("attribute")).answers, row(Some("attribute")).written), (2, 1));
        assert_eq!(row(Some("attribute")).skipped["unclear_image"], 1);
        assert_eq!(row(Some("counting")).skipped["other"], 2);
        let all = row(None);
        assert_eq!((all.answers, all.written), (5, 2));
        assert_eq!(all.skipped.values().sum::<usize>(), 3);
        assert_eq!(all.skipped["type_does_not_apply"], 0, "every reason is listed");
        assert_eq!(s.rows.len(), 3);
        assert!(s.vocabulary.is_none());
    }

    #[test]
    fn unknown_words_are_counted_per_caption_and_pair() {
        let v = Vocabulary::new(["a", "two", "red", "blue", "dog", "cat"]);
        let answers = [
            w("attribute", "written", "A red dog.", "A blue dog."),
            w("attribute", "written", "A red fox.", "A blue fox on a sofa."),
            w("attribute", "written", "Two cats.", "A green cat."),
            w("attribute", "skip:other", "", ""),
        ];
        let o = writing_stats(&answers, Some((&v, false))).vocabulary.unwrap();
        assert_eq!((o.vocabulary_words, o.strict), (6, false));
        assert_eq!((o.pairs_with_unknown, o.positive_unknown_words, o.negative_unknown_words), (2, 1, 4));
        assert_eq!(o.top_unknown[0], ("fox".to_string(), 2));
        assert_eq!(o.top_unknown.len(), 4, "fox, green, on, sofa");
    }

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
