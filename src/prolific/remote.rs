//! A remote action as the outbox stores it (`prolific_outbox.payload`), and
//! the request it makes.
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Remote {
    /// POST /api/v1/studies/ (the draft); read back by its internal_name.
    CreateStudy {
        body: Value,
        internal_name: String,
    },
    /// POST /api/v1/studies/{id}/transition/: PUBLISH, PAUSE, START, STOP.
    Transition {
        action: String,
    },
    /// PATCH /api/v1/studies/{id}/ with the new total of places.
    SetPlaces {
        total: u64,
    },
    /// One id of a bulk approval.
    Approve {
        submission: String,
    },
    Reject {
        submission: String,
        category: String,
        message: String,
    },
    RequestReturn {
        submission: String,
        reason: String,
    },
    /// POST /api/v1/submissions/bonus-payments/: its answer's id is stored and its pay written.
    BonusSetup {
        round: String,
        bonuses: Vec<(String, u64)>,
    },
    /// POST /api/v1/bulk-bonus-payments/{id}/pay/: never re-sent before a read-back.
    BonusPay {
        bulk_id: String,
        round: String,
        bonuses: Vec<(String, u64)>,
        /// How many bonuses of its amount each submission showed on Prolific
        /// before the last send (None until read; an entry None where
        /// Prolific left them out): a lost pay is read back against these,
        /// so a bonus paid by hand is not taken for it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seen_before: Option<Vec<Option<i64>>>,
    },
    /// POST /api/v1/participant-groups/{id}/participants/.
    GroupAdd {
        group_id: String,
        participants: Vec<String>,
    },
}

impl Remote {
    pub fn kind(&self) -> &'static str {
        match self {
            Remote::CreateStudy { .. } => "create_study",
            Remote::Transition { .. } => "transition",
            Remote::SetPlaces { .. } => "set_places",
            Remote::Approve { .. } => "approve",
            Remote::Reject { .. } => "reject",
            Remote::RequestReturn { .. } => "request_return",
            Remote::BonusSetup { .. } => "bonus_setup",
            Remote::BonusPay { .. } => "bonus_pay",
            Remote::GroupAdd { .. } => "group_add",
        }
    }

    /// The request: method, path and body (`study` is Prolific's study id).
    pub fn request(&self, study: Option<&str>) -> Result<(&'static str, String, Option<Value>), ServiceError> {
        let need =
            || study.ok_or_else(|| ServiceError::Invalid("the study is not on Prolific yet: publish it first".into()));
        Ok(match self {
            Remote::CreateStudy { body, .. } => ("POST", "/api/v1/studies/".into(), Some(body.clone())),
            Remote::Transition { action } => {
                ("POST", format!("/api/v1/studies/{}/transition/", need()?), Some(json!({ "action": action })))
            }
            Remote::SetPlaces { total } => {
                ("PATCH", format!("/api/v1/studies/{}/", need()?), Some(json!({ "total_available_places": total })))
            }
            Remote::Approve { submission } => {
                ("POST", "/api/v1/submissions/bulk-approve/".into(), Some(json!({ "submission_ids": [submission] })))
            }
            Remote::Reject { submission, category, message } => (
                "POST",
                format!("/api/v1/submissions/{submission}/transition/"),
                Some(json!({ "action": "REJECT", "rejection_category": category, "message": message })),
            ),
            Remote::RequestReturn { submission, reason } => (
                "POST",
                format!("/api/v1/submissions/{submission}/request-return/"),
                Some(json!({ "request_return_reasons": [reason] })),
            ),
            Remote::BonusSetup { bonuses, .. } => (
                "POST",
                "/api/v1/submissions/bonus-payments/".into(),
                Some(json!({ "study_id": need()?, "csv_bonuses": bonus_csv(bonuses) })),
            ),
            Remote::BonusPay { bulk_id, .. } => ("POST", format!("/api/v1/bulk-bonus-payments/{bulk_id}/pay/"), None),
            Remote::GroupAdd { group_id, participants } => (
                "POST",
                format!("/api/v1/participant-groups/{group_id}/participants/"),
                Some(json!({ "participant_ids": participants })),
            ),
        })
    }

    pub fn submission(&self) -> Option<&str> {
        match self {
            Remote::Approve { submission } | Remote::Reject { submission, .. } => Some(submission),
            _ => None,
        }
    }
}

/// `<submission_id>,<amount>` lines, the amount in the study's currency (1.50).
pub fn bonus_csv(bonuses: &[(String, u64)]) -> String {
    bonuses.iter().map(|(s, c)| format!("{s},{}\n", crate::domain::prolific::money::cents(*c))).collect()
}
