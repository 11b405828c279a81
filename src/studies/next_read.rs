//! The `next` read: a participation's progress and its first two open tasks,
//! read in place on SQLite (`store::local_reads`), through the pool on PostgreSQL
//! (the statement, whose SQL differs by backend, is `store::statements::NEXT_TASKS`).
use crate::domain::ids::UserId;
use crate::domain::ids::{InstanceId, StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::rows::from_row;
use crate::store::statements::NEXT_TASKS;

/// [`NEXT_TASKS`]' rows: on SQLite read in place (the round trip's one read;
/// a hand-off to sqlx's worker thread and back cost more than the read).
pub(super) async fn next_rows(
    state: &AppState,
    study_id: StudyId,
    user_id: UserId,
) -> Result<Vec<NextRow>, ServiceError> {
    let Some(local) = &state.local else {
        let sql = NEXT_TASKS.on(&state.db);
        return Ok(sqlx::query_as(sql).bind(study_id).bind(user_id).fetch_all(&state.db).await?);
    };
    local
        .read(|c| {
            let mut next = c.prepare_cached(NEXT_TASKS.sqlite)?;
            let rows = next.query_map((study_id.get(), user_id.get()), NextRow::from_local)?;
            rows.collect()
        })
        .map_err(|e| ServiceError::internal(format!("reading the next task of study {study_id}"), e))
}

/// Progress and one open task (none when all are done), as `tasks::next_task` reads them.
pub(super) struct NextRow {
    pub(super) done: i64,
    pub(super) total: i64,
    pub(super) task_id: Option<TaskId>,
    pub(super) instance_id: Option<InstanceId>,
    pub(super) seed: Option<i64>,
    pub(super) query: Option<i64>,
    /// The value an attention check asks for.
    pub(super) attention: Option<String>,
}
from_row!(NextRow { done, total, task_id, instance_id, seed, query, attention });

/// An open task to show.
#[derive(Clone)]
pub(super) struct Queued {
    pub(super) task_id: TaskId,
    pub(super) instance_id: InstanceId,
    pub(super) seed: i64,
    pub(super) query: i64,
    pub(super) attention: Option<String>,
}

impl NextRow {
    /// By position, in [`NEXT_TASKS`]' order (a name costs a search of the
    /// column names per value).
    fn from_local(r: &rusqlite::Row<'_>) -> rusqlite::Result<NextRow> {
        Ok(NextRow {
            done: r.get(0)?,
            total: r.get(1)?,
            task_id: r.get::<_, Option<i64>>(2)?.map(TaskId::new),
            instance_id: r.get::<_, Option<i64>>(3)?.map(InstanceId::new),
            seed: r.get(4)?,
            query: r.get(5)?,
            attention: r.get(6)?,
        })
    }

    pub(super) fn queued(self) -> Option<Queued> {
        Some(Queued {
            task_id: self.task_id?,
            instance_id: self.instance_id?,
            seed: self.seed?,
            query: self.query?,
            attention: self.attention,
        })
    }
}

#[cfg(test)]
#[path = "next_read_tests.rs"]
mod tests;
