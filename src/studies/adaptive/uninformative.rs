//! People recognised as carrying no information (`Adaptive::ends_place`,
//! docs/study-spec.md "Adaptive overlap") get no more items. A link
//! participant's place ends where it is: its unanswered tasks are withdrawn,
//! their items wait for a follow-up bundle as if their round wanted one more
//! answer, and the lease is completed, so the participant sees its
//! completion code and is paid like anyone who finished (never a
//! rejection). An account annotator keeps the tasks it holds but is offered
//! no more. Every answer given stays stored and spent.
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::SqliteConnection;

/// Ends a link participant's active place early; whether it did. Runs in
/// the decision's transaction, under the writer's gate, before waiting
/// items are bundled.
pub(super) async fn end_place(
    tx: &mut SqliteConnection,
    study: StudyId,
    user: i64,
    now: i64,
) -> Result<bool, ServiceError> {
    let active: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM leases WHERE study_id = ? AND user_id = ? AND state = 'active'")
            .bind(study)
            .bind(user)
            .fetch_optional(&mut *tx)
            .await?;
    if active.is_none() {
        // Finished, given back or overdue: its copy is settled already.
        return Ok(false);
    }
    let open: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT t.id, t.instance_id FROM tasks t WHERE t.study_id = ? AND t.user_id = ?
           AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.task_id = t.id)",
    )
    .bind(study)
    .bind(user)
    .fetch_all(&mut *tx)
    .await?;
    if open.is_empty() {
        return Ok(false);
    }
    let tasks = serde_json::to_string(&open.iter().map(|o| o.0).collect::<Vec<_>>())?;
    let items = serde_json::to_string(&open.iter().map(|o| o.1).collect::<Vec<_>>())?;
    sqlx::query("DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(?))")
        .bind(&tasks)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE participations SET total = total - ? WHERE study_id = ? AND user_id = ?")
        .bind(open.len() as i64)
        .bind(study)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE leases SET state = 'completed', ended_at = ? WHERE study_id = ? AND user_id = ?")
        .bind(now)
        .bind(study)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    // Each withdrawn item still wants the answer it was waiting for: from
    // the next follow-up bundle (check items are not adaptive items).
    sqlx::query(
        "UPDATE adaptive_items SET state = 'waiting'
         WHERE study_id = ? AND state = 'collecting' AND instance_id IN (SELECT value FROM json_each(?))",
    )
    .bind(study)
    .bind(&items)
    .execute(&mut *tx)
    .await?;
    Ok(true)
}
