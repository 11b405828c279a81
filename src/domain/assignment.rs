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
    /// BiVLC's split: annotators in fixed pairs; each pair shares `overlap`
    /// items (both annotate them, for agreement), every other item goes to
    /// exactly one annotator.
    Pairs { pairs: Vec<[String; 2]>, overlap: usize },
    /// The human baseline: items split into groups of `size` instances, the
    /// k-th annotator of `roster` gets group k (wrapping round); each instance
    /// gives the kind's questions part by part (the baseline: its four,
    /// image-to-text first, then text-to-image).
    Groups { size: usize, roster: Vec<String> },
}

/// Who may work on a study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Annotators {
    /// Every account with the annotator role, including ones added later.
    All,
    Named(Vec<String>),
    /// Every annotator account but these: a pair validation study made for
    /// "all" leaves out the writers of its pairs (HNC's validators are
    /// another group than its writers).
    AllBut(Vec<String>),
}

impl Annotators {
    pub fn admits(&self, username: &str) -> bool {
        match self {
            Annotators::All => true,
            Annotators::Named(names) => names.iter().any(|n| n == username),
            Annotators::AllBut(left_out) => !left_out.iter().any(|n| n == username),
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
    /// Which of the kind's questions about the item (0 for one-question kinds).
    pub query: u8,
}

impl AssignmentRule {
    /// The tasks an annotator (account id and username) gets when first
    /// arriving at the study. `items` must be given in a stable order;
    /// `questions` are the kind's questions per item in parts (its descriptor's).
    pub fn plan_upfront(
        &self,
        questions: &[&[u8]],
        study_seed: u64,
        annotator: i64,
        username: &str,
        items: &[i64],
    ) -> Vec<PlannedTask> {
        let mine = match self {
            AssignmentRule::EachAnnotatorAll => items.to_vec(),
            AssignmentRule::Pairs { pairs, overlap } => pair_share(study_seed, pairs, *overlap, username, items),
            AssignmentRule::Groups { size, roster } => {
                let mine = group_share(study_seed, *size, roster, username, items);
                return group_queue(study_seed, annotator, questions, mine);
            }
        };
        queue(study_seed, annotator, together(questions), mine)
    }

    /// How many tasks [`plan_upfront`](Self::plan_upfront) gives an
    /// annotator, without building them (progress before anyone starts).
    pub fn planned_len(&self, questions: &[&[u8]], study_seed: u64, username: &str, items: &[i64]) -> usize {
        match self {
            AssignmentRule::EachAnnotatorAll => items.len() * together(questions).len(),
            AssignmentRule::Pairs { pairs, overlap } => {
                pair_share(study_seed, pairs, *overlap, username, items).len() * together(questions).len()
            }
            // A group is small, and its queue holds every question of every item.
            AssignmentRule::Groups { .. } => self.plan_upfront(questions, study_seed, 0, username, items).len(),
        }
    }

    /// The annotators a rule names itself (pairs), if any.
    pub fn named_annotators(&self) -> Option<Vec<String>> {
        match self {
            AssignmentRule::EachAnnotatorAll => None,
            AssignmentRule::Pairs { pairs, .. } => Some(pairs.iter().flatten().cloned().collect()),
            AssignmentRule::Groups { roster, .. } => Some(roster.clone()),
        }
    }

    /// The pair partner of an annotator, if the rule pairs annotators.
    pub fn primary_of_pair(&self, username: &str) -> Option<&str> {
        match self {
            AssignmentRule::EachAnnotatorAll | AssignmentRule::Groups { .. } => None,
            AssignmentRule::Pairs { pairs, .. } => {
                pairs.iter().find(|p| p.iter().any(|n| n == username)).map(|p| p[0].as_str())
            }
        }
    }
}

/// The questions the item-by-item rules ask about each item, one after the
/// other: a kind's one part (A/B/Tie: commonsense, then grammar). Kinds in
/// several parts go by groups, which study validation enforces.
fn together<'a>(questions: &[&'a [u8]]) -> &'a [u8] {
    questions.first().copied().filter(|q| !q.is_empty()).unwrap_or(&[0])
}

