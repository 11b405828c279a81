//! The sending loop: what is due goes out, study by study, until a deadline;
//! the server's loop and the CLI's commands both drive it.
use super::actions::process;
use super::client::{now_ms, Client};
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use std::time::{Duration, Instant};

/// Sends what is due, study by study in order of writing, until nothing is
/// due before `until` (then it waits for the next due row) or `until` passes.
pub async fn run(
    client: &Client,
    study: Option<StudyId>,
    until: Instant,
    woken: Option<&tokio::sync::Notify>,
) -> Result<(), ServiceError> {
    let db = client.db();
    loop {
        super::outbox::expire_claims(db).await?;
        let rows = super::outbox::due(db, study).await?;
        if !rows.is_empty() {
            process(client, rows).await?;
            if Instant::now() >= until {
                return Ok(());
            }
            continue;
        }
        let Some(at) = super::outbox::next_due(db, study).await? else { return Ok(()) };
        let wait = Duration::from_millis((at - now_ms()).clamp(10, 1_000) as u64);
        if Instant::now() + wait >= until {
            return Ok(());
        }
        // The server's loop waits here for rows due later; a webhook or a
        // decision wakes it to sync now (the permit is left for its loop).
        match woken {
            Some(n) => tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = n.notified() => {
                    n.notify_one();
                    return Ok(());
                }
            },
            None => tokio::time::sleep(wait).await,
        }
    }
}
