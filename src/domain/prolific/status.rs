//! Prolific's submission statuses (the reference's `SubmissionShortStatus`
//! and `SubmissionStatus`) and what each means for the hardneg participant
//! whose `SESSION_ID` it is.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SubmissionStatus {
    #[serde(rename = "RESERVED")]
    Reserved,
    #[serde(rename = "ACTIVE")]
    Active,
    #[serde(rename = "TIMED-OUT")]
    TimedOut,
    #[serde(rename = "AWAITING REVIEW")]
    AwaitingReview,
    #[serde(rename = "APPROVED")]
    Approved,
    #[serde(rename = "PARTIALLY APPROVED")]
    PartiallyApproved,
    #[serde(rename = "RETURNED")]
    Returned,
    #[serde(rename = "REJECTED")]
    Rejected,
    #[serde(rename = "SCREENED OUT")]
    ScreenedOut,
    #[serde(rename = "UNKNOWN")]
    Unknown,
}

impl SubmissionStatus {
    pub const ALL: [SubmissionStatus; 10] = [
        SubmissionStatus::Reserved,
        SubmissionStatus::Active,
        SubmissionStatus::TimedOut,
        SubmissionStatus::AwaitingReview,
        SubmissionStatus::Approved,
        SubmissionStatus::PartiallyApproved,
        SubmissionStatus::Returned,
        SubmissionStatus::Rejected,
        SubmissionStatus::ScreenedOut,
        SubmissionStatus::Unknown,
    ];

    /// As Prolific writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SubmissionStatus::Reserved => "RESERVED",
            SubmissionStatus::Active => "ACTIVE",
            SubmissionStatus::TimedOut => "TIMED-OUT",
            SubmissionStatus::AwaitingReview => "AWAITING REVIEW",
            SubmissionStatus::Approved => "APPROVED",
            SubmissionStatus::PartiallyApproved => "PARTIALLY APPROVED",
            SubmissionStatus::Returned => "RETURNED",
            SubmissionStatus::Rejected => "REJECTED",
            SubmissionStatus::ScreenedOut => "SCREENED OUT",
            SubmissionStatus::Unknown => "UNKNOWN",
        }
    }

    /// Prolific's word; an unknown word is `Unknown` (shown, never acted on).
    pub fn parse(s: &str) -> SubmissionStatus {
        SubmissionStatus::ALL.into_iter().find(|x| x.as_str() == s).unwrap_or(SubmissionStatus::Unknown)
    }

    /// Holds one of the study's places on Prolific (returned and timed-out ones gave it back).
    pub fn takes_place(self) -> bool {
        !matches!(self, SubmissionStatus::Returned | SubmissionStatus::TimedOut | SubmissionStatus::Unknown)
    }

    /// Submitted and decided: nothing more to send for it. Not a timed-out
    /// one: its participant may still finish, and a decision then applies.
    pub fn decided(self) -> bool {
        matches!(
            self,
            SubmissionStatus::Approved
                | SubmissionStatus::PartiallyApproved
                | SubmissionStatus::Rejected
                | SubmissionStatus::Returned
                | SubmissionStatus::ScreenedOut
        )
    }

    /// Paid its reward (bonuses may follow).
    pub fn paid(self) -> bool {
        matches!(self, SubmissionStatus::Approved | SubmissionStatus::PartiallyApproved)
    }
}

/// Where an approval or a rejection of a submission stands, given the
/// submission's status as last seen on Prolific.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionFate {
    /// Not submitted yet (still working, or timed out, which may still
    /// finish): sent once it is.
    Wait,
    /// Awaiting review: send it.
    Send,
    /// Already what the decision asks for.
    Applied,
    /// It can never apply (returned, screened out, decided the other way):
    /// the row ends as failed, with why, instead of being sent for ever.
    Moot,
}

/// [`DecisionFate`] of an approval (`approve`) or a rejection.
pub fn decision_fate(approve: bool, status: Option<SubmissionStatus>) -> DecisionFate {
    use SubmissionStatus as S;
    match status {
        None | Some(S::Reserved | S::Active | S::TimedOut | S::Unknown) => DecisionFate::Wait,
        Some(S::AwaitingReview) => DecisionFate::Send,
        Some(s) if approve && s.paid() => DecisionFate::Applied,
        Some(S::Rejected) if !approve => DecisionFate::Applied,
        Some(_) => DecisionFate::Moot,
    }
}

/// A group add's finishers (approved finishers join the benchmark's block
/// group) as their approvals stand: those approved join now; those whose
/// approval may still apply wait (one who never submits holds nobody else
/// up); one whose approval cannot apply (returned, say) is never blocked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupSplit {
    pub approved: Vec<String>,
    pub waiting: Vec<String>,
}

