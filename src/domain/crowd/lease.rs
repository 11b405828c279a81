//! A participant's lease on a bundle and how it moves. The SQL in
//! `crowd::` writes exactly these transitions; the tests here are their spec.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseState {
    /// Working, within the time limit (or past it, but not yet reclaimed).
    Active,
    /// Every task answered while the place was still held: a counted copy.
    Completed,
    /// The time ran out and the place was given to the pool.
    TimedOut,
    /// The participant gave the study back (or the researcher reopened the bundle).
    Returned,
    /// Finished after the place was given back: kept and paid, not counted.
    Extra,
    /// A finished copy the researcher discarded (e.g. flagged as careless):
    /// its answers stay stored, marked by this state, and do not count; the
    /// place goes back to the pool.
    Discarded,
    /// Ended for failing too many attention checks: the place goes back to
    /// the pool, the answers are kept but not counted.
    ScreenedOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseEvent {
    /// The last task of the bundle has a stored answer.
    Finished,
    /// The clock passed the lease's end.
    Expired,
    /// The participant returned the study.
    Returned,
    /// The researcher gave the place back to the pool.
    Reopened,
    /// The researcher discarded a finished copy.
    Discarded,
    /// The participant failed `max_failed_checks` attention checks.
    FailedChecks,
}

impl LeaseState {
    pub const ALL: [LeaseState; 7] = [
        LeaseState::Active,
        LeaseState::Completed,
        LeaseState::TimedOut,
        LeaseState::Returned,
        LeaseState::Extra,
        LeaseState::Discarded,
        LeaseState::ScreenedOut,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::Active => "active",
            LeaseState::Completed => "completed",
            LeaseState::TimedOut => "timed_out",
            LeaseState::Returned => "returned",
            LeaseState::Extra => "extra",
            LeaseState::Discarded => "discarded",
            LeaseState::ScreenedOut => "screened_out",
        }
    }

    pub fn parse(s: &str) -> Option<LeaseState> {
        LeaseState::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Holds one of the bundle's wanted copies.
    pub fn takes_place(self) -> bool {
        matches!(self, LeaseState::Active | LeaseState::Completed)
    }

    /// Its answers enter outcomes, agreement, funnel and export.
    pub fn counted(self) -> bool {
        self.takes_place()
    }

    /// May still answer tasks: a timed-out participant may finish (and is paid).
    pub fn may_answer(self) -> bool {
        matches!(self, LeaseState::Active | LeaseState::TimedOut)
    }

    /// The state after `event`, or None when the event does not apply
    /// (the lease stays as it is).
    pub fn after(self, event: LeaseEvent) -> Option<LeaseState> {
        use LeaseEvent as E;
        use LeaseState as S;
        match (self, event) {
            (S::Active, E::Finished) => Some(S::Completed),
            (S::TimedOut, E::Finished) => Some(S::Extra),
            (S::Active, E::Expired | E::Reopened) => Some(S::TimedOut),
            (S::Active | S::TimedOut, E::Returned) => Some(S::Returned),
            // Only a finished copy is judged; an unfinished one is reopened instead.
            (S::Completed | S::Extra, E::Discarded) => Some(S::Discarded),
            // A late participant may still fail checks: it is ended all the same.
            (S::Active | S::TimedOut, E::FailedChecks) => Some(S::ScreenedOut),
            _ => None,
        }
    }
}

/// Reading a stored state; an unknown name is an error that names it.
impl TryFrom<String> for LeaseState {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        LeaseState::parse(&s).ok_or_else(|| format!("unknown lease state {s:?}"))
    }
}

/// When a lease taken at `now` ends.
pub fn expires_at(now: i64, time_limit_minutes: u32) -> i64 {
    now + i64::from(time_limit_minutes) * 60
}

/// A lease is overdue once the clock reaches its end.
pub fn overdue(expires_at: i64, now: i64) -> bool {
    now >= expires_at
}

#[cfg(test)]
mod tests {
    use super::LeaseEvent as E;
    use super::LeaseState as S;
    use super::*;

    #[test]
    fn transitions() {
        assert_eq!(S::Active.after(E::Finished), Some(S::Completed));
        assert_eq!(S::Active.after(E::Expired), Some(S::TimedOut));
        assert_eq!(S::Active.after(E::Returned), Some(S::Returned));
        assert_eq!(S::Active.after(E::Reopened), Some(S::TimedOut));
        // The timed-out participant who still finishes is an extra copy.
        assert_eq!(S::TimedOut.after(E::Finished), Some(S::Extra));
        assert_eq!(S::TimedOut.after(E::Returned), Some(S::Returned));
        assert_eq!(S::TimedOut.after(E::Expired), None);
        assert_eq!(S::Active.after(E::FailedChecks), Some(S::ScreenedOut));
        assert_eq!(S::TimedOut.after(E::FailedChecks), Some(S::ScreenedOut));
        // Ended leases stay ended.
        for s in [S::Completed, S::Returned, S::Extra, S::Discarded, S::ScreenedOut] {
            for e in [E::Finished, E::Expired, E::Returned, E::Reopened, E::FailedChecks] {
                assert_eq!(s.after(e), None, "{s:?} {e:?}");
            }
        }
        // Discarding takes a finished copy, counted or extra, and nothing else.
        assert_eq!(S::Completed.after(E::Discarded), Some(S::Discarded));
        assert_eq!(S::Extra.after(E::Discarded), Some(S::Discarded));
        for s in [S::Active, S::TimedOut, S::Returned, S::Discarded] {
            assert_eq!(s.after(E::Discarded), None, "{s:?}");
        }
    }

    #[test]
    fn only_active_and_completed_take_a_place_and_count() {
        let counted: Vec<S> = S::ALL.into_iter().filter(|s| s.counted()).collect();
        assert_eq!(counted, [S::Active, S::Completed]);
        assert!(S::ALL.iter().all(|s| s.counted() == s.takes_place()));
        let answering: Vec<S> = S::ALL.into_iter().filter(|s| s.may_answer()).collect();
        assert_eq!(answering, [S::Active, S::TimedOut]);
    }

    #[test]
    fn names_round_trip() {
        for s in S::ALL {
            assert_eq!(S::parse(s.as_str()), Some(s));
        }
        assert_eq!(S::parse("done"), None);
        assert_eq!(S::try_from("extra".to_string()), Ok(S::Extra));
        assert_eq!(S::parse("discarded"), Some(S::Discarded));
        assert!(!S::Discarded.counted() && !S::Discarded.takes_place() && !S::Discarded.may_answer());
        assert_eq!(S::try_from("screened_out".to_string()), Ok(S::ScreenedOut));
        assert_eq!(S::try_from("done".to_string()), Err("unknown lease state \"done\"".to_string()));
    }

    #[test]
    fn expiry_is_minutes_after_the_lease() {
        assert_eq!(expires_at(1000, 60), 1000 + 3600);
        assert!(!overdue(4600, 4599));
        assert!(overdue(4600, 4600));
    }
}
