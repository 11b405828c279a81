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
use sqlx::{AnyConnection, AnyPool};
use std::collections::HashSet;

/// Ends a link participant's active place early; whether it did. Runs in
/// the decision's transaction, under the writer's gate, before waiting
/// items are bundled.
pub(super) async fn end_place(
    tx: &mut AnyConnection,
    study: StudyId,
    user: i64,
    now: i64,
) -> Result<bool, ServiceError> {
    let active: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM leases WHERE study_id = $1 AND user_id = $2 AND state = 'active'")
            .bind(study)
            .bind(user)
            .fetch_optional(&mut *tx)
            .await?;
    if active.is_none() {
        // Finished, given back or overdue: its copy is settled already.
        return Ok(false);
    }
    // The person's unanswered tasks, named by one condition that every
    // statement below shares (it runs on both backends; no JSON lists).
    const OPEN: &str = "FROM tasks t WHERE t.study_id = $1 AND t.user_id = $2
           AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.task_id = t.id)";
    let open: i64 =
        sqlx::query_scalar(&format!("SELECT count(*) {OPEN}")).bind(study).bind(user).fetch_one(&mut *tx).await?;
    if open == 0 {
        return Ok(false);
    }
    // Each withdrawn item still wants the answer it was waiting for: from
    // the next follow-up bundle. A check task wants none: a gold item is a
    // real item of another bundle, whose round its own copies answer (an
    // audit: made waiting, it took a sixth answer where max was 5).
    sqlx::query(&format!(
        "UPDATE adaptive_items SET state = 'waiting'
         WHERE study_id = $1 AND state = 'collecting'
           AND instance_id IN (SELECT t.instance_id {OPEN} AND t.check_kind IS NULL)"
    ))
    .bind(study)
    .bind(user)
    .execute(&mut *tx)
    .await?;
    sqlx::query(&format!("DELETE FROM tasks WHERE id IN (SELECT t.id {OPEN})"))
        .bind(study)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE participations SET total = total - $1 WHERE study_id = $2 AND user_id = $3")
        .bind(open)
        .bind(study)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE leases SET state = 'completed', ended_at = $1, ended_why = 'uninformative'
         WHERE study_id = $2 AND user_id = $3",
    )
    .bind(now)
    .bind(study)
    .bind(user)
    .execute(&mut *tx)
    .await?;
    Ok(true)
}

/// The people whose place adaptive overlap ended as carrying no
/// information (the approve list's `ended = uninformative`): their answers
/// count toward no settled value, the `resolve` model's at `max` included
/// (studies::outcomes). Only those whose place was ended, as the researcher
/// sees them: the fit's own verdicts weigh inside the stop rule, and a
/// model fitted without everyone it doubts could follow a spammer in a
/// small group where the careful one looked odd.
pub async fn ended_uninformative(db: &AnyPool, study: StudyId) -> Result<HashSet<i64>, ServiceError> {
    let people: Vec<i64> =
        sqlx::query_scalar("SELECT user_id FROM leases WHERE study_id = $1 AND ended_why = 'uninformative'")
            .bind(study)
            .fetch_all(db)
            .await?;
    Ok(people.into_iter().collect())
}
