//! A stop counts only the answers that count. When a place stops counting
//! (timed out, returned, screened out, discarded), an item its answers
//! helped stop has fewer counted answers than the stop read: the stop no
//! longer stands on anything, so the item goes back to collecting.
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::AnyConnection;

/// HOOK, inside the transaction that ends counting a place (any study; a
/// fixed overlap has no items here): every stopped item with fewer counted
/// answers than its stop read is collecting again and wants as many as the
/// stop had. The freed place's replacement copy brings the missing answer,
/// and the item is decided afresh on the answers that count then (never on
/// the stale stop). Returns how many items reopened.
pub async fn reopen_lost(conn: &mut AnyConnection, study: StudyId) -> Result<u64, ServiceError> {
    let reopened = sqlx::query(
        "UPDATE adaptive_items SET state = 'collecting', wanted = answers, reason = NULL, value = NULL, posterior = NULL
         WHERE study_id = $1 AND state = 'stopped'
           AND answers > (SELECT count(*) FROM counted_answers c
                          WHERE c.study_id = $2 AND c.instance_id = adaptive_items.instance_id)",
    )
    .bind(study)
    .bind(study)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if reopened > 0 {
        tracing::info!(%study, reopened, "reopened stopped items whose answers stopped counting");
    }
    Ok(reopened)
}
