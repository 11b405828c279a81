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
    // A key per action and moment: pausing twice in a day is two intents; a retry of one is one.
    let key = format!("transition:{study}:{action}:{}", super::client::now_ms() / 1000);
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
        let status = study_status(client, &pid).await?;
        let fate = fate(&status, action);
        if fate != Fate::Refused && action != "PUBLISH" {
            supersede(db, study, key, action).await?;
        }
        match fate {
            Fate::Send => {}
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

/// The study's older PAUSE, START and STOP rows not sent (pending, or
/// failed): the researcher's latest intent replaces them, so a PAUSE
/// throttled before a resume cannot pause the study minutes later, nor a
/// `flush --retry-failed` revive it (audit AU).
async fn supersede(db: &AnyPool, study: StudyId, key: &str, action: &str) -> Result<(), ServiceError> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, payload FROM prolific_outbox
         WHERE study_id = $1 AND action = 'transition' AND idem_key <> $2 AND state IN ('pending', 'failed')",
    )
    .bind(study)
    .bind(key)
    .fetch_all(db)
    .await?;
    for (id, payload) in rows {
        let Ok(Remote::Transition { action: older }) = serde_json::from_str(&payload) else { continue };
        if older == "PUBLISH" {
            continue;
        }
        // Only a row still not sent: a sender that claimed it meanwhile keeps it.
        sqlx::query(
            "UPDATE prolific_outbox SET state = 'done', last_error = $1, updated_at = $2
             WHERE id = $3 AND state IN ('pending', 'failed')",
        )
        .bind(format!("not sent: replaced by a later {action}"))
        .bind(super::client::now_ms())
        .bind(id)
        .execute(db)
        .await?;
    }
    Ok(())
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