/// Shuffles an annotator's items into a queue with per-task option seeds;
/// an item's questions come together and share its seed, so its options
/// keep their places from one question to the next.
fn queue(study_seed: u64, annotator: i64, questions: &[u8], mut items: Vec<i64>) -> Vec<PlannedTask> {
    shuffle(&mut items, mix(&[study_seed, annotator as u64]));
    items
        .into_iter()
        .flat_map(|item| questions.iter().map(move |&query| (item, query)))
        .enumerate()
        .map(|(position, (item, query))| PlannedTask {
            item,
            position: position as i64,
            seed: mix(&[study_seed, annotator as u64, item as u64]) >> 1,
            query,
        })
        .collect()
}

/// One annotator's group in the human-baseline split.
fn group_share(study_seed: u64, size: usize, roster: &[String], username: &str, items: &[i64]) -> Vec<i64> {
    let Some(slot) = roster.iter().position(|n| n == username) else {
        return Vec::new();
    };
    let mut pool = items.to_vec();
    shuffle(&mut pool, mix(&[study_seed, 0x4752_4f55]));
    let size = size.max(1);
    let groups = pool.len().div_ceil(size).max(1);
    pool.chunks(size).nth(slot % groups).map(<[i64]>::to_vec).unwrap_or_default()
}

/// Every question of every item, part after part (the baseline: 0 and 1
/// first, then 2 and 3), each part in its own seeded order.
pub(crate) fn group_queue(study_seed: u64, annotator: i64, questions: &[&[u8]], items: Vec<i64>) -> Vec<PlannedTask> {
    let mut out = Vec::with_capacity(items.len() * questions.iter().map(|p| p.len()).sum::<usize>());
    for (part, queries) in questions.iter().enumerate() {
        let mut tasks: Vec<(i64, u8)> = items.iter().flat_map(|&i| queries.iter().map(move |&q| (i, q))).collect();
        shuffle(&mut tasks, mix(&[study_seed, annotator as u64, part as u64]));
        for (item, query) in tasks {
            out.push(PlannedTask {
                item,
                position: out.len() as i64,
                seed: mix(&[study_seed, annotator as u64, item as u64, query as u64]) >> 1,
                query,
            });
        }
    }
    out
}

