//! The researcher's side of a link study: its participants and bundles,
//! giving a bundle's places back, and the link itself (show, rotate, close).
use super::{link_of_study, BundleRow, LinkInfo, LinkRow, ParticipantRow, STATUS_SQL};
use crate::domain::crowd::ids::PROLIFIC_PARAMS;
use crate::domain::ids::{BundleId, StudyId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::rows::from_row;
use sqlx::AnyPool;

/// A participant's row as read; the lease state is parsed after.
struct Row {
    number: i64,
    username: String,
    bundle: Option<i64>,
    state: Option<String>,
    status: String,
    done: i64,
    total: i64,
    arrived_at: i64,
    consented_at: Option<i64>,
    expires_at: Option<i64>,
    ended_at: Option<i64>,
    gold_right: i64,
    gold_total: i64,
    checks_failed: i64,
    comprehension_attempts: i64,
    screened_out_reason: Option<String>,
    platform_pid: Option<String>,
    platform_study: Option<String>,
    platform_session: Option<String>,
}
#[rustfmt::skip]
from_row!(Row {
    number, username, bundle, state, status, done, total, arrived_at, consented_at, expires_at, ended_at, gold_right,
    gold_total, checks_failed, comprehension_attempts, screened_out_reason, platform_pid, platform_study,
    platform_session
});

/// Every participant of the study by number, with its checks; platform ids
/// (personal data) only when asked for.
pub async fn participants(
    db: &AnyPool,
    study: StudyId,
    with_platform_ids: bool,
) -> Result<Vec<ParticipantRow>, ServiceError> {
    link_of_study(db, study).await?;
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT p.number, u.username, l.bundle, l.state, {STATUS_SQL} AS status, coalesce(pa.done, 0) AS done, coalesce(pa.total, 0) AS total,
                p.arrived_at, p.consented_at, l.expires_at, l.ended_at,
                coalesce(c.gold_right, 0) AS gold_right, coalesce(c.gold_total, 0) AS gold_total,
                coalesce(c.checks_failed, 0) AS checks_failed, p.comprehension_attempts, p.screened_out_reason,
                p.platform_pid, p.platform_study, p.platform_session
         FROM participants p JOIN users u ON u.id = p.user_id LEFT JOIN leases l ON l.user_id = p.user_id
         LEFT JOIN participations pa ON pa.study_id = p.study_id AND pa.user_id = p.user_id
         LEFT JOIN (SELECT user_id, count(*) FILTER (WHERE check_kind = 'gold' AND correct = 1) AS gold_right,
                           count(*) FILTER (WHERE check_kind = 'gold') AS gold_total,
                           count(*) FILTER (WHERE check_kind = 'attention' AND correct = 0) AS checks_failed
                    FROM check_answers WHERE study_id = $1 GROUP BY user_id) c ON c.user_id = p.user_id
         WHERE p.study_id = $2 ORDER BY p.number"
    ))
    .bind(study)
    .bind(study)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|r| {
            let ids = with_platform_ids.then_some((r.platform_pid, r.platform_study, r.platform_session));
            let (platform_pid, platform_study, platform_session) = ids.unwrap_or_default();
            Ok(ParticipantRow {
                number: r.number,
                username: r.username,
                bundle: r.bundle,
                state: r.state.as_deref().map(super::lease_state).transpose()?,
                status: r.status,
                done: r.done,
                total: r.total,
                arrived_at: r.arrived_at,
                consented_at: r.consented_at,
                expires_at: r.expires_at,
                ended_at: r.ended_at,
                gold_right: r.gold_right,
                gold_total: r.gold_total,
                checks_failed: r.checks_failed,
                comprehension_attempts: r.comprehension_attempts,
                screened_out_reason: r.screened_out_reason,
                platform_pid,
                platform_study,
                platform_session,
            })
        })
        .collect()
}

/// Every bundle with its leases by state.
pub async fn bundles(db: &AnyPool, study: StudyId) -> Result<Vec<BundleRow>, ServiceError> {
    link_of_study(db, study).await?;
    Ok(sqlx::query_as::<_, BundleRow>(
        "SELECT b.bundle, (SELECT count(*) FROM bundle_items i WHERE i.study_id = b.study_id AND i.bundle = b.bundle) AS tasks,
                b.copies_wanted, b.paired,
                count(l.id) FILTER (WHERE l.state = 'active') AS active,
                count(l.id) FILTER (WHERE l.state = 'completed') AS completed,
                count(l.id) FILTER (WHERE l.state = 'timed_out') AS timed_out,
                count(l.id) FILTER (WHERE l.state = 'returned') AS returned,
                count(l.id) FILTER (WHERE l.state = 'extra') AS extra
         FROM bundles b LEFT JOIN leases l ON l.study_id = b.study_id AND l.bundle = b.bundle
         WHERE b.study_id = $1 GROUP BY b.study_id, b.bundle ORDER BY b.bundle",
    )
    .bind(study)
    .fetch_all(db)
    .await?)
}

/// Gives a bundle's held places back to the pool now, as if their time
/// had run out (e.g. Prolific reports those participants timed out). They
/// may still finish; their answers are then an extra copy. Returns how many.
pub async fn reopen(state: &AppState, study: StudyId, bundle: BundleId) -> Result<u64, ServiceError> {
    link_of_study(&state.db, study).await?;
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT bundle FROM bundles WHERE study_id = $1 AND bundle = $2")
        .bind(study)
        .bind(bundle)
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Err(ServiceError::NotFound(format!("study {study} has no bundle {bundle}")));
    }
    let ended = sqlx::query(
        "UPDATE leases SET state = 'timed_out', ended_at = $1 WHERE study_id = $2 AND bundle = $3 AND state = 'active'",
    )
    .bind(state.crowd.clock.now())
    .bind(study)
    .bind(bundle)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    tx.commit().await?;
    Ok(ended)
}

async fn info(db: &AnyPool, link: LinkRow) -> Result<LinkInfo, ServiceError> {
    let places: i64 =
        sqlx::query_scalar("SELECT CAST(coalesce(sum(copies_wanted), 0) AS BIGINT) FROM bundles WHERE study_id = $1")
            .bind(link.study_id)
            .fetch_one(db)
            .await?;
    let completion = link.completion();
    Ok(LinkInfo {
        study_id: link.study_id,
        path: format!("/join/{}", link.token),
        token: link.token,
        prolific_query: PROLIFIC_PARAMS.to_string(),
        open: link.open,
        completion_code: completion.code,
        completion_url: completion.url,
        full_code: link.full_code,
        time_limit_minutes: link.settings.time_limit_minutes,
        places,
    })
}

pub async fn link(db: &AnyPool, study: StudyId) -> Result<LinkInfo, ServiceError> {
    info(db, link_of_study(db, study).await?).await
}

/// A new token: the old link stops working at once; participants already
/// admitted keep their sessions and can still arrive again by their id.
pub async fn rotate(db: &AnyPool, study: StudyId) -> Result<LinkInfo, ServiceError> {
    link_of_study(db, study).await?;
    sqlx::query("UPDATE study_links SET token = $1 WHERE study_id = $2")
        .bind(super::setup::new_token())
        .bind(study)
        .execute(db)
        .await?;
    link(db, study).await
}

/// Stops new arrivals; participants with a place may still finish.
pub async fn close(db: &AnyPool, study: StudyId) -> Result<LinkInfo, ServiceError> {
    link_of_study(db, study).await?;
    sqlx::query("UPDATE study_links SET open = 0 WHERE study_id = $1").bind(study).execute(db).await?;
    link(db, study).await
}
