//! Prolific from hardneg (docs/prolific.md): publishing a link study,
//! syncing and reconciling its submissions, deciding and paying bonuses
//! through Prolific's API, exactly once, through a durable outbox. The pure
//! rules are in `domain::prolific`; this room does the IO, on top of
//! `crowd` and `studies`, which never name it.
pub mod actions;
pub mod bonus;
pub mod budget;
pub mod client;
pub mod config;
pub mod decide;
pub mod fake;
pub mod groups;
mod moot;
pub mod outbox;
pub mod publish;
pub mod readback;
pub mod remote;
pub mod sender;
pub mod settings;
pub mod status;
pub mod sync;
pub mod transition;
pub mod webhook;

use crate::domain::ids::StudyId;
use crate::error::ServiceError;

/// A participant's Prolific submission (`p`: its `participants` row): the
/// one Prolific lists for its PROLIFIC_PID (the URL's SESSION_ID first, if
/// Prolific lists several); before a sync lists one, the SESSION_ID, unless
/// Prolific lists that submission as someone else's, or as nobody's yet (a
/// row whose `participant_id` was never read, '': the SESSION_ID may be
/// someone else's, so only a sync that reads it links it). The SESSION_ID is only
/// what the link said: someone who opened it with another person's
/// SESSION_ID must never be decided, freed or paid on that person's
/// submission (an audit had an honest worker rejected that way).
pub(crate) const SUBMISSION_OF_P: &str = "coalesce(
    (SELECT ps.submission_id FROM prolific_submissions ps WHERE ps.study_id = p.study_id
       AND ps.participant_id = p.platform_pid AND ps.submission_id = p.platform_session),
    (SELECT min(ps.submission_id) FROM prolific_submissions ps WHERE ps.study_id = p.study_id
       AND ps.participant_id = p.platform_pid),
    CASE WHEN EXISTS (SELECT 1 FROM prolific_submissions ps
                      WHERE ps.study_id = p.study_id AND ps.submission_id = p.platform_session)
         THEN NULL ELSE p.platform_session END)";
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The client for the configured Prolific, journaling into `db`.
pub fn connect(db: &sqlx::AnyPool) -> Result<client::Client, ServiceError> {
    let config = config::required().map_err(ServiceError::Invalid)?;
    client::Client::new(config, db.clone()).map_err(ServiceError::Internal)
}

/// Syncs before a decision, so that it reads Prolific's statuses as they are
/// now: a real decision needs the token and the sync (and gets the client
/// back); a dry run syncs when it can (a read: nothing is sent) and
/// otherwise decides from the last sync, with why (the second value).
pub async fn sync_before_deciding(
    db: &sqlx::AnyPool,
    study: StudyId,
    dry_run: bool,
) -> Result<(Option<client::Client>, Option<String>), ServiceError> {
    if !dry_run {
        let client = connect(db)?;
        sync::sync(&client, study).await?;
        return Ok((Some(client), None));
    }
    let synced = match connect(db) {
        Ok(client) => sync::sync(&client, study).await.map(|_| ()),
        Err(e) => Err(e),
    };
    Ok((None, synced.err().map(|e| format!("not synced now ({e}): Prolific's statuses as last synced"))))
}

/// Wakes the server's sync loop now (a webhook, a decision written).
static WAKE: OnceLock<tokio::sync::Notify> = OnceLock::new();

pub fn wake() {
    WAKE.get_or_init(tokio::sync::Notify::new).notify_one();
}

/// The background sync's interval (`HARDNEG_PROLIFIC_SYNC_SECS`, default 60).
pub fn sync_interval() -> Duration {
    let secs = std::env::var("HARDNEG_PROLIFIC_SYNC_SECS").ok().and_then(|v| v.parse::<f64>().ok());
    // NaN and infinity are not intervals (`from_secs_f64` panics on them): the default.
    let secs = secs.filter(|s| s.is_finite()).unwrap_or(60.0);
    Duration::from_secs_f64(secs.clamp(0.05, 86_400.0))
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
            continue;
        }
        if let Err(e) = after_sync(client, study).await {
            tracing::warn!(study = s, error = %e, "following hardneg's need on Prolific");
        }
    }
    // Drafts not yet made are sent too (their study has no Prolific id yet).
    sender::run(client, None, until, Some(WAKE.get_or_init(tokio::sync::Notify::new))).await
}

/// After a sync: places raised to what hardneg still needs, or the study
/// stopped when it needs nobody more (the report's last two fields). Both
/// read one status; a study that needed places needs somebody.
pub async fn after_sync(client: &client::Client, study: StudyId) -> Result<(Option<u64>, bool), ServiceError> {
    let s = status::status(client.db(), study).await?;
    let raised = follow_need(client, study, &s).await?;
    if let Some(total) = raised {
        tracing::info!(study = study.get(), total, "places raised on Prolific (auto_increase)");
        return Ok((raised, false));
    }
    // A refused or unanswered STOP leaves its outbox row for the next round; the sync itself stands.
    let stopped = match wind_down(client, study, &s).await {
        Ok(stopped) => stopped,
        Err(e) => {
            tracing::warn!(study = study.get(), error = %e, "stopping a finished study on Prolific");
            false
        }
    };
    if stopped {
        tracing::info!(study = study.get(), "stopped on Prolific: hardneg needs nobody more");
    }
    Ok((raised, stopped))
}

