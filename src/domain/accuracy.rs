//! Human accuracy per subset, as SugarCrepe++ reports it for its ITT and TOT
//! settings: for each type/subtype, each annotator's share of right answers,
//! averaged over the annotators (with the pooled share beside it).
use crate::domain::category::Category;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One answer, judged right or wrong by the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    pub category: Category,
    pub annotator: i64,
    pub correct: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// The subset; None for all answers together.
    pub subset: Option<Category>,
    pub answers: usize,
    pub correct: usize,
    pub annotators: usize,
    /// The mean over annotators of each one's accuracy on the subset.
    pub accuracy: f64,
    /// Right answers over all answers (equal to `accuracy` when every
    /// annotator answered as many items of the subset).
    pub pooled: f64,
}

/// One row per subset that has answers, in the paper's table order, then the overall row.
pub fn accuracy_by_subset(answers: &[Judged]) -> Vec<AccuracyRow> {
    let mut rows: Vec<AccuracyRow> =
        Category::ALL.iter().filter_map(|&c| row(Some(c), answers.iter().filter(|a| a.category == c))).collect();
    rows.extend(row(None, answers.iter()));
    rows
}

/// One person's accuracy on a subset, or (subset None) on all their answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonRow {
    pub subset: Option<Category>,
    pub answers: usize,
    pub correct: usize,
    pub accuracy: f64,
}

/// Per annotator (by id), their rows in [`accuracy_by_subset`]'s order: the
/// figures whose means over annotators that function reports.
pub fn accuracy_per_person(answers: &[Judged]) -> Vec<(i64, Vec<PersonRow>)> {
    let mut per: BTreeMap<i64, Vec<Judged>> = BTreeMap::new();
    for a in answers {
        per.entry(a.annotator).or_default().push(*a);
    }
    per.into_iter()
        .map(|(annotator, mine)| {
            let rows = accuracy_by_subset(&mine)
                .into_iter()
                .map(|r| PersonRow { subset: r.subset, answers: r.answers, correct: r.correct, accuracy: r.pooled })
                .collect();
            (annotator, rows)
        })
        .collect()
}

fn row<'a>(subset: Option<Category>, answers: impl Iterator<Item = &'a Judged>) -> Option<AccuracyRow> {
    let mut per: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    for a in answers {
        let e = per.entry(a.annotator).or_default();
        e.0 += a.correct as usize;
        e.1 += 1;
    }
    if per.is_empty() {
        return None;
    }
    let (correct, total) = per.values().fold((0, 0), |(c, t), &(ci, ti)| (c + ci, t + ti));
    let accuracy = per.values().map(|&(c, t)| c as f64 / t as f64).sum::<f64>() / per.len() as f64;
    Some(AccuracyRow {
        subset,
        answers: total,
        correct,
        annotators: per.len(),
        accuracy,
        pooled: correct as f64 / total as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::{NegType, Subtype};

    fn cat(t: NegType, s: Subtype) -> Category {
        Category { neg_type: t, subtype: s }
    }

    fn judged(c: Category, annotator: i64, right: usize, wrong: usize) -> Vec<Judged> {
        let mut v = vec![Judged { category: c, annotator, correct: true }; right];
        v.extend(vec![Judged { category: c, annotator, correct: false }; wrong]);
        v
    }

    #[test]
    fn averages_annotators_per_subset_in_table_order_then_overall() {
        let (obj, swap_att) = (cat(NegType::Replace, Subtype::Obj), cat(NegType::Swap, Subtype::Att));
        // swap/att: annotator 1 gets 3 of 4, annotator 2 gets 1 of 2 -> mean (0.75 + 0.5) / 2 = 0.625,
        // pooled 4 / 6. replace/obj: annotator 1 gets 2 of 2.
        let mut answers = judged(swap_att, 1, 3, 1);
        answers.extend(judged(swap_att, 2, 1, 1));
        answers.extend(judged(obj, 1, 2, 0));
        let rows = accuracy_by_subset(&answers);
        assert_eq!(rows.len(), 3, "subsets without answers are left out");
        assert_eq!(rows[0].subset, Some(obj));
        assert_eq!((rows[0].answers, rows[0].correct, rows[0].annotators), (2, 2, 1));
        assert_eq!(rows[0].accuracy, 1.0);
        assert_eq!(rows[1].subset, Some(swap_att));
        assert!((rows[1].accuracy - 0.625).abs() < 1e-12);
        assert!((rows[1].pooled - 4.0 / 6.0).abs() < 1e-12);
        // Overall: annotator 1 5/6, annotator 2 1/2 -> (5/6 + 1/2) / 2 = 2/3; pooled 6/8.
        let all = &rows[2];
        assert_eq!((all.subset, all.answers, all.correct, all.annotators), (None, 8, 6, 2));
        assert!((all.accuracy - 2.0 / 3.0).abs() < 1e-12);
        assert!((all.pooled - 0.75).abs() < 1e-12);
    }

    #[test]
    fn no_answers_no_rows() {
        assert!(accuracy_by_subset(&[]).is_empty());
    }

    #[test]
    fn per_person_rows_are_what_the_subset_rows_average() {
        let (obj, swap_att) = (cat(NegType::Replace, Subtype::Obj), cat(NegType::Swap, Subtype::Att));
        let mut answers = judged(swap_att, 2, 1, 1);
        answers.extend(judged(obj, 1, 2, 0));
        answers.extend(judged(swap_att, 1, 3, 1));
        let people = accuracy_per_person(&answers);
        let ids: Vec<i64> = people.iter().map(|p| p.0).collect();
        assert_eq!(ids, [1, 2]);
        let one: Vec<(Option<Category>, usize, usize, f64)> =
            people[0].1.iter().map(|r| (r.subset, r.answers, r.correct, r.accuracy)).collect();
        assert_eq!(one, [(Some(obj), 2, 2, 1.0), (Some(swap_att), 4, 3, 0.75), (None, 6, 5, 5.0 / 6.0)]);
        assert_eq!(people[1].1.len(), 2, "annotator 2: swap/att and overall");
        // The subset rows' accuracy is the mean of these.
        let rows = accuracy_by_subset(&answers);
        for row in &rows {
            let mine: Vec<f64> = people
                .iter()
                .filter_map(|(_, rs)| rs.iter().find(|r| r.subset == row.subset))
                .map(|r| r.accuracy)
                .collect();
            assert!((row.accuracy - mine.iter().sum::<f64>() / mine.len() as f64).abs() < 1e-12, "{row:?}");
        }
        assert!(accuracy_per_person(&[]).is_empty());
    }
}
