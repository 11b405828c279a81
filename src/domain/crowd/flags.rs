//! Flags per participant of a link study (docs/crowd.md, "Quality"): gold
//! accuracy, attention checks failed, median seconds per item, too fast,
//! straight-lining, agreement with the majority of the others whose answers
//! count, and the decision the approve list suggests. Pure: the shell reads
//! the answers.
use super::spec::QualitySettings;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// Gold accuracy under this is flagged (with at least one gold item answered).
pub const LOW_GOLD_ACCURACY: f64 = 0.5;
/// Agreement with the others' majority under this is flagged…
pub const LOW_AGREEMENT: f64 = 0.5;
/// …once the participant shares at least this many items with a majority.
pub const MIN_SHARED_ITEMS: usize = 5;
/// Prolific lets a researcher reject for failed attention checks only in
/// studies whose median completion time is at least this long.
pub const REJECT_MIN_BUNDLE_SECS: f64 = 300.0;
pub const REJECT_REASON: &str = "failed two attention checks";

/// A check item's answer: right or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    None,
    Gold { correct: bool },
    Attention { correct: bool },
}

/// One stored answer, with its strings interned by the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub person: u64,
    /// An item and question (instance and query), shared across people.
    pub item: u64,
    /// Where it stood in the person's queue: the order answers were given in.
    pub order: i64,
    /// The on-screen position chosen ("A".."D", "none"), interned.
    pub shown: u32,
    /// The stored value chosen, interned.
    pub value: u32,
    pub elapsed_ms: i64,
    pub check: Check,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    TooFast,
    StraightLining,
    FailedCheck,
    LowGoldAccuracy,
    LowAgreement,
}

impl Flag {
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::TooFast => "too_fast",
            Flag::StraightLining => "straight_lining",
            Flag::FailedCheck => "failed_check",
            Flag::LowGoldAccuracy => "low_gold_accuracy",
            Flag::LowAgreement => "low_agreement",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonFlags {
    pub person: u64,
    /// Answers that are not check items.
    pub answers: usize,
    /// Over every timed answer, check items included (they take as long to read).
    pub median_secs_per_item: Option<f64>,
    pub gold_answered: usize,
    pub gold_correct: usize,
    pub gold_accuracy: Option<f64>,
    pub checks_answered: usize,
    pub checks_failed: usize,
    /// The longest run of answers in a row at one on-screen position (flagged), and with one stored value (shown only).
    pub longest_same_position: usize,
    pub longest_same_option: usize,
    /// Items shared with other people whose answers there have a strict majority, and the
    /// share of those where this person gave the majority's answer.
    pub shared_items: usize,
    pub agreement: Option<f64>,
    pub flags: Vec<Flag>,
}

/// The median of `values` (the mean of the middle two for an even count); None when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 })
}

/// The longest run of equal consecutive values.
fn longest_run(values: impl Iterator<Item = u32>) -> usize {
    let (mut best, mut run, mut last) = (0, 0, None);
    for v in values {
        run = if Some(v) == last { run + 1 } else { 1 };
        last = Some(v);
        best = best.max(run);
    }
    best
}

/// The longest run of equal consecutive values, skipping (neither
/// extending nor breaking a run) those marked true.
fn longest_run_skipping(values: impl Iterator<Item = (u32, bool)>) -> usize {
    longest_run(values.filter(|(_, skip)| !skip).map(|(v, _)| v))
}

/// Whose answers make the majority a person is measured against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Others {
    /// People whose answers count nowhere (returned, extra, screened out,
    /// discarded): measured against the others, never part of a majority.
    pub not_counted: BTreeSet<u64>,
    /// True where answers are orders, not categories (a ranking's): no
    /// agreement is measured.
    pub orders: bool,
}

/// For each item, how often each value was given by people who count (check items left out).
fn value_counts(answers: &[Answer], others: &Others) -> HashMap<u64, Vec<(u32, u32)>> {
    let mut counts: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
    for a in answers.iter().filter(|a| a.check == Check::None && !others.not_counted.contains(&a.person)) {
        let c = counts.entry(a.item).or_default();
        match c.iter_mut().find(|(v, _)| *v == a.value) {
            Some((_, n)) => *n += 1,
            None => c.push((a.value, 1)),
        }
    }
    counts
}

