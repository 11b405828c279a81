//! Arriving by link. [`preview`] only reads (what `GET /join/{token}` shows);
//! [`arrive`] is one `BEGIN IMMEDIATE` transaction: reclaim overdue leases,
//! pick the bundle, create the participant, its lease, tasks and
//! participation. One writer at a time decides, so a bundle never gets more
//! than its wanted copies however many arrive at once.
use super::{link_of_token, Arrival, LinkRow, Preview};
use crate::accounts::SessionUser;
use crate::domain::crowd::bundles::{open_places, pick_bundle, BundleLoad};
use crate::domain::crowd::ids::{participant_username, PlatformIds};
use crate::domain::crowd::lease::{expires_at, LeaseState};
use crate::domain::role::Role;
use crate::error::ServiceError;
use crate::state::AppState;
use sqlx::SqliteConnection;

/// A password hash no password verifies: not a PHC string.
const NO_PASSWORD: &str = "!participant";

/// The ids of the link's query, checked; None for an anonymous arrival the spec allows.
fn checked_ids(link: &LinkRow, ids: Option<&PlatformIds>) -> Result<Option<PlatformIds>, ServiceError> {
    match ids {
        Some(ids) => Ok(Some(ids.clone())),
        None if link.settings.allow_anonymous => Ok(None),
        None => Err(ServiceError::Invalid(
            "this link needs your participant id (PROLIFIC_PID or pid in the address)".into(),
        )),
    }
}

/// A participant already known by platform id: (user id, username, lease state).
async fn known(
    conn: &mut SqliteConnection,
    study: i64,
    pid: &str,
) -> Result<Option<(i64, String, LeaseState)>, ServiceError> {
    let row: Option<(i64, String, String)> = sqlx::query_as(
        "SELECT p.user_id, u.username, l.state FROM participants p JOIN users u ON u.id = p.user_id
         JOIN leases l ON l.user_id = p.user_id WHERE p.study_id = ? AND p.platform_pid = ?",
    )
    .bind(study)
    .bind(pid)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match row {
        Some((id, name, state)) => Some((
            id,
            name,
            LeaseState::parse(&state).ok_or_else(|| ServiceError::Internal(format!("lease state {state:?}")))?,
        )),
        None => None,
    })
}

/// Each bundle's wanted copies and places taken; `now` counts overdue active leases as free.
async fn loads(conn: &mut SqliteConnection, study: i64, now: i64) -> Result<Vec<BundleLoad>, ServiceError> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT b.bundle, b.copies_wanted,
                (SELECT count(*) FROM leases l WHERE l.study_id = b.study_id AND l.bundle = b.bundle
                   AND (l.state = 'completed' OR (l.state = 'active' AND l.expires_at > ?)))
         FROM bundles b WHERE b.study_id = ? ORDER BY b.bundle",
    )
    .bind(now)
    .bind(study)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(number, copies_wanted, taken)| BundleLoad { number, copies_wanted, taken }).collect())
}

/// What a participant who already has a lease sees.
fn again(link: &LinkRow, state: LeaseState) -> Option<Arrival> {
    match state {
        // A discarded copy was finished: its participant sees its code again.
        LeaseState::Completed | LeaseState::Extra | LeaseState::Discarded => {
            let c = link.completion();
            Some(Arrival::Finished { code: c.code, url: c.url })
        }
        LeaseState::Returned => Some(Arrival::Returned),
        LeaseState::Active | LeaseState::TimedOut => None,
    }
}

/// What `GET /join/{token}` shows for these ids; changes nothing.
pub async fn preview(state: &AppState, token: &str, ids: Option<&PlatformIds>) -> Result<Preview, ServiceError> {
    let mut conn = state.db.acquire().await?;
    let link = link_of_token(&mut *conn, token).await?;
    let ids = match ids {
        None if !link.settings.allow_anonymous => return Ok(Preview::NeedsId),
        ids => ids,
    };
    if let Some(ids) = ids {
        if let Some((_, _, lease)) = known(&mut conn, link.study_id, &ids.pid).await? {
            return Ok(match again(&link, lease) {
                Some(Arrival::Finished { code, url }) => Preview::Finished { code, url },
                Some(_) => Preview::Returned,
                None => Preview::Resume { study: link.study_id },
            });
        }
    }
    if !link.open {
        return Ok(Preview::Closed);
    }
    if open_places(&loads(&mut conn, link.study_id, state.crowd.clock.now()).await?) == 0 {
        return Ok(Preview::Full { code: link.full_code.clone() });
    }
    let study_name: String =
        sqlx::query_scalar("SELECT name FROM studies WHERE id = ?").bind(link.study_id).fetch_one(&mut *conn).await?;
    Ok(Preview::Welcome { study_name, consent: link.settings.consent.clone() })
}

