//! A study's transitions on Prolific (PUBLISH, PAUSE, START, STOP): checked
//! against the reference's table on the status Prolific reads, then sent
//! through the outbox and waited for.
use super::actions::{prolific_id, Remote};
use super::client::Client;
pub(super) use super::moot::{study_status, study_view};
use super::outbox::enqueue;
use super::sender::run;
use crate::domain::ids::StudyId;
use crate::domain::prolific::transitions::{available_from, fate, Fate};
use crate::error::ServiceError;
use sqlx::AnyPool;
use std::time::{Duration, Instant};

/// How long a command waits for its own outbox rows to be confirmed.
pub const COMMAND_WAIT: Duration = Duration::from_secs(60);

/// PUBLISH, PAUSE, START or STOP through the outbox; waits for its confirmation.
pub async fn transition(client: &Client, study: StudyId, action: &str) -> Result<String, ServiceError> {
    if !["PUBLISH", "PAUSE", "START", "STOP"].contains(&action) {
        return Err(ServiceError::Invalid(format!("unknown transition {action:?}")));
    }
    // A key per call: each is the researcher's latest intent and replaces
    // the older ones not sent. A key per second took a resume for the one
    // before it when both came in the same second, so a PAUSE throttled
    // between them was not replaced and paused the study later (audit AY).
    let key = format!("transition:{study}:{action}:{}:{:016x}", super::client::now_ms(), rand::random::<u64>());
    let key = if action == "PUBLISH" { format!("transition:{study}:PUBLISH") } else { key };
    transition_as(client, study, action, &key).await
}

/// [`transition`] under the caller's idempotency key (one intent, one key).
/// Returns the study's status as Prolific has it afterwards.
pub async fn transition_as(client: &Client, study: StudyId, action: &str, key: &str) -> Result<String, ServiceError> {
    let db = client.db();
    let pid = prolific_id(db, study).await?.ok_or_else(|| not_on_prolific(study))?;
    let queued: Option<String> = sqlx::query_scalar("SELECT state FROM prolific_outbox WHERE idem_key = $1")
        .bind(key)
        .fetch_optional(db)
        .await?;
    // One Prolific would refuse (or has no use for) is not queued: its row
    // would only stay failed, shown again by every later command. PUBLISH has
    // one key per study: pressed again after a refusal (the balance topped
    // up), it is sent again.
    let again = queued.as_deref() == Some("failed") && action == "PUBLISH";
    if queued.is_none() || again {
        if action != "PUBLISH" {
            in_flight_settled(db, study).await?;
        }
        let status = study_status(client, &pid).await?;
        let fate = fate(&status, action);
        if fate != Fate::Refused && action != "PUBLISH" {
            supersede(db, study, key, action).await?;
        }
        match fate {
            Fate::Send => {}
            // Kept as the researcher's word, done unsent: a STOP of a study
            // hardneg stopped already must still keep auto-increase away.
            Fate::Already if action != "PUBLISH" && !key.contains(HARDNEG_STOP) => {
                enqueue(db, study, key, &Remote::Transition { action: action.to_string() }).await?;
                sqlx::query(
                    "UPDATE prolific_outbox SET state = 'done', last_error = $1 WHERE idem_key = $2 AND state = 'pending'",
                )
                .bind(format!("not sent: the study is {status} already"))
                .bind(key)
                .execute(db)
                .await?;
                return stored_status(db, study, status).await;
            }
            Fate::Already => return stored_status(db, study, status).await,
            Fate::Refused => {
                return Err(ServiceError::Invalid(format!(
                    "{action} is not available for study {study}: it is {status} on Prolific ({action} applies to a study that is {})",
                    available_from(action).join(" or ")
                )))
            }
        }
    }
    if again {
        super::outbox::retry_failed_row(db, key).await?;
    }
    enqueue(db, study, key, &Remote::Transition { action: action.to_string() }).await?;
    match settle(client, study, key).await? {
        (s, _) if s == "done" => {
            let status = study_status(client, &pid).await?;
            stored_status(db, study, status).await
        }
        (s, e) => {
            // Not failed: still sent later, unless the researcher's next intent replaces it.
            let later = match (s.as_str(), action) {
                ("failed", _) => "",
                (_, "PUBLISH") => "; hardneg sends it once Prolific lets it",
                _ => "; hardneg sends it once Prolific lets it, unless a later pause, resume or stop replaces it",
            };
            Err(ServiceError::Invalid(format!(
                "{action} of study {study} {}: {}{later}",
                outcome_words(&s),
                e.unwrap_or_else(|| "no answer yet".into())
            )))
        }
    }
}

