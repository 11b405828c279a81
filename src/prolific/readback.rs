//! Reading an action back when its answer was lost (a time-out, a dropped
//! connection, a sender that died): is its effect at Prolific? Only then is
//! a row marked done, or sent again.
use super::client::{now_ms, Client, Reply};
use super::outbox::Row;
use super::remote::Remote;
use crate::domain::prolific::outbox::{event_for_status, OutboxEvent};
use crate::domain::prolific::status::{decision_fate, DecisionFate, SubmissionStatus};
use crate::error::ServiceError;

/// How long an approval or rejection Prolific may still be applying is read
/// back as "not known yet" before it counts as not there (sent again).
fn decision_grace_ms() -> i64 {
    std::env::var("HARDNEG_PROLIFIC_DECISION_GRACE_SECS").ok().and_then(|v| v.parse::<i64>().ok()).unwrap_or(120) * 1000
}

pub(super) fn bonus_grace_ms() -> i64 {
    std::env::var("HARDNEG_PROLIFIC_BONUS_GRACE_SECS").ok().and_then(|v| v.parse::<i64>().ok()).unwrap_or(900) * 1000
}

/// The Prolific study whose internal_name is `name`, if one exists. The
/// reference's list rows (`StudyShort`) require only `id` and `name`, so an
/// unpublished row without its internal name is read in full, and a detail
/// without one too is matched on its `external_study_url` (`url`: hardneg's
/// link for this study, required in the reference's `Study`). A list with no
/// `results` is an error, never "no draft": that would make a second one.
pub async fn find_draft(client: &Client, name: &str, url: Option<&str>) -> Result<Option<String>, ServiceError> {
    let list = client.expect("GET", "/api/v1/studies/", None).await?;
    let Some(rows) = list["results"].as_array() else {
        return Err(ServiceError::Internal("Prolific's list of studies has no `results`".into()));
    };
    for s in rows {
        let Some(id) = s["id"].as_str() else { continue };
        match s["internal_name"].as_str() {
            Some(n) if n == name => return Ok(Some(id.to_string())),
            Some(_) => continue,
            None if s["status"].as_str().is_some_and(|st| st != "UNPUBLISHED") => continue,
            None => {}
        }
        let Some(detail) = client.expect_found("GET", &format!("/api/v1/studies/{id}/"), None).await? else { continue };
        let same = match detail["internal_name"].as_str() {
            Some(n) => n == name,
            None => url.is_some_and(|u| detail["external_study_url"].as_str() == Some(u)),
        };
        if same {
            return Ok(Some(id.to_string()));
        }
    }
    Ok(None)
}

async fn get(client: &Client, path: &str) -> Result<Reply, ServiceError> {
    client.call("GET", path, None, None).await.map_err(|e| ServiceError::internal(format!("GET {path}"), e))
}

/// What a read-back found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    Applied,
    /// Not there: it may be sent again.
    Absent,
    /// Not there, and it never can be (an approval of a returned submission).
    Moot,
}

impl From<bool> for Found {
    fn from(applied: bool) -> Found {
        if applied {
            Found::Applied
        } else {
            Found::Absent
        }
    }
}

/// The places Prolific has when `sent`, a raise of places it refused, was
/// overtaken: another sender's larger raise was applied between this one's
/// check and its call (an audit: two servers and the CLI raising at once),
/// so the study has the places and the row is done, not failed.
pub(super) async fn raise_overtaken(
    client: &Client,
    r: &Row,
    pid: Option<&str>,
    sent: &Result<Reply, super::client::NoAnswer>,
) -> Option<i64> {
    let refused = sent.as_ref().is_ok_and(|reply| event_for_status(Some(reply.status)) == OutboxEvent::Refused);
    let (true, Remote::SetPlaces { total }, Some(pid)) = (refused, &r.remote, pid) else { return None };
    let reply = get(client, &format!("/api/v1/studies/{pid}/")).await.ok().filter(Reply::ok)?;
    let places = reply.body["total_available_places"].as_f64()?;
    (places >= *total as f64).then_some(places as i64)
}

