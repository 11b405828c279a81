//! The outbox's state machine: every remote action is a row written, with
//! its idempotency key, before anything is sent, and done only once
//! Prolific's answer or a read-back confirms it.
//!
//! ```text
//! Pending --claim--> Sending --2xx--------------------> Done
//!    ^                  |----4xx (not 429)------------> Failed
//!    |                  |----429 (not applied)--------> Pending (back-off)
//!    |                  |----5xx / network / time-out-> Unconfirmed (back-off)
//!    |                  '----crash (stale claim)------> Unconfirmed
//!    '--read back: not applied-- Unconfirmed --read back: applied--> Done
//! ```
//! An approval or rejection whose submission can never take it (returned,
//! screened out, decided the other way) goes from Pending or Unconfirmed to
//! Failed (`Moot`); one already as asked, from Pending to Done.
//! An `Unconfirmed` row is never sent again before a read-back says its
//! effect is not there: that is what keeps a bonus `pay` from paying twice.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboxState {
    /// Written, never sent (or known not applied): may be sent.
    Pending,
    /// Claimed by a sender; a request may be on its way.
    Sending,
    /// Sent, and the answer was lost (time-out, dropped connection, 5xx,
    /// or the sender died): read back before anything else.
    Unconfirmed,
    /// Prolific's answer or a read-back confirmed it.
    Done,
    /// Prolific refused it (4xx other than 429), with its message.
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxEvent {
    /// A sender takes the row to send it.
    Claim,
    /// A 2xx answer.
    Answered,
    /// A 4xx answer other than 429: not retried.
    Refused,
    /// 429: Prolific applied nothing; retry after the back-off.
    Throttled,
    /// 5xx, a network error or a time-out: it may have been applied.
    Lost,
    /// A row still `Sending` whose claim ran out: its sender died.
    ClaimExpired,
    /// A read-back found the effect at Prolific.
    ReadBackApplied,
    /// A read-back found no effect (for a bonus pay: also after the grace
    /// period Prolific's asynchronous payment takes).
    ReadBackAbsent,
    /// The action must wait (an approval of a submission still active).
    Wait,
    /// The action can never apply (an approval of a returned submission).
    Moot,
}

impl OutboxState {
    pub const ALL: [OutboxState; 5] =
        [OutboxState::Pending, OutboxState::Sending, OutboxState::Unconfirmed, OutboxState::Done, OutboxState::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            OutboxState::Pending => "pending",
            OutboxState::Sending => "sending",
            OutboxState::Unconfirmed => "unconfirmed",
            OutboxState::Done => "done",
            OutboxState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<OutboxState> {
        OutboxState::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Nothing more happens to the row.
    #[cfg(test)]
    pub fn is_final(self) -> bool {
        matches!(self, OutboxState::Done | OutboxState::Failed)
    }

    /// The state after `event`; None when the event cannot happen here.
    pub fn after(self, event: OutboxEvent) -> Option<OutboxState> {
        use OutboxEvent as E;
        use OutboxState as S;
        Some(match (self, event) {
            (S::Pending, E::Claim) => S::Sending,
            (S::Pending, E::Wait) => S::Pending,
            (S::Sending, E::Answered) => S::Done,
            (S::Sending, E::Refused) => S::Failed,
            (S::Sending, E::Throttled) => S::Pending,
            (S::Sending, E::Lost | E::ClaimExpired) => S::Unconfirmed,
            (S::Sending, E::Wait) => S::Pending,
            (S::Unconfirmed | S::Pending, E::ReadBackApplied) => S::Done,
            (S::Unconfirmed | S::Pending, E::Moot) => S::Failed,
            (S::Unconfirmed, E::ReadBackAbsent) => S::Pending,
            (S::Unconfirmed, E::Lost) => S::Unconfirmed,
            _ => return None,
        })
    }
}

/// What an HTTP outcome means for a sent row.
pub fn event_for_status(status: Option<u16>) -> OutboxEvent {
    match status {
        Some(200..=299) => OutboxEvent::Answered,
        Some(429) => OutboxEvent::Throttled,
        Some(400..=499) => OutboxEvent::Refused,
        // 5xx, anything odd, or no answer at all.
        _ => OutboxEvent::Lost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutboxEvent as E;
    use OutboxState as S;

    const EVENTS: [OutboxEvent; 10] = [
        E::Claim,
        E::Answered,
        E::Refused,
        E::Throttled,
        E::Lost,
        E::ClaimExpired,
        E::ReadBackApplied,
        E::ReadBackAbsent,
        E::Wait,
        E::Moot,
    ];

    #[test]
    fn every_transition() {
        let mut allowed = Vec::new();
        for s in S::ALL {
            for e in EVENTS {
                if let Some(next) = s.after(e) {
                    allowed.push((s, e, next));
                }
            }
        }
        assert_eq!(
            allowed,
            [
                (S::Pending, E::Claim, S::Sending),
                (S::Pending, E::ReadBackApplied, S::Done),
                (S::Pending, E::Wait, S::Pending),
                (S::Pending, E::Moot, S::Failed),
                (S::Sending, E::Answered, S::Done),
                (S::Sending, E::Refused, S::Failed),
                (S::Sending, E::Throttled, S::Pending),
                (S::Sending, E::Lost, S::Unconfirmed),
                (S::Sending, E::ClaimExpired, S::Unconfirmed),
                (S::Sending, E::Wait, S::Pending),
                (S::Unconfirmed, E::Lost, S::Unconfirmed),
                (S::Unconfirmed, E::ReadBackApplied, S::Done),
                (S::Unconfirmed, E::ReadBackAbsent, S::Pending),
                (S::Unconfirmed, E::Moot, S::Failed),
            ]
        );
    }

    #[test]
    fn an_unconfirmed_row_is_never_sent_before_a_read_back() {
        assert_eq!(S::Unconfirmed.after(E::Claim), None);
        // Whatever happens to a row, it reaches Sending again from Unconfirmed only through Pending,
        // and Pending only by a read-back that found nothing.
        for e in EVENTS {
            if S::Unconfirmed.after(e) == Some(S::Pending) {
                assert_eq!(e, E::ReadBackAbsent);
            }
        }
        for s in [S::Done, S::Failed] {
            assert!(s.is_final());
            assert!(EVENTS.iter().all(|&e| s.after(e).is_none()), "{s:?} is final");
        }
    }

    #[test]
    fn states_read_back_and_statuses_map() {
        for s in S::ALL {
            assert_eq!(S::parse(s.as_str()), Some(s));
        }
        assert_eq!(S::parse("sent"), None);
        assert_eq!(event_for_status(Some(200)), E::Answered);
        assert_eq!(event_for_status(Some(201)), E::Answered);
        assert_eq!(event_for_status(Some(202)), E::Answered);
        assert_eq!(event_for_status(Some(400)), E::Refused);
        assert_eq!(event_for_status(Some(401)), E::Refused);
        assert_eq!(event_for_status(Some(404)), E::Refused);
        assert_eq!(event_for_status(Some(429)), E::Throttled);
        assert_eq!(event_for_status(Some(500)), E::Lost);
        assert_eq!(event_for_status(Some(503)), E::Lost);
        assert_eq!(event_for_status(Some(302)), E::Lost);
        assert_eq!(event_for_status(None), E::Lost);
    }
}
