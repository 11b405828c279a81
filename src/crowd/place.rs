//! Taking a place: the lease on the bundle that most needs a copy, the
//! participant's tasks (the bundle's items with its check items at seeded
//! positions) and its participation, all inside the caller's
//! `BEGIN IMMEDIATE` transaction taken on the writer's gate, so one
//! arrival at a time decides and no bundle gets more than its wanted copies.
use super::LinkRow;
use crate::domain::crowd::bundles::{pick_bundle, BundleLoad};
use crate::domain::crowd::checks::place_checks;
use crate::domain::crowd::lease::expires_at;
use crate::domain::ids::StudyId;
use crate::domain::ids::UserId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::ids::Flag;
use sqlx::AnyConnection;

/// Each bundle's wanted copies and places taken; `now` counts overdue active leases as free.
pub(super) async fn loads(conn: &mut AnyConnection, study: StudyId, now: i64) -> Result<Vec<BundleLoad>, ServiceError> {
    Ok(loads_and_overdue(conn, study, now).await?.0)
}

/// [`loads`], and whether any active lease of the study is overdue (one
/// statement: the check is evaluated once, not per bundle).
async fn loads_and_overdue(
    conn: &mut AnyConnection,
    study: StudyId,
    now: i64,
) -> Result<(Vec<BundleLoad>, bool), ServiceError> {
    let rows: Vec<(i64, i64, i64, Flag)> = sqlx::query_as(
        "SELECT b.bundle, b.copies_wanted,
                (SELECT count(*) FROM leases l WHERE l.study_id = b.study_id AND l.bundle = b.bundle
                   AND (l.state = 'completed' OR (l.state = 'active' AND l.expires_at > $1))),
                EXISTS (SELECT 1 FROM leases o WHERE o.study_id = $2 AND o.state = 'active' AND o.expires_at <= $1)
         FROM bundles b WHERE b.study_id = $2 ORDER BY b.bundle",
    )
    .bind(now)
    .bind(study)
    .fetch_all(&mut *conn)
    .await?;
    let overdue = rows.first().is_some_and(|r| r.3 .0);
    let loads = rows.into_iter().map(|(number, copies_wanted, taken, _)| BundleLoad { number, copies_wanted, taken });
    Ok((loads.collect(), overdue))
}

/// Reclaims overdue places, then picks the bundle for a new place (None
/// when the study is full), with the study's places. The reclaim is a
/// statement of its own only when some lease is overdue: an overdue place
/// already counts as free.
pub(super) async fn reclaim_and_pick(
    tx: &mut AnyConnection,
    study: StudyId,
    now: i64,
) -> Result<(Option<i64>, i64), ServiceError> {
    let (loads, overdue) = loads_and_overdue(tx, study, now).await?;
    if overdue {
        sqlx::query(
            "UPDATE leases SET state = 'timed_out', ended_at = $1
             WHERE study_id = $2 AND state = 'active' AND expires_at <= $3",
        )
        .bind(now)
        .bind(study)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        crate::studies::reopen::reopen_lost(&mut *tx, study).await?;
    }
    Ok((pick_bundle(&loads), crate::domain::crowd::bundles::study_places(&loads)))
}

/// Leases `bundle` to the participant and writes its tasks and participation.
pub(super) async fn take_place(
    tx: &mut AnyConnection,
    state: &AppState,
    link: &LinkRow,
    bundle: i64,
    user_id: UserId,
    now: i64,
) -> Result<(), ServiceError> {
    let study = link.study_id;
    sqlx::query(
        "INSERT INTO leases (study_id, bundle, user_id, state, leased_at, expires_at) VALUES ($1, $2, $3, 'active', $4, $5)",
    )
    .bind(study)
    .bind(bundle)
    .bind(user_id)
    .bind(now)
    .bind(expires_at(now, link.settings.time_limit_minutes))
    .execute(&mut *tx)
    .await?;
    let total = create_tasks(tx, state, link, bundle, user_id).await?;
    sqlx::query("INSERT INTO participations (study_id, user_id, total, done) VALUES ($1, $2, $3, 0)")
        .bind(study)
        .bind(user_id)
        .bind(total)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The participant's queue over its bundle and its check items; returns its length.
async fn create_tasks(
    tx: &mut AnyConnection,
    state: &AppState,
    link: &LinkRow,
    bundle: i64,
    user_id: UserId,
) -> Result<i64, ServiceError> {
    let study = link.study_id;
    let meta = crate::studies::meta::study_meta(state, study).await?;
    let read = async {
        let mut read: Vec<i64> = sqlx::query_scalar(
            "SELECT DISTINCT instance_id FROM bundle_items WHERE study_id = $1 AND bundle = $2 ORDER BY instance_id",
        )
        .bind(study)
        .bind(bundle)
        .fetch_all(&mut *tx)
        .await?;
        read.sort_unstable();
        Ok::<_, ServiceError>(read.into())
    };
    let instances = state.crowd.bundles.0.get_or_load((study, bundle), read).await?;
    let questions = meta.kind.spec().questions;
    let plan = crate::domain::crowd::bundle_queue(meta.seed, user_id.get(), questions, &instances);
    let checks = super::checks::of_bundle(tx, &meta, link, &instances, user_id).await?;
    if checks.is_empty() {
        crate::studies::queue_write::insert_tasks(tx, study, user_id, &plan).await?;
        return Ok(plan.len() as i64);
    }
    let placed = place_checks(meta.seed, user_id.get(), plan, checks, questions[0]);
    let total = placed.len() as i64;
    let (real, checks): (Vec<_>, Vec<_>) = placed.into_iter().partition(|(_, c)| c.is_none());
    let real: Vec<_> = real.into_iter().map(|(t, _)| t).collect();
    let checks: Vec<_> = checks.into_iter().filter_map(|(t, c)| Some((t, c?))).collect();
    crate::studies::queue_write::insert_tasks(tx, study, user_id, &real).await?;
    super::checks::insert_check_tasks(tx, study, user_id, &checks).await?;
    Ok(total)
}
