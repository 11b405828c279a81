//! What a decision sends for one participant: approve (in bulk), reject
//! (one at a time, with Prolific's category and a message of at least 100
//! characters), ask for a return (screen-outs and comprehension failures:
//! never rejected), or nothing, with why.
use super::status::SubmissionStatus;
use crate::domain::crowd::flags::Decision;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The flags a rejection message may be written for (docs/crowd.md's flags).
pub const FLAGS: [&str; 5] = ["failed_check", "too_fast", "straight_lining", "low_gold_accuracy", "low_agreement"];

/// The most submission ids one bulk approval carries.
pub const BULK_APPROVE_MAX: usize = 1000;
/// The most bonuses one bonus set-up carries (Prolific recommends 200).
pub const BONUS_SETUP_MAX: usize = 200;

/// Prolific's rejection category for a flag.
pub fn category(flag: &str) -> &'static str {
    match flag {
        "failed_check" => "FAILED_CHECK",
        "too_fast" => "TOO_QUICKLY",
        _ => "LOW_EFFORT",
    }
}

/// The default message for a flag: at least 100 characters, as Prolific requires.
pub fn default_message(flag: &str) -> String {
    match flag {
        "failed_check" => {
            "Your submission failed two of the study's attention checks, which asked for a \
                           specific answer in plain words. We cannot use answers given without reading the items."
        }
        "too_fast" => {
            "Your answers came faster than the items can be read: the median time per item was \
                       under the study's minimum, so we cannot use this submission's answers for the research."
        }
        "straight_lining" => {
            "Your answers picked the same position or option many times in a row, whatever the \
                              items showed, so we cannot use this submission's answers for the research."
        }
        "low_gold_accuracy" => {
            "Your answers to items with a known answer were mostly wrong, far below what careful \
                                reading gives, so we cannot use this submission's answers for the research."
        }
        _ => {
            "Your answers disagreed with every other participant's on most items where they agreed, far more than \
              careful reading gives, so we cannot use this submission's answers for the research."
        }
    }
    .to_string()
}

/// One participant as the decision sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Person<'a> {
    /// hardneg's status word (the approve list's `status`).
    pub status: &'a str,
    pub decision: Decision,
    pub flags: &'a [String],
    /// Its Prolific submission as last synced (None: never seen there).
    pub prolific: Option<SubmissionStatus>,
    pub return_requested: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    Approve,
    Reject {
        category: String,
        message: String,
    },
    RequestReturn {
        reason: String,
    },
    /// Nothing is sent; `why` says what to do, if anything.
    Nothing {
        why: String,
    },
}

/// The reason sent with a return request (Prolific builds the participant's
/// message around it).
pub const SCREENED_OUT_RETURN: &str =
    "Did not pass the comprehension check, or the study was full: please return the study (it will not be rejected)";

