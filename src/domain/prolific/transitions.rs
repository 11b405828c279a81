//! Prolific's study transitions, as its API reference tables them
//! (`POST /api/v1/studies/{id}/transition/`): which action applies to a
//! study in which status. hardneg reads the status before it queues a
//! PAUSE, START or STOP, so that one Prolific would refuse is told to the
//! researcher at once and leaves no failed row behind (audit AT).

/// What an action means for a study in a given status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Available: send it.
    Send,
    /// The study is already where the action leads: nothing to send.
    Already,
    /// Prolific refuses it from this status.
    Refused,
}

/// (status, action, resulting status): the reference's whole table.
const TABLE: [(&str, &str, &str); 7] = [
    ("UNPUBLISHED", "PUBLISH", "ACTIVE"),
    ("UNPUBLISHED", "SCHEDULE_PUBLISH", "SCHEDULED"),
    ("SCHEDULED", "CANCEL_PUBLISH", "UNPUBLISHED"),
    ("ACTIVE", "PAUSE", "PAUSED"),
    ("ACTIVE", "STOP", "COMPLETED"),
    ("PAUSED", "START", "ACTIVE"),
    ("PAUSED", "STOP", "COMPLETED"),
];

/// The fate of `action` on a study whose status is `status` (Prolific's
/// words; an unknown status is sent, and Prolific decides).
pub fn fate(status: &str, action: &str) -> Fate {
    if !TABLE.iter().any(|(from, _, _)| *from == status) && status != "COMPLETED" && status != "AWAITING REVIEW" {
        return Fate::Send;
    }
    if TABLE.iter().any(|(from, a, _)| *from == status && *a == action) {
        return Fate::Send;
    }
    if TABLE.iter().any(|(_, a, to)| *a == action && *to == status) {
        return Fate::Already;
    }
    Fate::Refused
}

/// The statuses `action` applies to, for the refusal's message.
pub fn available_from(action: &str) -> Vec<&'static str> {
    TABLE.iter().filter(|(_, a, _)| *a == action).map(|(from, _, _)| *from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_table_decides_what_is_sent() {
        assert_eq!(fate("ACTIVE", "PAUSE"), Fate::Send);
        assert_eq!(fate("PAUSED", "START"), Fate::Send);
        assert_eq!(fate("ACTIVE", "STOP"), Fate::Send);
        assert_eq!(fate("PAUSED", "STOP"), Fate::Send);
        assert_eq!(fate("UNPUBLISHED", "PUBLISH"), Fate::Send);
        assert_eq!(fate("PAUSED", "PAUSE"), Fate::Already);
        assert_eq!(fate("ACTIVE", "START"), Fate::Already);
        assert_eq!(fate("COMPLETED", "STOP"), Fate::Already);
        assert_eq!(fate("COMPLETED", "PAUSE"), Fate::Refused);
        assert_eq!(fate("COMPLETED", "START"), Fate::Refused);
        assert_eq!(fate("AWAITING REVIEW", "PAUSE"), Fate::Refused);
        assert_eq!(fate("AWAITING REVIEW", "STOP"), Fate::Refused);
        assert_eq!(fate("UNPUBLISHED", "PAUSE"), Fate::Refused);
        assert_eq!(fate("SCHEDULED", "START"), Fate::Refused);
        // A status the reference does not table: Prolific decides.
        assert_eq!(fate("UNKNOWN", "PAUSE"), Fate::Send);
        assert_eq!(fate("PUBLISHING", "STOP"), Fate::Send);
    }

    #[test]
    fn a_refusal_names_the_statuses_the_action_needs() {
        assert_eq!(available_from("STOP"), vec!["ACTIVE", "PAUSED"]);
        assert_eq!(available_from("START"), vec!["PAUSED"]);
        assert!(available_from("NOPE").is_empty());
    }
}
