//! What both answer writers share (the job, one answer's statements), and
//! the sqlx writer's batch (PostgreSQL's only: SQLite has its own writer,
//! `sqlite_writer`, so each backend runs one writer): applied in a handful of
//! statements, whatever its size, since each statement is a round trip to
//! the server (three per answer were most of the writer's time under load).
//! The rows travel as one JSON array (`json_array_elements`),
//! so the statement text (and its prepared form) is the same for every
//! batch size. SQLite's writer runs each answer's own statements in place
//! (`sqlite_writer`).
use serde_json::{json, Value};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use tokio::sync::oneshot;

#[derive(Debug, Clone)]
pub struct NewAnswer {
    pub task_id: i64,
    pub study_id: i64,
    pub user_id: i64,
    pub instance_id: i64,
    pub option_id: String,
    pub value: String,
    pub shown_order: String,
    pub elapsed_ms: i64,
    pub answered_at: i64,
    /// Which answer reached the writer first within a second: stamped by
    /// the writer as it takes the answer ([`Arrivals`]); callers give 0.
    pub arrival: i64,
    /// The checked free-text parts (field name, text), stored with the answer.
    pub texts: Vec<(&'static str, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    New,
    /// The task already had an answer; the first one stands.
    AlreadyAnswered,
    /// The task is gone: withdrawn (its place ended) before the answer
    /// reached the writer. Nothing is stored.
    Withdrawn,
}

/// The most answers one commit takes.
pub(super) const MAX_BATCH: usize = 512;

/// The writers' arrival stamps: microseconds since the Unix epoch, strictly
/// increasing within the process, so that answers within one second of
/// `answered_at` keep the order the writer took them in (`resolve = "first"`).
#[derive(Default)]
pub(super) struct Arrivals {
    last: i64,
}

impl Arrivals {
    /// Stamps a batch in the order its jobs were queued (one clock read).
    pub(super) fn stamp(&mut self, batch: &mut [Job]) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        for job in batch {
            self.last = now.max(self.last + 1);
            job.answer.arrival = self.last;
        }
    }
}

/// An answer waiting for a writer, and where its outcome goes.
pub(super) struct Job {
    pub(super) answer: NewAnswer,
    pub(super) reply: oneshot::Sender<Result<Stored, Failed>>,
}

/// A turn at writing, shared with the answer writer (`Writer::gate`).
#[derive(Clone, Default, Debug)]
pub struct WriteGate(Arc<tokio::sync::Mutex<()>>);

impl WriteGate {
    pub async fn hold(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.0.lock().await
    }

    /// [`WriteGate::hold`] from a thread outside the runtime (SQLite's writer).
    pub(super) fn blocking_hold(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.0.blocking_lock()
    }
}

// One answer's statements, as both writers run them.
pub(super) const ANSWER: &str = "INSERT INTO answers
     (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at, arrival)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (task_id) DO NOTHING";
pub(super) const ANSWER_TEXT: &str = "INSERT INTO answer_texts (task_id, field, text) VALUES ($1, $2, $3)";
pub(super) const TASK_DONE: &str = "UPDATE tasks SET done = 1, lease_until = NULL WHERE id = $1";
pub(super) const COUNTED: &str =
    "UPDATE participations SET done = done + 1 WHERE study_id = $1 AND user_id = $2 RETURNING done >= total";
/// [`COUNTED`] in two statements, for SQLite's writer, where a statement is a
/// function call: SQLite's RETURNING builds a temporary table and opens a
/// statement journal (a copy of every page the update writes).
pub(super) const COUNT_ONE: &str = "UPDATE participations SET done = done + 1 WHERE study_id = $1 AND user_id = $2";
pub(super) const ALL_DONE: &str = "SELECT done >= total FROM participations WHERE study_id = $1 AND user_id = $2";
/// A link participant's last answer ends its lease in the same commit:
/// held place -> a counted copy, given-back place -> an extra copy.
pub(super) const FINISHED_LEASE: &str =
    "UPDATE leases SET state = CASE state WHEN 'active' THEN 'completed' ELSE 'extra' END, ended_at = $1
     WHERE user_id = $2 AND state IN ('active', 'timed_out')";

/// Why an answer was not stored: one database error (sqlx's or SQLite's),
/// shared by every answer of the batch it failed.
pub(super) type Failed = Arc<dyn std::error::Error + Send + Sync>;

