//! Each annotator's answers against the settled outcome of the same items:
//! who departs from the final labels, and how (rows: outcome, columns: answer).
use super::study::{group, Grouped};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorConfusion {
    pub annotator: u64,
    pub answers: usize,
    /// Answers on items with a settled outcome (the ones counted below).
    pub settled: usize,
    /// Of those, answers equal to the outcome.
    pub agreed: usize,
    /// `agreed / settled`; `None` while nothing this annotator answered is settled.
    pub accuracy: Option<f64>,
    /// `confusion[outcome][answer]`.
    pub confusion: Vec<Vec<u64>>,
}

/// Per annotator (ascending id), from `(item, annotator, category)` ratings
/// and `(item, category)` outcomes; repeated ratings: the last counts.
/// Categories `>= k` widen `k`, as in `study_agreement`.
pub fn annotator_confusion(
    ratings: &[(u64, u64, usize)],
    outcomes: &[(u64, usize)],
    k: usize,
) -> Vec<AnnotatorConfusion> {
    let k = ratings.iter().map(|r| r.2 + 1).chain(outcomes.iter().map(|o| o.1 + 1)).max().unwrap_or(0).max(k);
    let Grouped { rows, annotator_ids, .. } = group(ratings);
    let mut settled: Vec<(u64, usize)> = outcomes.to_vec();
    settled.sort_unstable();
    let mut out: Vec<AnnotatorConfusion> = annotator_ids
        .iter()
        .map(|&annotator| AnnotatorConfusion {
            annotator,
            answers: 0,
            settled: 0,
            agreed: 0,
            accuracy: None,
            confusion: vec![vec![0; k]; k],
        })
        .collect();
    for &(item, annotator, answer) in &rows {
        let a = &mut out[annotator_ids.binary_search(&annotator).expect("collected by group")];
        a.answers += 1;
        if let Ok(x) = settled.binary_search_by_key(&item, |o| o.0) {
            let outcome = settled[x].1;
            a.settled += 1;
            a.agreed += usize::from(outcome == answer);
            a.confusion[outcome][answer] += 1;
        }
    }
    for a in &mut out {
        a.accuracy = (a.settled > 0).then(|| a.agreed as f64 / a.settled as f64);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_answer_against_the_outcome() {
        // Item 3 is unsettled; annotator 20 answered item 1 twice (the later 1 counts).
        let ratings = [(1, 10, 0), (1, 20, 0), (2, 10, 1), (2, 20, 0), (3, 10, 1), (1, 20, 1)];
        let r = annotator_confusion(&ratings, &[(2, 1), (1, 0)], 2);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].annotator, r[0].answers, r[0].settled, r[0].agreed), (10, 3, 2, 2));
        assert_eq!(r[0].accuracy, Some(1.0));
        assert_eq!(r[0].confusion, vec![vec![1, 0], vec![0, 1]]);
        assert_eq!((r[1].annotator, r[1].answers, r[1].settled, r[1].agreed), (20, 2, 2, 0));
        assert_eq!(r[1].accuracy, Some(0.0));
        assert_eq!(r[1].confusion, vec![vec![0, 1], vec![1, 0]]);
    }

    #[test]
    fn nothing_settled_and_wide_labels() {
        let r = annotator_confusion(&[(1, 10, 0)], &[], 2);
        assert_eq!((r[0].settled, r[0].accuracy), (0, None));
        let w = annotator_confusion(&[(1, 10, 0)], &[(1, 3)], 2);
        assert_eq!(w[0].confusion.len(), 4);
        assert_eq!(w[0].confusion[3][0], 1);
        assert!(annotator_confusion(&[], &[(1, 0)], 2).is_empty());
    }
}
