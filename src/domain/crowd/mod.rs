//! Crowd studies by link (docs/crowd.md): the pure rules. Bundles made once
//! and handed out, leases and how they end, the formats of tokens, codes
//! and platform ids, the `[link]` spec table, and the quality flags and
//! dashboard figures. The shell in `crate::crowd`
//! stores what these decide.
pub mod bundles;
pub mod checks;
pub mod comprehension;
pub mod field;
pub mod figures;
pub mod flags;
pub mod ids;
pub mod lease;
pub mod sessions;
pub mod spec;
pub mod steps;

use super::assignment::PlannedTask;

/// A participant's queue over its bundle: every question of every instance,
/// part after part, each part in an order seeded by the study and the
/// participant (the same queue the `groups` rule gives an annotator).
pub fn bundle_queue(study_seed: u64, participant: i64, questions: &[&[u8]], instances: &[i64]) -> Vec<PlannedTask> {
    super::assignment::kind_queue(study_seed, participant, questions, instances.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_asks_every_question_once_and_differs_by_participant() {
        // The human baseline's questions (`kinds::human_baseline`): two parts of two.
        let baseline: &[&[u8]] = &[&[0, 1], &[2, 3]];
        let items: Vec<i64> = (10..35).collect();
        let q = bundle_queue(7, 1, baseline, &items);
        assert_eq!(q.len(), 100);
        let mut pairs: Vec<(i64, u8)> = q.iter().map(|t| (t.item, t.query)).collect();
        pairs.sort();
        pairs.dedup();
        assert_eq!(pairs.len(), 100);
        assert_eq!(q.iter().map(|t| t.position).collect::<Vec<_>>(), (0..100).collect::<Vec<_>>());
        assert_ne!(q, bundle_queue(7, 2, baseline, &items));
        assert_eq!(q, bundle_queue(7, 1, baseline, &items));
        let one = bundle_queue(7, 1, &[&[0]], &items);
        assert_eq!(one.len(), 25);
        assert!(one.iter().all(|t| t.query == 0 && t.seed <= i64::MAX as u64));
    }

    #[test]
    fn a_kind_asking_two_questions_together_asks_them_one_after_the_other_with_one_seed() {
        // A/B/Tie (`kinds::ab_tie`): commonsense then grammar about the same screen.
        let items: Vec<i64> = (10..30).collect();
        for participant in 1..6 {
            let q = bundle_queue(7, participant, &[&[0, 1]], &items);
            assert_eq!(q.len(), 40);
            for pair in q.chunks(2) {
                assert_eq!((pair[0].item, pair[0].query, pair[1].query), (pair[1].item, 0, 1), "{q:?}");
                assert_eq!(pair[0].seed, pair[1].seed, "the options keep their places");
            }
            let mut seen: Vec<i64> = q.iter().map(|t| t.item).collect();
            seen.dedup();
            assert_eq!(seen.len(), 20, "each item once");
        }
        assert_ne!(bundle_queue(7, 1, &[&[0, 1]], &items), bundle_queue(7, 2, &[&[0, 1]], &items));
    }
}