/// Waits (up to a few seconds) while one of the study's transitions is on
/// the wire, so that the status read next shows whether it was applied.
async fn in_flight_settled(db: &AnyPool, study: StudyId) -> Result<(), ServiceError> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let sending: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM prolific_outbox WHERE study_id = $1 AND action = 'transition' AND state = 'sending'",
        )
        .bind(study)
        .fetch_one(db)
        .await?;
        if sending == 0 || Instant::now() >= until {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The study's older PAUSE, START and STOP rows not known to be applied
/// (pending, failed, or sent with the answer lost): the researcher's latest
/// intent, weighed against the status read after them, replaces them. So a
/// PAUSE throttled before a resume cannot pause the study minutes later,
/// nor a `flush --retry-failed` revive it (audit AU), nor a PAUSE or STOP
/// whose answer was lost be read back as absent and sent after the resume
/// or pause that followed it (audit AY).
async fn supersede(db: &AnyPool, study: StudyId, key: &str, action: &str) -> Result<(), ServiceError> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT id, payload, state FROM prolific_outbox
         WHERE study_id = $1 AND action = 'transition' AND idem_key <> $2 AND state IN ('pending', 'failed', 'unconfirmed')",
    )
    .bind(study)
    .bind(key)
    .fetch_all(db)
    .await?;
    for (id, payload, state) in rows {
        let Ok(Remote::Transition { action: older }) = serde_json::from_str(&payload) else { continue };
        if older == "PUBLISH" {
            continue;
        }
        let again = if state == "unconfirmed" { " again" } else { "" };
        // Only a row not on the wire: a sender that claimed it meanwhile keeps it.
        sqlx::query(
            "UPDATE prolific_outbox SET state = 'done', last_error = $1, updated_at = $2
             WHERE id = $3 AND state IN ('pending', 'failed', 'unconfirmed')",
        )
        .bind(format!("not sent{again}: replaced by a later {action}"))
        .bind(super::client::now_ms())
        .bind(id)
        .execute(db)
        .await?;
    }
    Ok(())
}

/// What the keys of hardneg's own STOPs hold (`prolific::stop_key`).
pub(super) const HARDNEG_STOP: &str = ":STOP:places=";

/// Whether the researcher's last PAUSE, START or STOP (not hardneg's own
/// STOP once it needs nobody more, keyed [`HARDNEG_STOP`]) was a STOP, and
/// not refused: auto-increase then leaves the study stopped.
pub(super) async fn stopped_by_researcher(db: &AnyPool, study: StudyId) -> Result<bool, ServiceError> {
    let last: Option<String> = sqlx::query_scalar(
        "SELECT payload FROM prolific_outbox
         WHERE study_id = $1 AND action = 'transition' AND state <> 'failed'
           AND idem_key NOT LIKE '%:PUBLISH' AND idem_key NOT LIKE $2
         ORDER BY id DESC LIMIT 1",
    )
    .bind(study)
    .bind(format!("%{HARDNEG_STOP}%"))
    .fetch_optional(db)
    .await?;
    Ok(last
        .and_then(|p| serde_json::from_str::<Remote>(&p).ok())
        .is_some_and(|r| matches!(r, Remote::Transition { action } if action == "STOP")))
}

async fn stored_status(db: &AnyPool, study: StudyId, status: String) -> Result<String, ServiceError> {
    sqlx::query("UPDATE prolific_studies SET status = $1 WHERE study_id = $2")
        .bind(&status)
        .bind(study)
        .execute(db)
        .await?;
    Ok(status)
}

/// Runs the study's outbox until the row with `key` is done or failed, or
/// the command's wait passes; its state and Prolific's last word.
pub(super) async fn settle(
    client: &Client,
    study: StudyId,
    key: &str,
) -> Result<(String, Option<String>), ServiceError> {
    let until = Instant::now() + COMMAND_WAIT;
    loop {
        let (state, error, not_before): (String, Option<String>, i64) =
            sqlx::query_as("SELECT state, last_error, not_before FROM prolific_outbox WHERE idem_key = $1")
                .bind(key)
                .fetch_one(client.db())
                .await?;
        // Throttled past the wait (a long Retry-After): said at once, not a minute later.
        let left = until.saturating_duration_since(Instant::now()).as_millis() as i64;
        let beyond = state == "pending" && not_before > super::client::now_ms() + left;
        if state == "done" || state == "failed" || left == 0 || beyond {
            return Ok((state, error));
        }
        run(client, Some(study), (Instant::now() + Duration::from_millis(500)).min(until), None).await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(super) fn not_on_prolific(study: StudyId) -> ServiceError {
    ServiceError::Invalid(format!("study {study} is not on Prolific yet: publish it first"))
}

/// An outbox row's state in a sentence: "failed", or "is pending".
pub(super) fn outcome_words(state: &str) -> String {
    if state == "failed" {
        state.to_string()
    } else {
        format!("is {state}")
    }
}
