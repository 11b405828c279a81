//! Writing a person's queue in a study: whether the study still takes a
//! newcomer, and the tasks themselves (`studies::tasks::start`, and a link
//! participant's bundle at arrival, `crowd::place`).
use crate::domain::assignment::{AssignmentRule, PlannedTask};
use crate::domain::ids::{StudyId, UserId};
use crate::error::ServiceError;
use crate::state::StudyMeta;

/// Under "all", a kind that fixes the people on every item (two experts)
/// takes no one past them: a third would reopen every item they settled.
/// Counted in the write transaction, so two newcomers cannot both pass.
pub(crate) async fn full_of_raters(tx: &mut sqlx::AnyConnection, meta: &StudyMeta) -> Result<(), ServiceError> {
    let (Some(n), AssignmentRule::EachAnnotatorAll) = (meta.kind.spec().raters, &meta.rule) else {
        return Ok(());
    };
    let started: i64 = sqlx::query_scalar("SELECT count(*) FROM participations WHERE study_id = $1")
        .bind(meta.id)
        .fetch_one(&mut *tx)
        .await?;
    match started < n as i64 {
        true => Ok(()),
        false => Err(ServiceError::Conflict(format!(
            "{} wants {n} people on every item, and {started} have started this study, so it takes no one else",
            meta.kind.name()
        ))),
    }
}

/// Writes a planned queue. Multi-row inserts: a whole queue costs a few
/// statements, not one per item, so hundreds of people can arrive at once.
pub(crate) async fn insert_tasks(
    tx: &mut sqlx::AnyConnection,
    study_id: StudyId,
    user_id: UserId,
    plan: &[PlannedTask],
) -> Result<(), ServiceError> {
    for chunk in plan.chunks(500) {
        let mut q =
            sqlx::QueryBuilder::new("INSERT INTO tasks (study_id, user_id, instance_id, position, seed, query) ");
        q.push_values(chunk, |mut row, t| {
            row.push_bind(study_id)
                .push_bind(user_id)
                .push_bind(t.item)
                .push_bind(t.position)
                .push_bind(t.seed as i64)
                .push_bind(t.query as i64);
        });
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut *tx).await?;
    }
    Ok(())
}
