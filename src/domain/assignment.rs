//! Who sees which item, in what order. The rule decides the plan; the shell
//! only stores what the plan says. Rules that hand items out on demand
//! (exactly K answers per item with expiring leases, crowd arrivals) will
//! return their plan from `claim`-style functions beside `plan_upfront`.
use super::rng::{mix, shuffle};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum AssignmentRule {
    /// Every eligible annotator sees every item once, in a per-annotator random order.
    EachAnnotatorAll,
}

/// Who may work on a study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Annotators {
    /// Every account with the annotator role, including ones added later.
    All,
    Named(Vec<String>),
}

impl Annotators {
    pub fn admits(&self, username: &str) -> bool {
        match self {
            Annotators::All => true,
            Annotators::Named(names) => names.iter().any(|n| n == username),
        }
    }
}

/// One task to create: the item, its place in the annotator's queue and the
/// seed that fixes the on-screen order of its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedTask {
    pub item: i64,
    pub position: i64,
    pub seed: u64,
}

impl AssignmentRule {
    /// The tasks an annotator gets when first arriving at the study.
    pub fn plan_upfront(&self, study_seed: u64, annotator: i64, items: &[i64]) -> Vec<PlannedTask> {
        match self {
            AssignmentRule::EachAnnotatorAll => {
                let mut order = items.to_vec();
                shuffle(&mut order, mix(&[study_seed, annotator as u64]));
                order
                    .into_iter()
                    .enumerate()
                    .map(|(position, item)| PlannedTask {
                        item,
                        position: position as i64,
                        seed: mix(&[study_seed, annotator as u64, item as u64]) >> 1,
                    })
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<i64> {
        (100..160).collect()
    }

    #[test]
    fn each_annotator_gets_every_item_exactly_once() {
        let plan = AssignmentRule::EachAnnotatorAll.plan_upfront(7, 1, &items());
        let mut got: Vec<i64> = plan.iter().map(|t| t.item).collect();
        got.sort();
        assert_eq!(got, items());
        let positions: Vec<i64> = plan.iter().map(|t| t.position).collect();
        assert_eq!(positions, (0..60).collect::<Vec<_>>());
    }

    #[test]
    fn order_differs_between_annotators_and_is_reproducible() {
        let rule = AssignmentRule::EachAnnotatorAll;
        let a = rule.plan_upfront(7, 1, &items());
        let b = rule.plan_upfront(7, 2, &items());
        assert_ne!(a, b);
        assert_eq!(a, rule.plan_upfront(7, 1, &items()));
        assert_ne!(a, rule.plan_upfront(8, 1, &items()));
    }

    #[test]
    fn option_seeds_are_stable_per_item_and_fit_in_sqlite_integer() {
        let rule = AssignmentRule::EachAnnotatorAll;
        let a = rule.plan_upfront(7, 1, &items());
        let b = rule.plan_upfront(7, 1, &items()[..30]);
        for t in &b {
            assert!(a.contains(&PlannedTask { position: a.iter().find(|x| x.item == t.item).unwrap().position, ..*t }));
        }
        assert!(a.iter().all(|t| t.seed <= i64::MAX as u64));
    }

    #[test]
    fn empty_study_plans_nothing() {
        assert!(AssignmentRule::EachAnnotatorAll.plan_upfront(1, 1, &[]).is_empty());
    }

    #[test]
    fn named_annotators_admit_only_their_names() {
        let named = Annotators::Named(vec!["ana".into(), "bo".into()]);
        assert!(named.admits("bo"));
        assert!(!named.admits("cy"));
        assert!(Annotators::All.admits("anyone"));
    }
}
