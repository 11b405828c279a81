//! The ids that cross service boundaries, one type each, so a study id
//! cannot be passed where a task id is wanted. Each is an `i64` row id:
//! serialised and shown as the bare number (JSON and URL paths unchanged),
//! parsed from text once at the edge with an error that names the id.
use std::fmt;
use std::str::FromStr;

/// Text that is not an id: `what` names the id, `text` is what came (cut
/// short, so a long value is not echoed whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} must be a whole number from {min} to {max}, not {text:?}", min = i64::MIN, max = i64::MAX)]
pub struct ParseIdError {
    pub what: &'static str,
    pub text: String,
}

/// Longest part of a bad value repeated in the error.
const SHOWN: usize = 40;

fn parse(what: &'static str, s: &str) -> Result<i64, ParseIdError> {
    s.parse().map_err(|_| ParseIdError { what, text: s.chars().take(SHOWN).collect() })
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            pub const fn new(id: i64) -> Self {
                $name(id)
            }

            /// The row id, for arithmetic and for code that has not got the type.
            pub const fn get(self) -> i64 {
                self.0
            }

            /// What the id is called in errors.
            pub const WHAT: &'static str = $what;
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;
            fn from_str(s: &str) -> Result<Self, ParseIdError> {
                parse($what, s).map($name)
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                $name(id)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }
    };
}

id_type!(
    /// A study (`studies.id`).
    StudyId,
    "study id"
);
id_type!(
    /// An annotator's task: one item of one study (`tasks.id`).
    TaskId,
    "task id"
);
id_type!(
    /// An item shown in a study (`instances.id`).
    InstanceId,
    "instance id"
);
id_type!(
    /// A crowd participant's arrival number within its study (`participants.number`).
    ParticipantId,
    "participant id"
);
id_type!(
    /// A crowd bundle, the items one participant is leased: its number within
    /// its study (`bundles.bundle`).
    BundleId,
    "bundle id"
);
id_type!(
    /// An imported dataset (`datasets.id`).
    DatasetId,
    "dataset id"
);
id_type!(
    /// An account: researcher, annotator, or a link study's participant (`users.id`).
    UserId,
    "user id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_parses_from_its_number_and_shows_as_it() {
        let id: StudyId = "42".parse().unwrap();
        assert_eq!(id, StudyId::new(42));
        assert_eq!(id.get(), 42);
        assert_eq!(id.to_string(), "42");
        assert_eq!("-7".parse::<TaskId>().unwrap().get(), -7);
        assert_eq!(i64::MAX.to_string().parse::<BundleId>().unwrap().get(), i64::MAX);
    }

    #[test]
    fn text_that_is_not_a_number_is_refused_naming_the_id() {
        let e = "abc".parse::<StudyId>().unwrap_err();
        assert_eq!(e, ParseIdError { what: "study id", text: "abc".into() });
        assert_eq!(
            e.to_string(),
            "study id must be a whole number from -9223372036854775808 to 9223372036854775807, not \"abc\""
        );
        for bad in ["", " 1", "1.5", "1e3", "0x10", "+"] {
            assert!(bad.parse::<InstanceId>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn a_number_out_of_range_is_refused_not_wrapped() {
        let e = "99999999999999999999".parse::<TaskId>().unwrap_err();
        assert_eq!(e.what, "task id");
        assert_eq!(e.text, "99999999999999999999");
        assert!("-9223372036854775809".parse::<DatasetId>().is_err());
    }

    #[test]
    fn a_long_bad_value_is_cut_short_in_the_error() {
        let e = "x".repeat(10_000).parse::<ParticipantId>().unwrap_err();
        assert_eq!(e.text.len(), SHOWN);
        assert_eq!(e.what, "participant id");
    }

    #[test]
    fn each_id_names_itself() {
        let whats =
            [StudyId::WHAT, TaskId::WHAT, InstanceId::WHAT, ParticipantId::WHAT, BundleId::WHAT, DatasetId::WHAT];
        assert_eq!(whats, ["study id", "task id", "instance id", "participant id", "bundle id", "dataset id"]);
    }

    #[test]
    fn json_holds_the_bare_number() {
        assert_eq!(serde_json::to_string(&TaskId::new(9)).unwrap(), "9");
        assert_eq!(serde_json::from_str::<TaskId>("9").unwrap(), TaskId::new(9));
        assert!(serde_json::from_str::<TaskId>("\"9\"").is_err());
        let ids: Vec<StudyId> = serde_json::from_str("[1,2]").unwrap();
        assert_eq!(ids, [StudyId::new(1), StudyId::new(2)]);
    }
}
