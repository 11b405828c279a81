//! HNC's writing statistics: the pairs written, skips by reason and words
//! outside the vocabulary, per caption type (a validation study's are in
//! `pair_validation/stats.rs`).
use super::{skip_reason, SKIP_REASONS, WRITTEN};
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
}
