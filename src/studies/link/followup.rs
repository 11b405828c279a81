//! Adaptive overlap in link studies: items that need another answer wait
//! until a bundle's worth of them has gathered (or no participant is still
//! working), then form new bundles of one copy each, stratified as the
//! first ones were. Runs inside the answer hook's transaction
//! (`studies::adaptive::after_answer`), under the writer's gate. A
//! participant holds one lease in its study, so a follow-up bundle never
//! goes to someone who answered any of its items.
use crate::domain::adaptive::bundle_now;
use crate::domain::crowd::bundles::{make_bundles, StratItem};
use crate::domain::ids::StudyId;
use crate::domain::rng::mix;
use crate::error::ServiceError;
use sqlx::AnyConnection;

/// Bundles the study's waiting items when [`bundle_now`] says so.
pub(crate) async fn bundle_waiting(
    tx: &mut AnyConnection,
    study: StudyId,
    seed: u64,
    kind: crate::domain::survey::SurveyKind,
    now: i64,
) -> Result<(), ServiceError> {
    let waiting: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT a.instance_id, i.neg_type, i.subtype FROM adaptive_items a JOIN instances i ON i.id = a.instance_id
         WHERE a.study_id = $1 AND a.state = 'waiting' ORDER BY a.instance_id",
    )
    .bind(study)
    .fetch_all(&mut *tx)
    .await?;
    // Participants holding a live place with questions left to answer.
    let working: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM leases l WHERE l.study_id = $1 AND l.state = 'active' AND l.expires_at > $2
           AND EXISTS (SELECT 1 FROM tasks t WHERE t.study_id = l.study_id AND t.user_id = l.user_id AND t.done = 0)",
    )
    .bind(study)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let link = super::link_of_study(&mut *tx, study).await?;
    if !bundle_now(waiting.len(), working as usize, link.settings.bundle_size) {
        return Ok(());
    }
    let first: i64 = sqlx::query_scalar("SELECT coalesce(max(bundle), -1) + 1 FROM bundles WHERE study_id = $1")
        .bind(study)
        .fetch_one(&mut *tx)
        .await?;
    let items: Vec<StratItem> =
        waiting.into_iter().map(|(instance, neg_type, subtype)| StratItem { instance, neg_type, subtype }).collect();
    let bundles = make_bundles(&items, link.settings.bundle_size, 1, 0, mix(&[seed, 0x464f_4c4c, first as u64]));
    super::setup::store_bundles(tx, study, kind, &bundles, first).await?;
    sqlx::query("UPDATE adaptive_items SET state = 'collecting' WHERE study_id = $1 AND state = 'waiting'")
        .bind(study)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
