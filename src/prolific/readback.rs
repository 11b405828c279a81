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

/// The Prolific study hardneg made for this study, if one exists: named
/// `name` and sending participants to this study's own join link (`url`'s
/// origin and `/join/{token}`, a random token of this database). The name alone is
/// not enough: another database (a pilot beside production) numbers its
/// studies from 1 too, and a copied spec keeps its hash, so a second
/// installation on the same workspace would take the first one's live
/// study for its own draft (audit AX). The reference's list rows
/// (`StudyShort`) require only `id` and `name`, so a row is read in full
/// unless it shows another name, or no name and a status past a draft. A
/// list with no `results` is an error, never "no draft": that would make a
/// second one.
pub async fn find_draft(client: &Client, name: &str, url: Option<&str>) -> Result<Option<String>, ServiceError> {
    let list = client.expect("GET", "/api/v1/studies/", None).await?;
    let Some(rows) = list["results"].as_array() else {
        return Err(ServiceError::Internal("Prolific's list of studies has no `results`".into()));
    };
    let join = url.and_then(join_path);
    let ours = |study: &serde_json::Value| {
        let link = study["external_study_url"].as_str().and_then(join_path);
        join.is_some() && link == join
    };
    for s in rows {
        let Some(id) = s["id"].as_str() else { continue };
        match s["internal_name"].as_str() {
            Some(n) if n != name => continue,
            // The row shows its link: decided here, without reading it in full.
            Some(_) if s["external_study_url"].is_string() && ours(s) => return Ok(Some(id.to_string())),
            Some(_) if s["external_study_url"].is_string() => continue,
            Some(_) => {}
            None if s["status"].as_str().is_some_and(|st| st != "UNPUBLISHED") => continue,
            None => {}
        }
        let Some(detail) = client.expect_found("GET", &format!("/api/v1/studies/{id}/"), None).await? else { continue };
        let named = detail["internal_name"].as_str().is_none_or(|n| n == name);
        if named && ours(&detail) {
            return Ok(Some(id.to_string()));
        }
    }
    Ok(None)
}

/// A study link up to its `/join/{token}`, whatever its query: the origin
/// (case aside) and the token both. A copy of this database restored
/// elsewhere (staging from production's backup) holds the same tokens
/// under another origin, and must not take production's study for its
/// own lost draft (audit AY).
fn join_path(url: &str) -> Option<String> {
    let at = url.find("/join/")?;
    let rest = &url[at..];
    let end = rest[6..].find(['/', '?', '#']).map_or(rest.len(), |e| e + 6);
    (end > 6).then(|| format!("{}{}", url[..at].to_ascii_lowercase(), &rest[..end]))
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
        Remote::BonusPay { bulk_id, round, bonuses, seen_before } => {
            bonus_paid(client, r, (bulk_id, round), bonuses, seen_before.as_deref()).await?
        }
    };
    Ok(found.map(Found::from))
}

/// Bonuses of `cents` among a submission's `bonus_payments` (pence /
/// cents, the reference's `SubmissionDetail`; read as money, a 1p bonus
/// would stand for a 1.00 one). None: Prolific left them out (optional).
fn of_amount(detail: &serde_json::Value, cents: u64) -> Option<i64> {
    let payments = detail["bonus_payments"].as_array()?;
    Some(payments.iter().filter(|v| v.as_f64().is_some_and(|a| (a - cents as f64).abs() < 0.5)).count() as i64)
}