/// Arrives by link with the platform's ids (None: anonymous, if the spec allows).
pub async fn arrive(state: &AppState, token: &str, ids: Option<&PlatformIds>) -> Result<Arrival, ServiceError> {
    arrive_consenting(state, token, ids, false).await
}

/// As [`arrive`]; `consented`: the join form's consent box was ticked, and
/// is recorded in the same transaction (one commit less per arrival).
pub async fn arrive_consenting(
    state: &AppState,
    token: &str,
    ids: Option<&PlatformIds>,
    consented: bool,
) -> Result<Arrival, ServiceError> {
    // Arrivals take the write lock one at a time anyway; queueing them in
    // process (with the answer writer's batches) spares SQLite's busy-wait.
    let _one_at_a_time = state.writer.exclusive().await;
    let mut tx = state.db.begin_with("BEGIN IMMEDIATE").await?;
    let link = link_of_token(&mut *tx, token).await?;
    let ids = checked_ids(&link, ids)?;
    let study = link.study_id;
    if let Some(ids) = &ids {
        if let Some((id, username, lease)) = known(&mut tx, study, &ids.pid).await? {
            if consented {
                sqlx::query("UPDATE participants SET consented_at = coalesce(consented_at, ?) WHERE user_id = ?")
                    .bind(state.crowd.clock.now())
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            return Ok(again(&link, lease).unwrap_or(Arrival::Admitted {
                user: SessionUser { id, username, role: Role::Participant },
                study,
                resumed: true,
            }));
        }
    }
    if !link.open {
        return Ok(Arrival::Closed);
    }
    let now = state.crowd.clock.now();
    sqlx::query(
        "UPDATE leases SET state = 'timed_out', ended_at = ? WHERE study_id = ? AND state = 'active' AND expires_at <= ?",
    )
    .bind(now)
    .bind(study)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let Some(bundle) = pick_bundle(&loads(&mut tx, study, now).await?) else {
        tx.commit().await?; // keeps the reclaimed leases
        return Ok(Arrival::Full { code: link.full_code.clone() });
    };
    let number: i64 = sqlx::query_scalar("SELECT coalesce(max(number), 0) + 1 FROM participants WHERE study_id = ?")
        .bind(study)
        .fetch_one(&mut *tx)
        .await?;
    let username = participant_username(study, number);
    let user_id =
        sqlx::query("INSERT INTO users (username, role, password_hash, created_at) VALUES (?, 'participant', ?, ?)")
            .bind(&username)
            .bind(NO_PASSWORD)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .last_insert_rowid();
    // Anonymous participants get an id of their own, so every row has one.
    let pid = ids.as_ref().map(|i| i.pid.clone()).unwrap_or_else(|| format!("anonymous-{number}"));
    sqlx::query(
        "INSERT INTO participants (user_id, study_id, number, platform_pid, platform_study, platform_session, arrived_at,
                                   consented_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(user_id)
    .bind(study)
    .bind(number)
    .bind(&pid)
    .bind(ids.as_ref().and_then(|i| i.study.clone()))
    .bind(ids.as_ref().and_then(|i| i.session.clone()))
    .bind(now)
    .bind(consented.then_some(now))
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO leases (study_id, bundle, user_id, state, leased_at, expires_at) VALUES (?, ?, ?, 'active', ?, ?)",
    )
    .bind(study)
    .bind(bundle)
    .bind(user_id)
    .bind(now)
    .bind(expires_at(now, link.settings.time_limit_minutes))
    .execute(&mut *tx)
    .await?;
    let total = create_tasks(&mut tx, state, study, bundle, user_id).await?;
    sqlx::query("INSERT INTO participations (study_id, user_id, total, done) VALUES (?, ?, ?, 0)")
        .bind(study)
        .bind(user_id)
        .bind(total)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Arrival::Admitted {
        user: SessionUser { id: user_id, username, role: Role::Participant },
        study,
        resumed: false,
    })
}

/// The participant's queue over its bundle; returns its length.
async fn create_tasks(
    tx: &mut SqliteConnection,
    state: &AppState,
    study: i64,
    bundle: i64,
    user_id: i64,
) -> Result<i64, ServiceError> {
    let meta = crate::studies::meta::study_meta(state, study).await?;
    let mut instances: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT instance_id FROM bundle_items WHERE study_id = ? AND bundle = ? ORDER BY instance_id",
    )
    .bind(study)
    .bind(bundle)
    .fetch_all(&mut *tx)
    .await?;
    instances.sort_unstable();
    let plan = crate::domain::crowd::bundle_queue(meta.seed, user_id, meta.kind.spec().questions, &instances);
    crate::studies::tasks::insert_tasks(tx, study, user_id, &plan).await?;
    Ok(plan.len() as i64)
}