/// With the spec's `auto_increase`, raises an active study's places to what
/// hardneg still needs (discarded copies, places lost to extras), never past
/// the budget cap (`increase_places` refuses); the new total, if raised. A
/// stopped (or full) study is raised too: more places make it recruit again,
/// unless the researcher's own last word was STOP (audit AY: the next sync
/// bought places and reopened it). A paused one is left to the researcher.
async fn follow_need(
    client: &client::Client,
    study: StudyId,
    s: &status::ProlificStatus,
) -> Result<Option<u64>, ServiceError> {
    let (_, _, spec) = settings::settings(client.db(), study).await?;
    if !spec.auto_increase {
        return Ok(None);
    }
    let raisable = matches!(s.status.as_deref(), Some("ACTIVE" | "COMPLETED" | "AWAITING REVIEW"))
        && !transition::stopped_by_researcher(client.db(), study).await?;
    let Some(total) = s.propose_total.filter(|_| raisable) else {
        return Ok(None);
    };
    match publish::increase_places(client, study, total).await {
        Ok(_) => Ok(Some(total)),
        // Past the cap (or refused by Prolific): the proposal stays on the status for a person.
        Err(ServiceError::Invalid(why)) => {
            tracing::info!(study = study.get(), total, why, "places not raised");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Stops an active study on Prolific once hardneg needs nobody more: its
/// link closed, or every copy completed with nobody working and no adaptive
/// item still wanting answers. Otherwise Prolific would go on handing places
/// to people who are only told the study is full. Those already in can
/// still finish, and more places make it active again (Prolific's STOP).
async fn wind_down(client: &client::Client, study: StudyId, s: &status::ProlificStatus) -> Result<bool, ServiceError> {
    let db = client.db();
    if s.status.as_deref() != Some("ACTIVE") {
        return Ok(false);
    }
    let closed = !crate::studies::link::link_of_study(db, study).await?.open;
    let undecided: i64 =
        sqlx::query_scalar("SELECT count(*) FROM adaptive_items WHERE study_id = $1 AND state <> 'stopped'")
            .bind(study)
            .fetch_one(db)
            .await?;
    let done = s.hardneg_free == 0 && s.hardneg_working == 0 && s.hardneg_completed > 0 && undecided == 0;
    if !(closed || done) {
        return Ok(false);
    }
    let read_ms = s.synced_at.unwrap_or(0).saturating_mul(1000);
    let key = match stop_key(db, study, s.places, read_ms).await? {
        Stop::Send(key) => key,
        Stop::SeenBefore => return Ok(false),
        Stop::TriedEnough => {
            tracing::warn!(
                study = study.get(),
                "active on Prolific though hardneg needs nobody: STOP sent {STOP_TRIES} times"
            );
            return Ok(false);
        }
    };
    publish::transition_as(client, study, "STOP", &key).await?;
    Ok(true)
}

enum Stop {
    Send(String),
    /// The study was read before the last STOP settled: that read says nothing of it.
    SeenBefore,
    TriedEnough,
}

/// STOPs sent at most per total of places.
const STOP_TRIES: usize = 10;

/// The STOP to send for a study seen active with `places` by a read that
/// began at `read_ms`: one per total (more places make it active again),
/// and one more each time a read that began after the last one settled
/// still finds the study active: Prolific refuses a STOP while the study is
/// AWAITING REVIEW (full, all submitted), and a return then makes it ACTIVE
/// again with the same total. Two syncs at once share the key (the outbox
/// keeps one row); at most [`STOP_TRIES`] per total.
async fn stop_key(db: &sqlx::AnyPool, study: StudyId, places: i64, read_ms: i64) -> Result<Stop, ServiceError> {
    let first = format!("transition:{study}{}{places}", transition::HARDNEG_STOP);
    let sent: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT idem_key, state, updated_at FROM prolific_outbox
         WHERE study_id = $1 AND (idem_key = $2 OR idem_key LIKE $3) ORDER BY id",
    )
    .bind(study)
    .bind(&first)
    .bind(format!("{first}:again=%"))
    .fetch_all(db)
    .await?;
    if let Some((key, _, _)) = sent.iter().find(|(_, state, _)| !matches!(state.as_str(), "done" | "failed")) {
        return Ok(Stop::Send(key.clone()));
    }
    Ok(match sent.last() {
        None => Stop::Send(first),
        Some((_, _, settled)) if *settled >= read_ms => Stop::SeenBefore,
        Some(_) if sent.len() >= STOP_TRIES => Stop::TriedEnough,
        Some(_) => Stop::Send(format!("{first}:again={}", sent.len())),
    })
}

/// The server's loop: a round every interval, or at once when woken.
/// Started only when a token is configured; a study's work resumes after a
/// restart from the outbox as written.
pub fn spawn_background(db: sqlx::AnyPool) {
    // Said once at start, as the token is: the hook refuses every delivery meanwhile.
    if let Err(e) = config::webhook_secret() {
        tracing::error!(error = %e, "Prolific webhooks refused: the webhook secret cannot be read");
    }
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