/// Applies every answer, in order; the first answer to a task stands, so a
/// repeat (stored before, or earlier in the batch) is `AlreadyAnswered`.
/// On error the caller rolls the batch back (nothing is left half-applied).
pub(super) async fn apply_all(conn: &mut AnyConnection, batch: &[&NewAnswer]) -> Result<Vec<Stored>, sqlx::Error> {
    let rows: Vec<Value> = batch
        .iter()
        .map(|a| {
            json!([
                a.task_id,
                a.study_id,
                a.user_id,
                a.instance_id,
                a.option_id,
                a.value,
                a.shown_order,
                a.elapsed_ms,
                a.answered_at,
                a.arrival
            ])
        })
        .collect();
    // json_array_elements walks the array in order, and a row that conflicts with one
    // inserted earlier by this very statement is skipped too.
    let inserted: HashSet<i64> = sqlx::query_scalar("INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at, arrival)
         SELECT (j->>0)::bigint, (j->>1)::bigint, (j->>2)::bigint, (j->>3)::bigint, j->>4, j->>5, j->>6,
                (j->>7)::bigint, (j->>8)::bigint, (j->>9)::bigint
         FROM json_array_elements($1::json) AS e(j)
         ON CONFLICT (task_id) DO NOTHING RETURNING task_id")
    .bind(Value::Array(rows).to_string())
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .collect();
    let mut unclaimed = inserted.clone();
    let results: Vec<Stored> = batch
        .iter()
        .map(|a| if unclaimed.remove(&a.task_id) { Stored::New } else { Stored::AlreadyAnswered })
        .collect();
    let new: Vec<&NewAnswer> =
        batch.iter().zip(&results).filter(|(_, r)| **r == Stored::New).map(|(a, _)| *a).collect();
    if new.is_empty() {
        return Ok(results);
    }
    let texts: Vec<Value> =
        new.iter().flat_map(|a| a.texts.iter().map(|(field, text)| json!([a.task_id, field, text]))).collect();
    if !texts.is_empty() {
        sqlx::query(
            "INSERT INTO answer_texts (task_id, field, text)
             SELECT (j->>0)::bigint, j->>1, j->>2 FROM json_array_elements($1::json) AS e(j)",
        )
        .bind(Value::Array(texts).to_string())
        .execute(&mut *conn)
        .await?;
    }
    let ids: Vec<i64> = new.iter().map(|a| a.task_id).collect();
    sqlx::query(
        "UPDATE tasks SET done = 1, lease_until = NULL
         WHERE id IN (SELECT value::bigint FROM json_array_elements_text($1::json))",
    )
    .bind(json!(ids).to_string())
    .execute(&mut *conn)
    .await?;
    // Per participation: how many new answers, and the last one's time.
    let mut per: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
    for a in &new {
        let e = per.entry((a.study_id, a.user_id)).or_default();
        *e = (e.0 + 1, e.1.max(a.answered_at));
    }
    let counts: Vec<Value> = per.iter().map(|((s, u), (n, _))| json!([s, u, n])).collect();
    let finished: Vec<(i64, i64, super::ids::Flag)> = sqlx::query_as(
        "UPDATE participations SET done = done + (j->>2)::bigint FROM json_array_elements($1::json) AS e(j)
         WHERE participations.study_id = (j->>0)::bigint AND participations.user_id = (j->>1)::bigint
         RETURNING participations.study_id, participations.user_id, participations.done >= participations.total",
    )
    .bind(Value::Array(counts).to_string())
    .fetch_all(&mut *conn)
    .await?;
    // A link participant's last answer ends its lease in the same commit:
    // held place -> a counted copy, given-back place -> an extra copy.
    for (study, user, _) in finished.into_iter().filter(|f| f.2 .0) {
        sqlx::query(
            "UPDATE leases SET state = CASE state WHEN 'active' THEN 'completed' ELSE 'extra' END, ended_at = $1
             WHERE user_id = $2 AND state IN ('active', 'timed_out')",
        )
        .bind(per[&(study, user)].1)
        .bind(user)
        .execute(&mut *conn)
        .await?;
    }
    Ok(results)
}

/// Task `task_id`'s answer `option` at time `at` (task 3's with two texts): the writers' tests.
#[cfg(test)]
pub(crate) fn test_answer(task_id: i64, option: &str, at: i64) -> NewAnswer {
    NewAnswer {
        task_id,
        study_id: 1,
        user_id: 1,
        instance_id: task_id,
        option_id: option.into(),
        value: option.into(),
        shown_order: "[0]".into(),
        elapsed_ms: 10,
        answered_at: at,
        arrival: 0,
        texts: if task_id == 3 {
            vec![("positive", "a \"quoted\" text".into()), ("negative", "two".into())]
        } else {
            vec![]
        },
    }
}

/// What the writers' tests read back: the answered task ids, each task's
/// `done` flag (by id), and the participation's count.
#[cfg(test)]
pub(crate) async fn written(pool: &sqlx::AnyPool) -> (Vec<i64>, Vec<i64>, i64) {
    let answered = sqlx::query_scalar("SELECT task_id FROM answers ORDER BY task_id").fetch_all(pool).await.unwrap();
    let done = sqlx::query_scalar("SELECT done FROM tasks ORDER BY id").fetch_all(pool).await.unwrap();
    let count = sqlx::query_scalar("SELECT done FROM participations").fetch_one(pool).await.unwrap();
    (answered, done, count)
}

/// Tasks 1–3 of study 1 for user 1 and their participation, without the
/// study, user and instance rows: the writers' tests. On SQLite this
/// connection's foreign keys are turned off; a PostgreSQL test database has
/// none (`test_postgres::without_foreign_keys`).
#[cfg(test)]
pub(crate) async fn bare_tasks(c: &mut sqlx::AnyConnection) {
    if !super::dialect::Backend::is_postgres(&*c) {
        sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut *c).await.unwrap();
    }
    for id in 1..=3 {
        sqlx::query(
            "INSERT INTO tasks (id, study_id, user_id, instance_id, position, seed) VALUES ($1, 1, 1, $2, $3, 0)",
        )
        .bind(id)
        .bind(id)
        .bind(id)
        .execute(&mut *c)
        .await
        .unwrap();
    }
    sqlx::query("INSERT INTO participations (study_id, user_id, total) VALUES (1, 1, 3)")
        .execute(&mut *c)
        .await
        .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_postgres;

    #[test]
    fn arrival_stamps_rise_in_queue_order_within_and_across_batches() {
        let jobs = |n: i64| -> Vec<Job> {
            (1..=n).map(|t| Job { answer: test_answer(t, "A", 7), reply: oneshot::channel().0 }).collect()
        };
        let (mut arrivals, mut one, mut two) = (Arrivals::default(), jobs(3), jobs(2));
        arrivals.stamp(&mut one);
        arrivals.stamp(&mut two);
        let stamps: Vec<i64> = one.iter().chain(&two).map(|j| j.answer.arrival).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
        let now = crate::store::db::now_secs() * 1_000_000;
        assert!((stamps[0] - now).abs() < 5_000_000, "microseconds since the epoch: {stamps:?}");
    }

    #[tokio::test]
    async fn a_batch_stores_first_answers_counts_them_and_ends_a_finished_lease() {
        let Some((pool, _)) = test_postgres::database().await else { return };
        test_postgres::without_foreign_keys(&pool).await;
        let mut c = pool.acquire().await.unwrap();
        bare_tasks(&mut c).await;
        sqlx::query(
            "INSERT INTO leases (study_id, bundle, user_id, state, leased_at, expires_at) VALUES (1, 0, 1, 'active', 0, 99)",
        )
        .execute(&mut *c)
        .await
        .unwrap();
        let first = [test_answer(1, "A", 5)];
        let first: Vec<&NewAnswer> = first.iter().collect();
        assert_eq!(apply_all(&mut c, &first).await.unwrap(), [Stored::New]);
        let state: (String, Option<i64>) =
            sqlx::query_as("SELECT state, ended_at FROM leases").fetch_one(&mut *c).await.unwrap();
        assert_eq!(state, ("active".to_string(), None), "not finished after one of three");

        // Task 1 again (stored before), 2 twice in the batch (the first stands), 3 with its text.
        let batch = [test_answer(1, "B", 6), test_answer(2, "C", 7), test_answer(2, "D", 8), test_answer(3, "A", 9)];
        let batch: Vec<&NewAnswer> = batch.iter().collect();
        let got = apply_all(&mut c, &batch).await.unwrap();
        assert_eq!(got, [Stored::AlreadyAnswered, Stored::New, Stored::AlreadyAnswered, Stored::New]);
        let stored: Vec<(i64, String, i64)> =
            sqlx::query_as("SELECT task_id, option_id, answered_at FROM answers ORDER BY task_id")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        assert_eq!(stored, [(1, "A".into(), 5), (2, "C".into(), 7), (3, "A".into(), 9)]);
        let texts: Vec<(i64, String, String)> =
            sqlx::query_as("SELECT task_id, field, text FROM answer_texts ORDER BY field DESC")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        assert_eq!(texts, [(3, "positive".into(), "a \"quoted\" text".into()), (3, "negative".into(), "two".into())]);
        let done: Vec<i64> = sqlx::query_scalar("SELECT done FROM tasks ORDER BY id").fetch_all(&mut *c).await.unwrap();
        assert_eq!(done, [1, 1, 1]);
        let count: i64 = sqlx::query_scalar("SELECT done FROM participations").fetch_one(&mut *c).await.unwrap();
        assert_eq!(count, 3, "each new answer counted once");
        let state: (String, Option<i64>) =
            sqlx::query_as("SELECT state, ended_at FROM leases").fetch_one(&mut *c).await.unwrap();
        assert_eq!(state, ("completed".to_string(), Some(9)), "ended at the last answer");
    }
}
