//! Agreement for kinds that ask several questions about one item (A/B/Tie:
//! commonsense, then grammar). Each answer belongs to an (item, question);
//! keyed by the item alone, an annotator's two answers would look like one
//! rating given twice and the later one would replace the earlier.

/// One answer: `(item, question, annotator, category)`.
pub type QuestionRating = (u64, u8, u64, usize);

/// The ratings keyed by (item, question), as [`super::study_agreement`]
/// takes them: the key is `item * questions + question`, so with one
/// question it is the item itself and the figures are the item-keyed ones.
pub fn keyed_by_question(ratings: &[QuestionRating], questions: usize) -> Vec<(u64, u64, usize)> {
    let n = questions.max(1) as u64;
    ratings.iter().map(|&(item, q, annotator, c)| (item * n + q as u64, annotator, c)).collect()
}

/// The ratings of one question, keyed by item.
pub fn of_question(ratings: &[QuestionRating], question: u8) -> Vec<(u64, u64, usize)> {
    ratings.iter().filter(|r| r.1 == question).map(|&(item, _, annotator, c)| (item, annotator, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::agreement::study_agreement;

    /// Two annotators (1, 2), two items, two questions each; categories
    /// a=0, b=1. Question 0: both say a on item 10, both b on item 11 →
    /// κ = 1. Question 1: item 10 (1: a, 2: b), item 11 (1: b, 2: a) →
    /// p_o = 0, p_e = ½ → κ = −1.
    #[rustfmt::skip]
    const RATINGS: [QuestionRating; 8] = [
        (10, 0, 1, 0), (10, 0, 2, 0), (11, 0, 1, 1), (11, 0, 2, 1),
        (10, 1, 1, 0), (10, 1, 2, 1), (11, 1, 1, 1), (11, 1, 2, 0),
    ];

    #[test]
    fn separating_the_questions_differs_from_mixing_them() {
        let q0 = study_agreement(&of_question(&RATINGS, 0), 2);
        let q1 = study_agreement(&of_question(&RATINGS, 1), 2);
        assert_eq!(q0.pairs[0].agreement.kappa, Some(1.0));
        assert_eq!(q0.fleiss_kappa, Some(1.0));
        assert_eq!(q0.krippendorff_alpha, Some(1.0));
        assert!((q1.pairs[0].agreement.kappa.unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(q1.pairs[0].agreement.confusion, vec![vec![0, 1], vec![1, 0]]);
        // Fleiss on question 1: P̄ = 0, P_e = ½ → −1. Alpha: o = [[0,2],[2,0]],
        // n = 4 → D_o = 1, D_e = 8/12 → α = 1 − 3/2 = −½.
        assert!((q1.fleiss_kappa.unwrap() + 1.0).abs() < 1e-12);
        assert!((q1.krippendorff_alpha.unwrap() + 0.5).abs() < 1e-12);

        // Keyed by item alone (the old way), the question-1 answer replaces
        // the question-0 one: 4 of 8 ratings are lost and only question 1 counts.
        let item_keyed: Vec<_> = RATINGS.iter().map(|&(i, _, a, c)| (i, a, c)).collect();
        let mixed = study_agreement(&item_keyed, 2);
        assert_eq!((mixed.ratings, mixed.duplicates_replaced), (4, 4));
        assert_eq!(mixed.pairs[0].agreement.kappa, q1.pairs[0].agreement.kappa);

        // Keyed by (item, question): four items, two agreements, two disagreements.
        let both = study_agreement(&keyed_by_question(&RATINGS, 2), 2);
        assert_eq!((both.items, both.ratings, both.duplicates_replaced), (4, 8, 0));
        assert_eq!(both.pairs[0].agreement.confusion, vec![vec![1, 1], vec![1, 1]]);
        assert_eq!(both.pairs[0].agreement.kappa, Some(0.0));
    }

    #[test]
    fn one_question_keys_by_the_item_itself() {
        let one: Vec<QuestionRating> = RATINGS.iter().filter(|r| r.1 == 0).copied().collect();
        let keyed = keyed_by_question(&one, 1);
        assert_eq!(keyed, of_question(&one, 0));
        assert_eq!(keyed[0], (10, 1, 0));
        assert_eq!(study_agreement(&keyed, 2), study_agreement(&of_question(&RATINGS, 0), 2));
    }
}