pub fn group_split(finishers: &[(String, Option<SubmissionStatus>)]) -> GroupSplit {
    let mut split = GroupSplit::default();
    for (pid, status) in finishers {
        match decision_fate(true, *status) {
            DecisionFate::Applied => split.approved.push(pid.clone()),
            DecisionFate::Moot => {}
            DecisionFate::Wait | DecisionFate::Send => split.waiting.push(pid.clone()),
        }
    }
    split
}

/// What hardneg does with its own participant when Prolific reports a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceAction {
    /// Nothing to change.
    Keep,
    /// The participant gave the study back on Prolific: its place goes back
    /// to the pool, as hardneg's own return does.
    Return,
    /// Prolific timed the participant out: the place goes back to the pool,
    /// as hardneg's lease reclaim does.
    TimeOut,
}

/// The place action for a participant whose lease is `lease` (hardneg's
/// lease word, None without a lease) and whose every answer is in (`done`).
/// A participant with every answer in keeps its copy, whatever Prolific
/// says: the answers are acknowledged and count.
pub fn place_action(prolific: SubmissionStatus, lease: Option<&str>, done: bool) -> PlaceAction {
    if done || lease != Some("active") {
        return PlaceAction::Keep;
    }
    match prolific {
        SubmissionStatus::Returned => PlaceAction::Return,
        SubmissionStatus::TimedOut => PlaceAction::TimeOut,
        _ => PlaceAction::Keep,
    }
}

/// The kinds of mismatch between Prolific and hardneg, each with what the
/// researcher should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mismatch {
    /// Awaiting review on Prolific, but no completion in hardneg.
    SubmittedWithoutCompletion,
    /// Finished in hardneg, but never submitted on Prolific.
    CompletedNotSubmitted,
    /// Finished in hardneg, then returned on Prolific, which pays nothing for it.
    CompletedThenReturned,
    /// A Prolific submission whose participant never came through the join link.
    NeverArrived,
    /// Screened out in hardneg (shown the screen-out code), still open on Prolific.
    ScreenedOutNotSubmitted,
    /// Rejected on Prolific (not by `decide`, which discards what it rejects),
    /// while its copy still counts in hardneg.
    RejectedStillCounted,
}

impl Mismatch {
    /// Its name as docs/prolific.md and the research page say it.
    pub fn words(self) -> &'static str {
        match self {
            Mismatch::SubmittedWithoutCompletion => "submitted without completion",
            Mismatch::CompletedNotSubmitted => "completed, not submitted",
            Mismatch::CompletedThenReturned => "completed, then returned",
            Mismatch::NeverArrived => "never arrived",
            Mismatch::ScreenedOutNotSubmitted => "screened out, not submitted",
            Mismatch::RejectedStillCounted => "rejected on Prolific, still counted",
        }
    }

    pub fn advice(self) -> &'static str {
        match self {
            Mismatch::SubmittedWithoutCompletion => {
                "submitted on Prolific without finishing in hardneg: check the code it entered; \
                 reject with NO_CODE / BAD_CODE only after reading its answers, or ask for a return"
            }
            Mismatch::CompletedNotSubmitted => {
                "finished in hardneg but not submitted on Prolific: message the participant to submit \
                 with the completion code (its answers count either way)"
            }
            Mismatch::CompletedThenReturned => {
                "finished in hardneg, then returned the study on Prolific, which pays nothing for a returned \
                 submission and cannot approve it: its copy is kept; pay it with a bonus (`prolific bonus --csv`), \
                 or discard the copy (`participants --discard`) if its work should not count"
            }
            Mismatch::NeverArrived => {
                "took a Prolific place but never opened the join link, or opened it when the study was full or \
                 closed (hardneg keeps no record of those): ask for a return if it submitted; Prolific times it \
                 out otherwise"
            }
            Mismatch::ScreenedOutNotSubmitted => {
                "screened out in hardneg and shown the screen-out code, but not submitted on Prolific: it is \
                 decided by the approve list once it submits; message it to submit the code, or Prolific times it out"
            }
            Mismatch::RejectedStillCounted => {
                "rejected on Prolific's site (hardneg's own rejections discard the copy), yet its answers still \
                 count in hardneg's labels and exports: discard the copy (`participants --discard`) if they should not"
            }
        }
    }
}