/// The others' majority on an item once `own` (the person's answer, when
/// it is among `counts`) is taken out: the value given strictly more often
/// than any other, or None (a tie, or nobody else).
fn majority_without(counts: &[(u32, u32)], own: Option<u32>) -> Option<u32> {
    let mut best: Option<(u32, u32)> = None;
    let mut tied = false;
    for &(v, n) in counts {
        let n = if Some(v) == own { n - 1 } else { n };
        match best {
            _ if n == 0 => {}
            Some((_, b)) if n == b => tied = true,
            Some((_, b)) if n < b => {}
            _ => {
                best = Some((v, n));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(v, _)| v)
}

/// Every person's flags, in ascending person order, everybody's answers counting.
#[cfg(test)]
pub fn person_flags(answers: &[Answer], q: &QualitySettings) -> Vec<PersonFlags> {
    person_flags_among(answers, q, &Others::default())
}

/// Every person's flags, in ascending person order, agreement measured against `others`.
pub fn person_flags_among(answers: &[Answer], q: &QualitySettings, others: &Others) -> Vec<PersonFlags> {
    let counts = if others.orders { HashMap::new() } else { value_counts(answers, others) };
    let mut by_person: HashMap<u64, Vec<&Answer>> = HashMap::new();
    for a in answers {
        by_person.entry(a.person).or_default().push(a);
    }
    let mut people: Vec<u64> = by_person.keys().copied().collect();
    people.sort_unstable();
    people
        .into_iter()
        .map(|person| {
            let mut own = by_person.remove(&person).unwrap_or_default();
            own.sort_by_key(|a| a.order);
            one_person(person, &own, &counts, q, !others.not_counted.contains(&person))
        })
        .collect()
}

fn one_person(
    person: u64,
    own: &[&Answer],
    counts: &HashMap<u64, Vec<(u32, u32)>>,
    q: &QualitySettings,
    counted: bool,
) -> PersonFlags {
    // 0 is an answer nobody timed (a plain form after a restart): not a fast one.
    let mut secs: Vec<f64> = own.iter().filter(|a| a.elapsed_ms > 0).map(|a| a.elapsed_ms as f64 / 1000.0).collect();
    let median_secs_per_item = median(&mut secs);
    let (mut gold_answered, mut gold_correct, mut checks_answered, mut checks_failed) = (0, 0, 0, 0);
    let (mut shared_items, mut agreed, mut answers) = (0, 0, 0);
    // Per answer: whether its item explains it (below, for straight-lining).
    let mut explained = Vec::with_capacity(own.len());
    for a in own {
        explained.push(match a.check {
            Check::Gold { correct } => {
                gold_answered += 1;
                gold_correct += usize::from(correct);
                correct
            }
            Check::Attention { correct } => {
                checks_answered += 1;
                checks_failed += usize::from(!correct);
                correct
            }
            Check::None => {
                answers += 1;
                match counts.get(&a.item).and_then(|c| majority_without(c, counted.then_some(a.value))) {
                    Some(m) => {
                        shared_items += 1;
                        agreed += usize::from(m == a.value);
                        m == a.value
                    }
                    None => false,
                }
            }
        });
    }
    let share = |k: usize, n: usize| (n > 0).then(|| k as f64 / n as f64);
    let gold_accuracy = share(gold_correct, gold_answered);
    let agreement = share(agreed, shared_items);
    let longest_same_position = longest_run(own.iter().map(|a| a.shown));
    let longest_same_option = longest_run(own.iter().map(|a| a.value));
    let mut flags = Vec::new();
    if median_secs_per_item.is_some_and(|m| m < q.min_seconds_per_item) {
        flags.push(Flag::TooFast);
    }
    // By what was clicked, not what it stored: where the right answer is
    // always one stored value (an odd-one-out's `negative`), careful people
    // give it every time, at shuffled positions. And only answers the item
    // does not explain (the others' majority, a right check): four_image's
    // None has one place, and where most truths are None careful people
    // click it in long runs (audit AN: half of a perfect crowd flagged).
    let unexplained_run = longest_run_skipping(own.iter().map(|a| a.shown).zip(explained));
    if unexplained_run >= q.straight_line_run {
        flags.push(Flag::StraightLining);
    }
    if checks_failed > 0 {
        flags.push(Flag::FailedCheck);
    }
    if gold_accuracy.is_some_and(|g| g < LOW_GOLD_ACCURACY) {
        flags.push(Flag::LowGoldAccuracy);
    }
    if shared_items >= MIN_SHARED_ITEMS && agreement.is_some_and(|g| g < LOW_AGREEMENT) {
        flags.push(Flag::LowAgreement);
    }
    PersonFlags {
        person,
        answers,
        median_secs_per_item,
        gold_answered,
        gold_correct,
        gold_accuracy,
        checks_answered,
        checks_failed,
        longest_same_position,
        longest_same_option,
        shared_items,
        agreement,
        flags,
    }
}

/// Where a participant's submission stands, as the approve list needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submission {
    /// Every task answered (completed, extra or discarded), or screened out with the code.
    Finished,
    /// Still working: decide later.
    Working,
    /// Its time ran out before the end.
    Unfinished,
    /// Gave the study back: nothing to approve.
    Returned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
    Review,
    /// Still working.
    Wait,
    /// Nothing was submitted.
    None,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
            Decision::Review => "review",
            Decision::Wait => "wait",
            Decision::None => "none",
        }
    }
}

/// A study's length for Prolific's 5-minute rule: the median time
/// finishers took, but never more than the length the study was advertised
/// with (`estimated_minutes`, in seconds): a study advertised as 3 minutes
/// is short however long people took. None before anyone finished.
pub fn study_length(median_secs: Option<f64>, advertised_secs: Option<f64>) -> Option<f64> {
    match advertised_secs {
        Some(a) => median_secs.map(|m| m.min(a)),
        None => median_secs,
    }
}

/// The suggested decision and its reason. Rejection follows Prolific's
/// rule: only for two failed attention checks, and only in a study whose
/// length (`length_secs`: the median completion time, or the advertised
/// length where that is shorter) is at least 5 minutes; anything else
/// flagged is for the researcher to review.
pub fn suggest(
    submission: Submission,
    checks_failed: usize,
    flags: &[Flag],
    length_secs: Option<f64>,
) -> (Decision, String) {
    let listed = || flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("; ");
    match submission {
        Submission::Working => return (Decision::Wait, "still working".into()),
        Submission::Returned => return (Decision::None, "returned the study".into()),
        Submission::Unfinished => return (Decision::Review, "did not finish in time".into()),
        Submission::Finished => {}
    }
    if checks_failed >= 2 {
        if length_secs.is_some_and(|m| m >= REJECT_MIN_BUNDLE_SECS) {
            return (Decision::Reject, REJECT_REASON.into());
        }
        return (
            Decision::Review,
            format!("{}; the study is under 5 minutes (its median time or its advertised length)", listed()),
        );
    }
    if flags.is_empty() {
        (Decision::Approve, String::new())
    } else {
        (Decision::Review, listed())
    }
}

#[cfg(test)]
#[path = "flags_tests.rs"]
mod tests;