/// The items one annotator of a pairs plan sees: the pair's shared block of
/// the seeded item order, then every m-th of the remaining items.
fn pair_share(study_seed: u64, pairs: &[[String; 2]], overlap: usize, username: &str, items: &[i64]) -> Vec<i64> {
    let names: Vec<&str> = pairs.iter().flatten().map(String::as_str).collect();
    let Some(slot) = names.iter().position(|n| *n == username) else {
        return Vec::new();
    };
    let mut pool = items.to_vec();
    shuffle(&mut pool, mix(&[study_seed, 0x5041_4952])); // same order for every annotator
    let shared = (overlap * pairs.len()).min(pool.len());
    let pair = slot / 2;
    let mut mine: Vec<i64> = pool[..shared].iter().skip(pair * overlap).take(overlap).copied().collect();
    mine.extend(pool[shared..].iter().skip(slot).step_by(names.len()).copied());
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The questions the groups rule hands out, from the baseline's descriptor.
    const BASELINE: &[&[u8]] = crate::domain::survey::human_baseline::KIND.questions;

    fn items() -> Vec<i64> {
        (100..160).collect()
    }

    /// Groups with the baseline's questions; the other rules with one question
    /// per item, as study validation pairs them.
    fn plan(rule: &AssignmentRule, seed: u64, annotator: i64, items: &[i64]) -> Vec<PlannedTask> {
        let questions: &[&[u8]] = if matches!(rule, AssignmentRule::Groups { .. }) { BASELINE } else { &[&[0]] };
        rule.plan_upfront(questions, seed, annotator, &format!("u{annotator}"), items)
    }

    fn pairs_rule(n_pairs: usize, overlap: usize) -> AssignmentRule {
        let pairs = (0..n_pairs).map(|p| [format!("u{}", 2 * p), format!("u{}", 2 * p + 1)]).collect();
        AssignmentRule::Pairs { pairs, overlap }
    }

    fn items_of(rule: &AssignmentRule, who: i64, items: &[i64]) -> std::collections::BTreeSet<i64> {
        plan(rule, 3, who, items).into_iter().map(|t| t.item).collect()
    }

    #[test]
    fn pairs_cover_every_item_once_except_the_shared_blocks() {
        // BiVLC's shape: 10 annotators in 5 pairs, 100 shared items per pair.
        let items: Vec<i64> = (0..5382).collect();
        let rule = pairs_rule(5, 100);
        let mut count = std::collections::HashMap::<i64, usize>::new();
        for who in 0..10 {
            for i in items_of(&rule, who, &items) {
                *count.entry(i).or_default() += 1;
            }
        }
        assert_eq!(count.len(), items.len(), "every item is assigned");
        assert_eq!(count.values().filter(|&&c| c == 2).count(), 500);
        assert!(count.values().all(|&c| c == 1 || c == 2));
        for p in 0..5 {
            let (a, b) = (items_of(&rule, 2 * p, &items), items_of(&rule, 2 * p + 1, &items));
            assert_eq!(a.intersection(&b).count(), 100, "pair {p} shares exactly its block");
            let other = items_of(&rule, (2 * p + 2) % 10, &items);
            assert_eq!(a.intersection(&other).count(), 0, "no overlap across pairs");
        }
        let sizes: Vec<usize> = (0..10).map(|w| items_of(&rule, w, &items).len()).collect();
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
    }

    #[test]
    fn groups_give_each_annotator_four_questions_per_instance_i2t_first() {
        let items: Vec<i64> = (0..500).collect();
        let roster: Vec<String> = (0..20).map(|i| format!("u{i}")).collect();
        let rule = AssignmentRule::Groups { size: 25, roster };
        let mut seen = std::collections::HashSet::new();
        for who in 0..20 {
            let plan = plan(&rule, 5, who, &items);
            assert_eq!(plan.len(), 100, "25 instances x 4 questions");
            assert!(plan[..50].iter().all(|t| t.query < 2), "part 1 is image-to-text");
            assert!(plan[50..].iter().all(|t| t.query >= 2), "part 2 is text-to-image");
            let mine: std::collections::BTreeSet<i64> = plan.iter().map(|t| t.item).collect();
            assert_eq!(mine.len(), 25);
            for i in &mine {
                assert!(seen.insert(*i), "instance {i} in two groups");
                for q in 0..4 {
                    assert_eq!(plan.iter().filter(|t| t.item == *i && t.query == q).count(), 1);
                }
            }
            assert_eq!(plan.iter().map(|t| t.position).collect::<Vec<_>>(), (0..100).collect::<Vec<_>>());
        }
        assert_eq!(seen.len(), 500);
        // A 21st annotator wraps round to the first group; someone off the roster gets nothing.
        let wrap = AssignmentRule::Groups { size: 25, roster: (0..21).map(|i| format!("u{i}")).collect() };
        assert_eq!(items_of(&wrap, 20, &items), items_of(&wrap, 0, &items));
        assert!(items_of(&rule, 99, &items).is_empty());
    }

    #[test]
    fn groups_take_the_questions_from_the_kind_not_a_fixed_four() {
        let rule = AssignmentRule::Groups { size: 5, roster: vec!["u0".into()] };
        let items: Vec<i64> = (0..5).collect();
        let three = rule.plan_upfront(&[&[0, 1, 2]], 1, 0, "u0", &items);
        assert_eq!(three.len(), 15, "5 instances x 3 questions in one part");
        for q in 0..3 {
            assert_eq!(three.iter().filter(|t| t.query == q).count(), 5);
        }
        let one = rule.plan_upfront(&[&[0]], 1, 0, "u0", &items);
        assert_eq!(one.iter().map(|t| t.query).collect::<Vec<_>>(), [0; 5]);
        // A later part never starts before an earlier one ends.
        let parts = rule.plan_upfront(&[&[1], &[0]], 1, 0, "u0", &items);
        assert!(parts[..5].iter().all(|t| t.query == 1) && parts[5..].iter().all(|t| t.query == 0));
    }

    #[test]
    fn pairs_with_more_overlap_than_items_share_what_there_is() {
        let items: Vec<i64> = (0..7).collect();
        let rule = pairs_rule(2, 10);
        let a = items_of(&rule, 0, &items);
        let c = items_of(&rule, 2, &items);
        assert_eq!(a, items_of(&rule, 1, &items));
        assert_eq!(a.len() + c.len(), 7);
        assert!(items_of(&rule, 9, &items).is_empty(), "someone outside the pairs gets nothing");
        assert_eq!(rule.primary_of_pair("u3"), Some("u2"));
        assert_eq!(rule.named_annotators().unwrap(), ["u0", "u1", "u2", "u3"]);
    }

    #[test]
    fn each_annotator_gets_every_item_exactly_once() {
        let plan = plan(&AssignmentRule::EachAnnotatorAll, 7, 1, &items());
        let mut got: Vec<i64> = plan.iter().map(|t| t.item).collect();
        got.sort();
        assert_eq!(got, items());
        let positions: Vec<i64> = plan.iter().map(|t| t.position).collect();
        assert_eq!(positions, (0..60).collect::<Vec<_>>());
    }

    #[test]
    fn order_differs_between_annotators_and_is_reproducible() {
        let rule = AssignmentRule::EachAnnotatorAll;
        let a = plan(&rule, 7, 1, &items());
        let b = plan(&rule, 7, 2, &items());
        assert_ne!(a, b);
        assert_eq!(a, plan(&rule, 7, 1, &items()));
        assert_ne!(a, plan(&rule, 8, 1, &items()));
    }

    #[test]
    fn option_seeds_are_stable_per_item_and_fit_in_sqlite_integer() {
        let rule = AssignmentRule::EachAnnotatorAll;
        let a = plan(&rule, 7, 1, &items());
        let b = plan(&rule, 7, 1, &items()[..30]);
        for t in &b {
            assert!(a.contains(&PlannedTask { position: a.iter().find(|x| x.item == t.item).unwrap().position, ..*t }));
        }
        assert!(a.iter().all(|t| t.seed <= i64::MAX as u64));
    }

    #[test]
    fn questions_asked_together_come_one_after_the_other_with_the_items_seed() {
        const AB_TIE: &[&[u8]] = crate::domain::survey::ab_tie::KIND.questions;
        for rule in [AssignmentRule::EachAnnotatorAll, pairs_rule(2, 3)] {
            let single = plan(&rule, 5, 1, &items());
            let plan = rule.plan_upfront(AB_TIE, 5, 1, "u1", &items());
            assert_eq!(plan.len(), 2 * single.len());
            assert_eq!(rule.planned_len(AB_TIE, 5, "u1", &items()), plan.len());
            for (pair, one) in plan.chunks(2).zip(&single) {
                assert_eq!((pair[0].item, pair[1].item, pair[0].query, pair[1].query), (one.item, one.item, 0, 1));
                assert_eq!((pair[0].seed, pair[1].seed), (one.seed, one.seed), "same option places");
                assert_eq!(pair[1].position, pair[0].position + 1);
            }
        }
    }

    #[test]
    fn empty_study_plans_nothing() {
        assert!(plan(&AssignmentRule::EachAnnotatorAll, 1, 1, &[]).is_empty());
    }

    #[test]
    fn named_annotators_admit_only_their_names() {
        let named = Annotators::Named(vec!["ana".into(), "bo".into()]);
        assert!(named.admits("bo"));
        assert!(!named.admits("cy"));
        assert!(Annotators::All.admits("anyone"));
        let all_but = Annotators::AllBut(vec!["writer".into()]);
        assert!(all_but.admits("anyone") && !all_but.admits("writer"));
    }

    #[test]
    fn planned_len_is_the_length_of_the_plan_for_every_rule_and_annotator() {
        let items: Vec<i64> = (100..124).collect();
        let names: Vec<String> = (0..6).map(|i| format!("u{i}")).collect();
        let rules = [
            AssignmentRule::EachAnnotatorAll,
            AssignmentRule::Pairs { pairs: vec![["u0".into(), "u1".into()], ["u2".into(), "u3".into()]], overlap: 5 },
            AssignmentRule::Groups { size: 5, roster: names[..5].to_vec() },
        ];
        for rule in &rules {
            for (i, who) in names.iter().enumerate() {
                let want = rule.plan_upfront(BASELINE, 7, i as i64, who, &items).len();
                assert_eq!(rule.planned_len(BASELINE, 7, who, &items), want, "{rule:?} {who}");
            }
        }
        // The baseline's group of 5 instances is 20 questions, not 5 or 24.
        assert_eq!(rules[2].planned_len(BASELINE, 7, "u4", &items), 4 * 4, "24 items in groups of 5: the last has 4");
        assert_eq!(rules[2].planned_len(BASELINE, 7, "u0", &items), 20);
    }
}