/// Which mismatch a pair shows: `prolific` None when hardneg's participant
/// has no submission on Prolific, `hardneg` None when no participant has
/// the submission's SESSION_ID (hardneg's word: its status as in the
/// approve list: completed, extra, discarded, active, ...;
/// `screened_out_by_comprehension` for a screen-out by the comprehension
/// check, which like `full_after_comprehension` was asked to return, so
/// an open submission is as it should be).
pub fn mismatch(prolific: Option<SubmissionStatus>, hardneg: Option<&str>) -> Option<Mismatch> {
    let finished = |s: &str| matches!(s, "completed" | "extra" | "discarded");
    // Shown a code of their own (the screen-out or the full code): `decide`
    // settles them like screen-outs, never as a missing completion.
    let turned_away =
        |s: &str| matches!(s, "screened_out" | "screened_out_by_comprehension" | "full_after_comprehension");
    match (prolific, hardneg) {
        (Some(p), None) if p != SubmissionStatus::Returned && p != SubmissionStatus::TimedOut => {
            Some(Mismatch::NeverArrived)
        }
        (Some(SubmissionStatus::AwaitingReview), Some(h)) if !finished(h) && !turned_away(h) => {
            Some(Mismatch::SubmittedWithoutCompletion)
        }
        (Some(SubmissionStatus::Active | SubmissionStatus::Reserved), Some("screened_out")) => {
            Some(Mismatch::ScreenedOutNotSubmitted)
        }
        (Some(SubmissionStatus::Active | SubmissionStatus::Reserved | SubmissionStatus::TimedOut), Some(h))
            if finished(h) =>
        {
            Some(Mismatch::CompletedNotSubmitted)
        }
        (None, Some(h)) if finished(h) => Some(Mismatch::CompletedNotSubmitted),
        // A discarded copy was settled by the researcher already.
        (Some(SubmissionStatus::Returned), Some(h)) if finished(h) && h != "discarded" => {
            Some(Mismatch::CompletedThenReturned)
        }
        (Some(SubmissionStatus::Rejected), Some("completed" | "extra")) => Some(Mismatch::RejectedStillCounted),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SubmissionStatus as S;

    #[test]
    fn a_decision_waits_for_a_submission_is_sent_once_and_ends_where_it_cannot_apply() {
        use DecisionFate as F;
        for approve in [true, false] {
            for s in [None, Some(S::Reserved), Some(S::Active), Some(S::TimedOut), Some(S::Unknown)] {
                assert_eq!(decision_fate(approve, s), F::Wait, "{s:?}");
            }
            assert_eq!(decision_fate(approve, Some(S::AwaitingReview)), F::Send);
            for s in [S::Returned, S::ScreenedOut] {
                assert_eq!(decision_fate(approve, Some(s)), F::Moot, "{s:?}");
            }
        }
        assert_eq!(decision_fate(true, Some(S::Approved)), F::Applied);
        assert_eq!(decision_fate(true, Some(S::PartiallyApproved)), F::Applied);
        assert_eq!(decision_fate(true, Some(S::Rejected)), F::Moot);
        assert_eq!(decision_fate(false, Some(S::Rejected)), F::Applied);
        assert_eq!(decision_fate(false, Some(S::Approved)), F::Moot);
    }

    #[test]
    fn a_group_add_adds_the_approved_and_keeps_waiting_only_for_those_still_open() {
        let f = |rows: &[(&str, Option<S>)]| -> Vec<(String, Option<S>)> {
            rows.iter().map(|(p, s)| (p.to_string(), *s)).collect()
        };
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let approved = f(&[("p1", Some(S::Approved)), ("p2", Some(S::Returned)), ("p3", Some(S::PartiallyApproved))]);
        assert_eq!(group_split(&approved), GroupSplit { approved: names(&["p1", "p3"]), waiting: vec![] });
        for pending in [None, Some(S::Active), Some(S::AwaitingReview), Some(S::TimedOut)] {
            let split = group_split(&f(&[("p1", Some(S::Approved)), ("p2", pending)]));
            assert_eq!(split, GroupSplit { approved: names(&["p1"]), waiting: names(&["p2"]) }, "{pending:?}");
        }
        assert_eq!(group_split(&f(&[("p1", Some(S::Rejected))])), GroupSplit::default());
    }

    #[test]
    fn every_status_reads_back_and_unknown_words_are_unknown() {
        for s in S::ALL {
            assert_eq!(S::parse(s.as_str()), s);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        assert_eq!(S::parse("PAUSED"), S::Unknown);
        assert_eq!(S::parse("approved"), S::Unknown, "Prolific's words are upper case");
    }

    #[test]
    fn places_taken_and_decided() {
        let taking: Vec<_> = S::ALL.into_iter().filter(|s| s.takes_place()).collect();
        assert_eq!(
            taking,
            [S::Reserved, S::Active, S::AwaitingReview, S::Approved, S::PartiallyApproved, S::Rejected, S::ScreenedOut]
        );
        let open: Vec<_> = S::ALL.into_iter().filter(|s| !s.decided()).collect();
        assert_eq!(open, [S::Reserved, S::Active, S::TimedOut, S::AwaitingReview, S::Unknown]);
        assert!(S::Approved.paid() && S::PartiallyApproved.paid() && !S::AwaitingReview.paid());
    }

    #[test]
    fn returns_and_time_outs_free_an_active_place_unless_every_answer_is_in() {
        for s in S::ALL {
            for lease in [None, Some("active"), Some("completed"), Some("timed_out"), Some("returned"), Some("extra")] {
                for done in [false, true] {
                    let want = match (s, lease, done) {
                        (S::Returned, Some("active"), false) => PlaceAction::Return,
                        (S::TimedOut, Some("active"), false) => PlaceAction::TimeOut,
                        _ => PlaceAction::Keep,
                    };
                    assert_eq!(place_action(s, lease, done), want, "{s:?} {lease:?} {done}");
                }
            }
        }
    }

    #[test]
    fn the_three_mismatches() {
        assert_eq!(mismatch(Some(S::AwaitingReview), None), Some(Mismatch::NeverArrived));
        assert_eq!(mismatch(Some(S::Active), None), Some(Mismatch::NeverArrived));
        assert_eq!(mismatch(Some(S::Returned), None), None);
        assert_eq!(mismatch(Some(S::TimedOut), None), None);
        assert_eq!(mismatch(Some(S::AwaitingReview), Some("active")), Some(Mismatch::SubmittedWithoutCompletion));
        assert_eq!(mismatch(Some(S::AwaitingReview), Some("returned")), Some(Mismatch::SubmittedWithoutCompletion));
        assert_eq!(mismatch(Some(S::AwaitingReview), Some("screened_out")), None, "its screen-out code");
        assert_eq!(
            mismatch(Some(S::AwaitingReview), Some("full_after_comprehension")),
            None,
            "the full code: asked to return by decide, never a missing completion"
        );
        assert_eq!(mismatch(Some(S::Active), Some("full_after_comprehension")), None, "told to return");
        assert_eq!(mismatch(Some(S::Active), Some("screened_out")), Some(Mismatch::ScreenedOutNotSubmitted));
        assert_eq!(mismatch(Some(S::Active), Some("screened_out_by_comprehension")), None, "told to return");
        assert_eq!(mismatch(Some(S::AwaitingReview), Some("screened_out_by_comprehension")), None);
        assert_eq!(mismatch(Some(S::TimedOut), Some("screened_out")), None, "Prolific closed it");
        assert_eq!(mismatch(Some(S::AwaitingReview), Some("completed")), None);
        assert_eq!(mismatch(Some(S::Active), Some("completed")), Some(Mismatch::CompletedNotSubmitted));
        assert_eq!(mismatch(Some(S::TimedOut), Some("extra")), Some(Mismatch::CompletedNotSubmitted));
        assert_eq!(mismatch(None, Some("completed")), Some(Mismatch::CompletedNotSubmitted));
        assert_eq!(mismatch(Some(S::Returned), Some("completed")), Some(Mismatch::CompletedThenReturned));
        assert_eq!(mismatch(Some(S::Returned), Some("extra")), Some(Mismatch::CompletedThenReturned));
        assert_eq!(mismatch(Some(S::Returned), Some("discarded")), None, "settled by the researcher");
        assert_eq!(mismatch(Some(S::Returned), Some("returned")), None, "gave its place back unfinished");
        assert_eq!(mismatch(Some(S::Rejected), Some("completed")), Some(Mismatch::RejectedStillCounted));
        assert_eq!(mismatch(Some(S::Rejected), Some("extra")), Some(Mismatch::RejectedStillCounted));
        assert_eq!(mismatch(Some(S::Rejected), Some("discarded")), None, "decide's rejections discard");
        assert_eq!(mismatch(Some(S::Rejected), Some("screened_out")), None, "its answers do not count");
        assert_eq!(mismatch(None, Some("active")), None);
        assert_eq!(mismatch(Some(S::Approved), Some("completed")), None);
        assert_eq!(mismatch(None, None), None);
        for m in [
            Mismatch::SubmittedWithoutCompletion,
            Mismatch::CompletedNotSubmitted,
            Mismatch::CompletedThenReturned,
            Mismatch::NeverArrived,
            Mismatch::ScreenedOutNotSubmitted,
            Mismatch::RejectedStillCounted,
        ] {
            assert!(m.advice().len() > 40);
        }
    }
}
