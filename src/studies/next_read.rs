//! The `next` read: a participation's progress and its first two open tasks,
//! read in place on SQLite (`store::local_reads`), through the pool on PostgreSQL.
use crate::domain::ids::{InstanceId, StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::rows::from_row;

/// A participation's progress and its first two open tasks, in one query.
/// The one participation row drives a walk of `tasks_queue` in position
/// order, so SQLite needs no temporary table or sort (a subquery with its
/// own LIMIT cost both on every `next`; `next_read_tests.rs` checks the plan).
pub(super) const NEXT_TASKS: &str = "SELECT p.done, p.total, t.id AS task_id, t.instance_id, t.seed, t.query,
        CASE WHEN t.check_kind = 'attention' THEN t.check_answer END AS attention
    FROM participations p
    LEFT JOIN tasks t ON t.study_id = p.study_id AND t.user_id = p.user_id AND t.done = 0
    WHERE p.study_id = $1 AND p.user_id = $2 ORDER BY t.position LIMIT 2";

/// [`NEXT_TASKS`] for PostgreSQL, whose planner does not carry the index's
/// order through the join: it read every open task of the participant and
/// sorted them (1.9 ms at 5,000 tasks, most of a round trip's database
/// CPU). The LIMIT inside a LATERAL subquery reads two index entries. SQLite
/// has no LATERAL, and there the subquery form costs a temporary table and a
/// sort. Whole, not a `concat!` with [`NEXT_TASKS`]' columns, so that
/// `scripts/pg-sql-check.py` prepares it; public for the API suite's
/// `postgres_plans`, which checks its plan on a real server.
pub const NEXT_TASKS_PG: &str = "SELECT p.done, p.total, t.id AS task_id, t.instance_id, t.seed, t.query,
        CASE WHEN t.check_kind = 'attention' THEN t.check_answer END AS attention
    FROM participations p
    LEFT JOIN LATERAL (SELECT id, instance_id, seed, query, check_kind, check_answer, position FROM tasks
        WHERE study_id = p.study_id AND user_id = p.user_id AND done = 0 ORDER BY position LIMIT 2) t ON true
    WHERE p.study_id = $1 AND p.user_id = $2 ORDER BY t.position";

/// [`NEXT_TASKS`]' rows: on SQLite read in place (the round trip's one read;
/// a hand-off to sqlx's worker thread and back cost more than the read).
pub(super) async fn next_rows(state: &AppState, study_id: StudyId, user_id: i64) -> Result<Vec<NextRow>, ServiceError> {
    let Some(local) = &state.local else {
        let sql = crate::dialect!(&state.db, sqlite: NEXT_TASKS, postgres: NEXT_TASKS_PG);
        return Ok(sqlx::query_as(sql).bind(study_id).bind(user_id).fetch_all(&state.db).await?);
    };
    local
        .read(|c| {
            let mut next = c.prepare_cached(NEXT_TASKS)?;
            let rows = next.query_map((study_id.get(), user_id), NextRow::from_local)?;
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