pub fn decide(p: &Person, messages: &BTreeMap<String, String>) -> Action {
    use SubmissionStatus as S;
    let nothing = |why: &str| Action::Nothing { why: why.to_string() };
    let Some(prolific) = p.prolific else {
        return nothing("no submission on Prolific (yet): sync first");
    };
    if prolific.decided() {
        return nothing(&format!("already {} on Prolific", prolific.as_str()));
    }
    // A comprehension failure (screened out holding no place: the approve
    // list's `none`) and one told the study was full are asked to return,
    // never rejected. One screened out by attention checks follows the
    // approve list like a finisher: rejected only as Prolific allows.
    let asked_to_return =
        p.status == "full_after_comprehension" || (p.status == "screened_out" && p.decision == Decision::None);
    if asked_to_return {
        return if p.return_requested {
            nothing("a return was requested already")
        } else if prolific == S::TimedOut {
            nothing("timed out on Prolific: its place is given back already")
        } else {
            Action::RequestReturn { reason: SCREENED_OUT_RETURN.to_string() }
        };
    }
    match p.decision {
        Decision::Approve => Action::Approve,
        // Active or timed out: sent once submitted (a late finisher may still submit).
        Decision::Reject if matches!(prolific, S::AwaitingReview | S::Active | S::TimedOut) => {
            // The approve list rejects only for failed attention checks, so that is the
            // category and message even when other flags (too fast, say) come first.
            let known = |f: &&String| FLAGS.contains(&f.as_str());
            let flag = if p.flags.iter().any(|f| f == "failed_check") {
                "failed_check"
            } else {
                p.flags.iter().find(known).map_or("failed_check", |f| f.as_str())
            };
            let message = messages.get(flag).cloned().unwrap_or_else(|| default_message(flag));
            Action::Reject { category: category(flag).to_string(), message }
        }
        Decision::Reject => nothing("not submitted on Prolific"),
        Decision::Review => nothing("flagged for review: decide by hand (approve, or discard and reject on Prolific)"),
        Decision::Wait => nothing("still working"),
        Decision::None => nothing("returned or told the study was full: nothing to decide"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SubmissionStatus as S;

    fn person(status: &'static str, decision: Decision, prolific: Option<S>) -> Person<'static> {
        Person { status, decision, flags: &[], prolific, return_requested: false }
    }

    #[test]
    fn default_messages_are_long_enough_and_categories_known() {
        for f in FLAGS {
            assert!(default_message(f).chars().count() >= super::super::spec::MIN_REJECTION_MESSAGE, "{f}");
            assert!(["FAILED_CHECK", "TOO_QUICKLY", "LOW_EFFORT"].contains(&category(f)));
        }
    }

    #[test]
    fn comprehension_failures_are_asked_to_return_never_rejected() {
        // The approve list's `none` for one screened out holding no place; anything for one told it was full.
        let cases = [("screened_out", Decision::None)].into_iter().chain(
            [Decision::Approve, Decision::Reject, Decision::Review, Decision::Wait, Decision::None]
                .map(|d| ("full_after_comprehension", d)),
        );
        for (status, decision) in cases {
            for prolific in [S::AwaitingReview, S::Active, S::Reserved] {
                let a = decide(&person(status, decision, Some(prolific)), &BTreeMap::new());
                assert!(matches!(a, Action::RequestReturn { .. }), "{status} {decision:?}: {a:?}");
            }
            let mut p = person(status, decision, Some(S::AwaitingReview));
            p.return_requested = true;
            assert!(matches!(decide(&p, &BTreeMap::new()), Action::Nothing { .. }));
        }
    }

    #[test]
    fn attention_screen_outs_follow_the_approve_list() {
        let (m, flags) = (BTreeMap::new(), ["failed_check".to_string()]);
        let screened = |decision| Person { flags: &flags, ..person("screened_out", decision, Some(S::AwaitingReview)) };
        assert!(
            matches!(decide(&screened(Decision::Reject), &m), Action::Reject { category, .. } if category == "FAILED_CHECK")
        );
        // A study under 5 minutes: the list says review, and nothing is sent.
        assert!(matches!(decide(&screened(Decision::Review), &m), Action::Nothing { .. }));
    }

    #[test]
    fn each_decision() {
        let m = BTreeMap::new();
        assert_eq!(decide(&person("completed", Decision::Approve, Some(S::AwaitingReview)), &m), Action::Approve);
        assert_eq!(
            decide(&person("completed", Decision::Approve, Some(S::Active)), &m),
            Action::Approve,
            "waits in the outbox"
        );
        let flags = ["failed_check".to_string()];
        let p = Person { flags: &flags, ..person("completed", Decision::Reject, Some(S::AwaitingReview)) };
        match decide(&p, &m) {
            Action::Reject { category, message } => {
                assert_eq!(category, "FAILED_CHECK");
                assert_eq!(message, default_message("failed_check"));
            }
            a => panic!("{a:?}"),
        }
        // Also fast: the rejection is still for the failed checks, the only reason the list rejects.
        let both = ["too_fast".to_string(), "failed_check".to_string()];
        let fast = Person { flags: &both, ..p.clone() };
        assert!(matches!(decide(&fast, &m), Action::Reject { category, message }
            if category == "FAILED_CHECK" && message == default_message("failed_check")));
        let mine: BTreeMap<_, _> = [("failed_check".to_string(), "y".repeat(120))].into();
        assert!(matches!(decide(&p, &mine), Action::Reject { message, .. } if message == "y".repeat(120)));
        for (status, decision) in
            [("completed", Decision::Review), ("active", Decision::Wait), ("returned", Decision::None)]
        {
            assert!(matches!(decide(&person(status, decision, Some(S::AwaitingReview)), &m), Action::Nothing { .. }));
        }
        // Timed out, finished in hardneg: approved once it submits (the outbox waits); rejected the same way.
        assert_eq!(decide(&person("completed", Decision::Approve, Some(S::TimedOut)), &m), Action::Approve);
        assert!(matches!(decide(&Person { prolific: Some(S::TimedOut), ..p.clone() }, &m), Action::Reject { .. }));
        let gone = decide(&person("screened_out", Decision::None, Some(S::TimedOut)), &m);
        assert!(matches!(&gone, Action::Nothing { why } if why.contains("timed out")), "{gone:?}");
        for decided in [S::Approved, S::Rejected, S::Returned, S::ScreenedOut, S::PartiallyApproved] {
            let a = decide(&person("completed", Decision::Approve, Some(decided)), &m);
            assert!(matches!(&a, Action::Nothing { why } if why.contains("already")), "{a:?}");
        }
        assert!(matches!(decide(&person("completed", Decision::Approve, None), &m), Action::Nothing { .. }));
        assert!(matches!(
            decide(&person("completed", Decision::Reject, Some(S::Reserved)), &m),
            Action::Nothing { .. }
        ));
    }
}
