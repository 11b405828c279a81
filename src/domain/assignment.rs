//! Who sees which item, in what order. The rule decides the plan; the shell
//! only stores what the plan says. Rules that hand items out on demand
//! (exactly K answers per item with expiring leases, crowd arrivals) will
//! return their plan from `claim`-style functions beside `plan_upfront`.
use super::category::Category;
use super::rng::{mix, shuffle};
pub use super::stratified::StudyItem;
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
    /// SugarCrepe++'s design: each person their own seeded random sample
    /// of `per_subset` items from each subset (`subsets`, or None: every
    /// subset the items have), asked like `each_annotator_all`.
    StratifiedSample { per_subset: usize, subsets: Option<Vec<Category>> },
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
        items: &[StudyItem],
    ) -> Vec<PlannedTask> {
        if let AssignmentRule::Groups { size, roster } = self {
            let mine = group_share(study_seed, *size, roster, username, &ids(items));
            return group_queue(study_seed, annotator, questions, mine);
        }
        queue(study_seed, annotator, together(questions), self.share(study_seed, username, items))
    }

    /// The items an item-by-item rule gives a person (groups: none).
    fn share(&self, study_seed: u64, username: &str, items: &[StudyItem]) -> Vec<i64> {
        match self {
            AssignmentRule::EachAnnotatorAll => ids(items),
            AssignmentRule::Pairs { pairs, overlap } => pair_share(study_seed, pairs, *overlap, username, &ids(items)),
            AssignmentRule::Groups { .. } => Vec::new(),
            AssignmentRule::StratifiedSample { per_subset, subsets } => {
                let subsets = super::stratified::subsets_of(subsets.as_deref(), items);
                super::stratified::sample(study_seed, *per_subset, &subsets, username, items)
            }
        }
    }

    /// How many tasks [`plan_upfront`](Self::plan_upfront) gives an
    /// annotator, without building them (progress before anyone starts).
    pub fn planned_len(&self, questions: &[&[u8]], study_seed: u64, username: &str, items: &[StudyItem]) -> usize {
        match self {
            AssignmentRule::EachAnnotatorAll => items.len() * together(questions).len(),
            // A group is small, and its queue holds every question of every item.
            AssignmentRule::Groups { .. } => self.plan_upfront(questions, study_seed, 0, username, items).len(),
            _ => self.share(study_seed, username, items).len() * together(questions).len(),
        }
    }

    /// The annotators a rule names itself (pairs), if any.
    pub fn named_annotators(&self) -> Option<Vec<String>> {
        match self {
            AssignmentRule::EachAnnotatorAll | AssignmentRule::StratifiedSample { .. } => None,
            AssignmentRule::Pairs { pairs, .. } => Some(pairs.iter().flatten().cloned().collect()),
            AssignmentRule::Groups { roster, .. } => Some(roster.clone()),
        }
    }

    /// The pair partner of an annotator, if the rule pairs annotators.
    pub fn primary_of_pair(&self, username: &str) -> Option<&str> {
        match self {
            AssignmentRule::Pairs { pairs, .. } => {
                pairs.iter().find(|p| p.iter().any(|n| n == username)).map(|p| p[0].as_str())
            }
            _ => None,
        }
    }
}

fn ids(items: &[StudyItem]) -> Vec<i64> {
    items.iter().map(|i| i.id).collect()
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

/// One person's queue over `items` as the kind asks them: a kind in several
/// parts part after part ([`group_queue`]); a kind whose one part holds
/// several questions (A/B/Tie) asks them together, item by item, with one
/// seed per item so the options keep their places ([`queue`]).
pub(crate) fn kind_queue(study_seed: u64, annotator: i64, questions: &[&[u8]], items: Vec<i64>) -> Vec<PlannedTask> {
    match questions {
        [one] if one.len() > 1 => queue(study_seed, annotator, one, items),
        _ => group_queue(study_seed, annotator, questions, items),
    }
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
#[path = "assignment_tests.rs"]
mod tests;
