//! Prolific from hardneg (docs/prolific.md): publishing a link study,
//! syncing and reconciling its submissions, deciding and paying bonuses
//! through Prolific's API, exactly once, through a durable outbox. The pure
//! rules are in `domain::prolific`; this room does the IO, on top of
//! `crowd` and `studies`, which never name it.
pub mod actions;
pub mod bonus;
pub mod client;
pub mod config;
pub mod decide;
pub mod fake;
pub mod groups;
pub mod outbox;
pub mod publish;
pub mod remote;
pub mod status;
pub mod sync;
pub mod webhook;

use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The client for the configured Prolific, journaling into `db`.
pub fn connect(db: &sqlx::AnyPool) -> Result<client::Client, ServiceError> {
    let config = config::required().map_err(ServiceError::Invalid)?;
    client::Client::new(config, db.clone()).map_err(ServiceError::Internal)
}

/// Wakes the server's sync loop now (a webhook, a decision written).
static WAKE: OnceLock<tokio::sync::Notify> = OnceLock::new();

pub fn wake() {
    WAKE.get_or_init(tokio::sync::Notify::new).notify_one();
}

/// The background sync's interval (`HARDNEG_PROLIFIC_SYNC_SECS`, default 60).
pub fn sync_interval() -> Duration {
    let secs = std::env::var("HARDNEG_PROLIFIC_SYNC_SECS").ok().and_then(|v| v.parse::<f64>().ok()).unwrap_or(60.0);
    Duration::from_secs_f64(secs.max(0.05))
}

/// One round for every study on Prolific: sync, reconcile, send the outbox.
pub async fn round(client: &client::Client, until: Instant) -> Result<(), ServiceError> {
    let studies: Vec<i64> =
        sqlx::query_scalar("SELECT study_id FROM prolific_studies WHERE prolific_id IS NOT NULL ORDER BY study_id")
            .fetch_all(client.db())
            .await?;
    for s in studies {
        let study = StudyId::new(s);
        if let Err(e) = sync::sync(client, study).await {
            tracing::warn!(study = s, error = %e, "syncing a study with Prolific");
        }
    }
    // Drafts not yet made are sent too (their study has no Prolific id yet).
    actions::run(client, None, until).await
}

/// The server's loop: a round every interval, or at once when woken.
/// Started only when a token is configured; a study's work resumes after a
/// restart from the outbox as written.
pub fn spawn_background(db: sqlx::AnyPool) {
    let client = match config::from_env() {
        Ok(Some(c)) => match client::Client::new(c, db) {
            Ok(c) => c,
            Err(e) => return tracing::error!(error = %e, "Prolific sync not started"),
        },
        Ok(None) => return,
        Err(e) => return tracing::error!(error = %e, "Prolific sync not started"),
    };
    let interval = sync_interval();
    tracing::info!(base = client.base(), every_secs = interval.as_secs_f64(), "Prolific sync started");
    tokio::spawn(async move {
        let wake = WAKE.get_or_init(tokio::sync::Notify::new);
        loop {
            if let Err(e) = round(&client, Instant::now() + interval).await {
                tracing::warn!(error = %e, "a Prolific sync round");
            }
            let _ = tokio::time::timeout(interval, wake.notified()).await;
        }
    });
}
