//! An item collecting its next answer in a link study that no place will
//! bring it: every bundle holding it has all its copies taken (completed, or
//! ended as uninformative with the item's task withdrawn), and no active
//! place holds an unanswered task on it. Seen once in an audit's ~30 served
//! runs (a replacement copy and a follow-up bundle both ended uninformative
//! before reaching the item, and a later screen-out reopened it): two items
//! stayed `collecting` for good and every arrival was told "full". Such an
//! item waits for a follow-up bundle, like any item that wants one more.
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::AnyConnection;

/// The stranded items of study $1 (bound four times), for a `FROM` clause.
pub(super) const STRANDED: &str = "FROM adaptive_items a
     WHERE a.study_id = $1 AND a.state = 'collecting'
       AND (SELECT count(*) FROM counted_answers c WHERE c.study_id = $2 AND c.instance_id = a.instance_id) < a.wanted
       AND NOT EXISTS (
         SELECT 1 FROM bundle_items bi JOIN bundles b ON b.study_id = bi.study_id AND b.bundle = bi.bundle
         WHERE bi.study_id = $3 AND bi.instance_id = a.instance_id
           AND (b.copies_wanted > (SELECT count(*) FROM leases l WHERE l.study_id = b.study_id AND l.bundle = b.bundle
                                    AND l.state IN ('active', 'completed'))
                OR EXISTS (SELECT 1 FROM leases l JOIN tasks t ON t.study_id = l.study_id AND t.user_id = l.user_id
                           WHERE l.study_id = b.study_id AND l.bundle = b.bundle AND l.state = 'active'
                             AND t.instance_id = a.instance_id
                             AND NOT EXISTS (SELECT 1 FROM answers x WHERE x.task_id = t.id))))
       AND EXISTS (SELECT 1 FROM study_links k WHERE k.study_id = $4)";

/// Whether the study has a stranded item (the periodic sweep's question).
pub(super) async fn any(db: &sqlx::AnyPool, study: StudyId) -> Result<bool, ServiceError> {
    let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) {STRANDED}"))
        .bind(study)
        .bind(study)
        .bind(study)
        .bind(study)
        .fetch_one(db)
        .await?;
    Ok(n > 0)
}

/// Moves the stranded items to `waiting`, for the next follow-up bundle; how many.
pub(super) async fn release(tx: &mut AnyConnection, study: StudyId) -> Result<u64, ServiceError> {
    let moved = sqlx::query(&format!(
        "UPDATE adaptive_items SET state = 'waiting'
         WHERE study_id = $5 AND instance_id IN (SELECT a.instance_id {STRANDED})"
    ))
    .bind(study)
    .bind(study)
    .bind(study)
    .bind(study)
    .bind(study)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if moved > 0 {
        tracing::warn!(%study, moved, "items collecting with no place to bring their answer now wait for a follow-up bundle");
    }
    Ok(moved)
}