/// A pay's row as it is about to be sent: with the bonuses of its amount
/// each submission shows now (no other pay of that amount to it is in
/// doubt then, `outbox::bonus_in_doubt`), stored before the send. Read
/// again before every send, not only the first: a pay throttled (or found
/// absent) and sent later must not count a bonus another round paid
/// meanwhile as its own (audit AY). None: not read (Prolific did not
/// answer), or another sender moved the row first; so not sent yet. Any
/// other row as it is.
pub(super) async fn bonuses_before(client: &Client, r: &Row) -> Result<Option<Row>, ServiceError> {
    let Remote::BonusPay { bulk_id, round, bonuses, .. } = &r.remote else { return Ok(Some(r.clone())) };
    let mut seen = Vec::with_capacity(bonuses.len());
    for (sub, cents) in bonuses {
        match get(client, &format!("/api/v1/submissions/{sub}/")).await {
            Ok(reply) if reply.ok() => seen.push(of_amount(&reply.body, *cents)),
            _ => return Ok(None),
        }
    }
    let (bulk_id, round, bonuses) = (bulk_id.clone(), round.clone(), bonuses.clone());
    let remote = Remote::BonusPay { bulk_id, round, bonuses, seen_before: Some(seen) };
    // Only over the row as read, still not sent: another server's read
    // after its send would count that pay as paid before. The payload is
    // matched whole (a round's own name may contain any text), the tries
    // too (a send throttled meanwhile leaves the payload as it was).
    let stored = sqlx::query(
        "UPDATE prolific_outbox SET payload = $1 WHERE id = $2 AND state = 'pending' AND payload = $3 AND attempts = $4",
    )
    .bind(serde_json::to_string(&remote)?)
    .bind(r.id)
    .bind(serde_json::to_string(&r.remote)?)
    .bind(r.attempts)
    .execute(client.db())
    .await?;
    Ok((stored.rows_affected() == 1).then(|| Row { remote, ..r.clone() }))
}

/// A pay whose answer was lost: every submission's bonus payments are read
/// back. Paid everywhere: applied. Paid nowhere once Prolific's
/// asynchronous payment has had its grace period: absent (sent again).
/// Anything else: not known yet. Paid means more bonuses of the amount
/// than the submission showed before the last send (`seen_before`), or,
/// for a row stored without those, than hardneg's other rounds paid it.
async fn bonus_paid(
    client: &Client,
    r: &Row,
    (bulk_id, round): (&str, &str),
    bonuses: &[(String, u64)],
    seen_before: Option<&[Option<i64>]>,
) -> Result<Option<bool>, ServiceError> {
    let db = client.db();
    let (mut paid, mut missing) = (0, 0);
    for (i, (sub, cents)) in bonuses.iter().enumerate() {
        let reply = get(client, &format!("/api/v1/submissions/{sub}/")).await?;
        if !reply.ok() {
            return Ok(None);
        }
        // A submission that leaves its payments out says nothing of what
        // was paid, and a pay is never sent again on nothing.
        let Some(seen) = of_amount(&reply.body, *cents) else { return Ok(None) };
        let before = match seen_before.and_then(|b| b.get(i).copied().flatten()) {
            Some(before) => before,
            // Bonuses of the same amount this submission was paid in other rounds.
            None => {
                sqlx::query_scalar(
                    "SELECT count(*) FROM prolific_bonuses WHERE study_id = $1 AND submission_id = $2
                       AND amount_cents = $3 AND state = 'paid' AND NOT (bulk_id = $4 AND round = $5)",
                )
                .bind(r.study)
                .bind(sub)
                .bind(*cents as i64)
                .bind(bulk_id)
                .bind(round)
                .fetch_one(db)
                .await?
            }
        };
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

#[cfg(test)]
mod tests {
    use super::join_path;

    #[test]
    fn a_study_link_is_known_by_its_origin_and_join_path_whatever_its_query() {
        let ours = "https://a.example/join/ab12?PROLIFIC_PID={{%PROLIFIC_PID%}}";
        assert_eq!(join_path(ours).as_deref(), Some("https://a.example/join/ab12"));
        assert_eq!(join_path("HTTPS://A.example/join/ab12/"), join_path(ours));
        // A copy of the database restored elsewhere holds the same token.
        assert_ne!(join_path("https://staging.example/join/ab12"), join_path(ours));
        assert_ne!(join_path("https://a.example/join/ab123?x"), join_path(ours));
        assert_eq!(join_path("https://a.example/join/"), None);
        assert_eq!(join_path("https://a.example/take/7"), None);
    }
}