/// Whether an unconfirmed action's effect is at Prolific; None: not known yet.
pub(super) async fn read_back(client: &Client, r: &Row, pid: Option<&str>) -> Result<Option<Found>, ServiceError> {
    let submission = |id: &str| format!("/api/v1/submissions/{id}/");
    let known = |reply: &Reply| reply.ok().then_some(&reply.body).cloned();
    let found = match &r.remote {
        Remote::CreateStudy { internal_name, body } => {
            Some(find_draft(client, internal_name, body["external_study_url"].as_str()).await?.is_some())
        }
        Remote::Transition { action } => {
            let Some(pid) = pid else { return Ok(Some(Found::Absent)) };
            let Some(study) = known(&get(client, &format!("/api/v1/studies/{pid}/")).await?) else { return Ok(None) };
            // No status (or places, below) read: not known yet, never "applied" or "absent".
            let Some(status) = study["status"].as_str() else { return Ok(None) };
            Some(match action.as_str() {
                "PUBLISH" => status != "UNPUBLISHED",
                "PAUSE" => status == "PAUSED",
                "START" => status == "ACTIVE",
                // Not AWAITING REVIEW: Prolific refuses STOP there, and a return makes it ACTIVE again.
                _ => status == "COMPLETED",
            })
        }
        Remote::SetPlaces { total } => {
            let Some(pid) = pid else { return Ok(Some(Found::Absent)) };
            let Some(study) = known(&get(client, &format!("/api/v1/studies/{pid}/")).await?) else { return Ok(None) };
            let Some(places) = study["total_available_places"].as_f64() else { return Ok(None) };
            Some(places >= *total as f64)
        }
        Remote::Approve { submission: id } | Remote::Reject { submission: id, .. } => {
            let Some(s) = known(&get(client, &submission(id)).await?) else { return Ok(None) };
            let Some(status) = s["status"].as_str().map(SubmissionStatus::parse) else { return Ok(None) };
            return Ok(match decision_fate(matches!(r.remote, Remote::Approve { .. }), Some(status)) {
                DecisionFate::Applied => Some(Found::Applied),
                DecisionFate::Moot => Some(Found::Moot),
                // Prolific approves in bulk later (a 2xx "in progress"): not there
                // yet is not absent until its grace has passed (an audit counted
                // 25 bulk approvals of 3 submissions in two minutes). So for a
                // bulk approval whose answer was lost: right after, a lost
                // request and one in progress read the same (an audit saw
                // them sent twice).
                DecisionFate::Send
                    if (matches!(r.remote, Remote::Approve { .. })
                        || r.last_status.is_some_and(|s| (200..300).contains(&s)))
                        && now_ms() - r.sent_at.unwrap_or(0) < decision_grace_ms() =>
                {
                    None
                }
                DecisionFate::Wait | DecisionFate::Send => Some(Found::Absent),
            });
        }
        Remote::RequestReturn { submission: id, .. } => {
            let Some(s) = known(&get(client, &submission(id)).await?) else { return Ok(None) };
            Some(!s["return_requested"].is_null() || s["status"] == "RETURNED")
        }
        // A lost set-up is never paid: set up again. Adding to a group again changes nothing.
        Remote::BonusSetup { .. } | Remote::GroupAdd { .. } => Some(false),
        Remote::BonusPay { bulk_id, round, bonuses } => bonus_paid(client, r, bulk_id, round, bonuses).await?,
    };
    Ok(found.map(Found::from))
}

/// A pay whose answer was lost: every submission's bonus payments are read
/// back. Paid everywhere: applied. Paid nowhere once Prolific's
/// asynchronous payment has had its grace period: absent (sent again).
/// Anything else: not known yet.
async fn bonus_paid(
    client: &Client,
    r: &Row,
    bulk_id: &str,
    round: &str,
    bonuses: &[(String, u64)],
) -> Result<Option<bool>, ServiceError> {
    let db = client.db();
    let (mut paid, mut missing) = (0, 0);
    for (sub, cents) in bonuses {
        let reply = get(client, &format!("/api/v1/submissions/{sub}/")).await?;
        if !reply.ok() {
            return Ok(None);
        }
        // In pence / cents (the reference's `SubmissionDetail.bonus_payments`):
        // read as money too, a 1p bonus would stand for a 1.00 one.
        // Optional in the reference: a submission that leaves it out says
        // nothing of what was paid, and a pay is never sent again on nothing.
        let Some(payments) = reply.body["bonus_payments"].as_array() else { return Ok(None) };
        let seen =
            payments.iter().filter(|v| v.as_f64().is_some_and(|a| (a - *cents as f64).abs() < 0.5)).count() as i64;
        // Bonuses of the same amount this submission was paid in other rounds.
        let before: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM prolific_bonuses WHERE study_id = $1 AND submission_id = $2 AND amount_cents = $3
               AND state = 'paid' AND NOT (bulk_id = $4 AND round = $5)",
        )
        .bind(r.study)
        .bind(sub)
        .bind(*cents as i64)
        .bind(bulk_id)
        .bind(round)
        .fetch_one(db)
        .await?;
        if seen > before {
            paid += 1;
        } else {
            missing += 1;
        }
    }
    Ok(if missing == 0 {
        Some(true)
    } else if paid == 0 && now_ms() - r.sent_at.unwrap_or(0) >= bonus_grace_ms() {
        Some(false)
    } else {
        None
    })
}
