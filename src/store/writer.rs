//! The one writer of answers. Requests queue on a channel; the writer takes
//! everything queued, commits it in one transaction (one fsync) and only then
//! replies. Under load, batches grow by themselves: group commit. On SQLite
//! the writer is a thread with its own connection (`sqlite_writer`); on
//! PostgreSQL a task on sqlx's connection (below).
use sqlx::AnyConnection;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

use super::batch::{Arrivals, Failed, Job, ANSWER, ANSWER_TEXT, COUNTED, FINISHED_LEASE, MAX_BATCH, TASK_DONE};
pub use super::batch::{NewAnswer, Stored, WriteGate};

#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
    /// Held while a batch commits. Other busy writers in this process (link
    /// arrivals, session writes) take it too, so they queue here instead of in SQLite's
    /// busy handler, whose sleeps of up to 100 ms would dominate latency.
    gate: WriteGate,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the answer writer has stopped")]
    Stopped,
    #[error("storing the answer failed")]
    Db(#[source] Failed),
}

impl Writer {
    /// The writer for `location`'s database (opened and migrated already):
    /// a thread on SQLite, a reconnecting task on PostgreSQL.
    pub async fn open(location: &super::db::Location) -> anyhow::Result<Writer> {
        match location {
            super::db::Location::Sqlite(path) => {
                let (writer, rx) = Writer::queue();
                super::sqlite_writer::spawn(path, rx, writer.gate())?;
                Ok(writer)
            }
            super::db::Location::Postgres(_) => {
                Ok(Writer::spawn_reconnecting(super::db::open_writer(location).await?, location.clone()))
            }
        }
    }

    /// The sqlx writer over a PostgreSQL connection `conn` (SQLite's writer
    /// is `sqlite_writer`: each backend runs one writer).
    pub fn spawn(conn: AnyConnection) -> Writer {
        Writer::start(conn, None)
    }

    /// As [`Writer::spawn`], opening a new connection to `location` when the
    /// one it has is lost (a PostgreSQL restart or failover): the batch that
    /// met the loss fails unacknowledged, and its answers may be sent again.
    pub fn spawn_reconnecting(conn: AnyConnection, location: super::db::Location) -> Writer {
        Writer::start(conn, Some(location))
    }

    fn start(conn: AnyConnection, location: Option<super::db::Location>) -> Writer {
        assert!(super::dialect::Backend::is_postgres(&conn), "the sqlx answer writer runs on PostgreSQL only");
        let (writer, rx) = Writer::queue();
        tokio::spawn(run(conn, location, rx, writer.gate()));
        writer
    }

    /// The handle and the queue its writer (either kind) takes jobs from.
    fn queue() -> (Writer, mpsc::Receiver<Job>) {
        let (tx, rx) = mpsc::channel(8192);
        (Writer { tx, gate: WriteGate::default() }, rx)
    }

    /// Waits until no batch is committing and holds off the next one while
    /// the guard lives: for a transaction that would otherwise contend with it.
    pub async fn exclusive(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.gate.hold().await
    }

    /// The same turn, for a writer that holds no `Writer` (the session table).
    pub fn gate(&self) -> WriteGate {
        self.gate.clone()
    }

    /// Returns once the answer is committed to disk.
    pub async fn store(&self, answer: NewAnswer) -> Result<Stored, WriteError> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Job { answer, reply }).await.map_err(|_| WriteError::Stopped)?;
        let stored = rx.await.map_err(|_| WriteError::Stopped)?.map_err(WriteError::Db)?;
        super::health::write_succeeded();
        Ok(stored)
    }
}

/// Idle this long, the writer's server connection is pinged before use.
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

async fn run(
    mut conn: AnyConnection,
    location: Option<super::db::Location>,
    mut rx: mpsc::Receiver<Job>,
    gate: WriteGate,
) {
    let (mut batch, mut arrivals) = (Vec::with_capacity(MAX_BATCH), Arrivals::default());
    let mut last_used = std::time::Instant::now();
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        arrivals.stamp(&mut batch);
        // A server connection idle a while may have been cut (a database
        // restart): checked before the batch, so that the first answer after
        // it is not a needless 500 (an audit saw one per server per restart).
        if let Some(location) = location.as_ref().filter(|_| last_used.elapsed() >= IDLE_CHECK) {
            if sqlx::Connection::ping(&mut conn).await.is_err() {
                if let Ok(fresh) = super::db::open_writer(location).await {
                    tracing::warn!("the answer writer's idle database connection was gone; it opened a new one");
                    conn = fresh;
                }
            }
        }
        last_used = std::time::Instant::now();
        let results = {
            let _gate = gate.hold().await;
            commit_batch(&mut conn, &batch).await
        };
        let failed = results.iter().any(Result::is_err);
        for (job, result) in batch.drain(..).zip(results) {
            let _ = job.reply.send(result);
        }
        if let Some(location) = location.as_ref().filter(|_| failed) {
            if sqlx::Connection::ping(&mut conn).await.is_err() {
                match super::db::open_writer(location).await {
                    Ok(fresh) => {
                        tracing::warn!("the answer writer lost its database connection and opened a new one");
                        conn = fresh;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "the answer writer could not reconnect; it tries again after the next failed batch")
                    }
                }
            }
        }
    }
}

async fn commit_batch(conn: &mut AnyConnection, batch: &[Job]) -> Vec<Result<Stored, Failed>> {
    let every = |e: sqlx::Error| {
        let e: Failed = Arc::new(e);
        batch.iter().map(|_| Err(Arc::clone(&e))).collect()
    };
    if let Err(e) = super::db::begin_batch(conn).await {
        return every(e);
    }
    let results = match all_applied(conn, batch).await {
        Ok(Some(results)) => Ok(results),
        Ok(None) => one_by_one(conn, batch).await,
        Err(e) => Err(e),
    };
    let results = match results {
        Ok(results) => results,
        Err(e) => {
            // The batch's state is unknown: none of it may be committed.
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            return every(e);
        }
    };
    if let Err(e) = sqlx::query("COMMIT").execute(&mut *conn).await {
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
        return every(e);
    }
    results
}

/// The common case: every answer applies, in a few statements for the whole
/// batch (`store::batch`) under one savepoint; None, with nothing left
/// behind, when any statement fails (then [`one_by_one`] finds the culprit).
async fn all_applied(
    conn: &mut AnyConnection,
    batch: &[Job],
) -> Result<Option<Vec<Result<Stored, Failed>>>, sqlx::Error> {
    sqlx::query("SAVEPOINT batch").execute(&mut *conn).await?;
    let answers: Vec<&NewAnswer> = batch.iter().map(|j| &j.answer).collect();
    match super::batch::apply_all(conn, &answers).await {
        Ok(results) => {
            sqlx::query("RELEASE batch").execute(&mut *conn).await?;
            Ok(Some(results.into_iter().map(Ok).collect()))
        }
        Err(_) => {
            sqlx::query("ROLLBACK TO batch").execute(&mut *conn).await?;
            sqlx::query("RELEASE batch").execute(&mut *conn).await?;
            Ok(None)
        }
    }
}

/// A savepoint per answer: one that fails halfway (its insert made, its
/// update refused) leaves nothing behind, so its retry is new, and its
/// batch mates still commit.
async fn one_by_one(conn: &mut AnyConnection, batch: &[Job]) -> Result<Vec<Result<Stored, Failed>>, sqlx::Error> {
    let mut results = Vec::with_capacity(batch.len());
    for job in batch {
        sqlx::query("SAVEPOINT answer").execute(&mut *conn).await?;
        let applied = apply(conn, &job.answer).await;
        if applied.is_err() {
            sqlx::query("ROLLBACK TO answer").execute(&mut *conn).await?;
        }
        sqlx::query("RELEASE answer").execute(&mut *conn).await?;
        results.push(match applied {
            // The task's row is gone (withdrawn): nothing of the answer stays.
            Err(sqlx::Error::Database(e)) if e.kind() == sqlx::error::ErrorKind::ForeignKeyViolation => {
                Ok(Stored::Withdrawn)
            }
            other => other.map_err(|e| Arc::new(e) as Failed),
        });
    }
    Ok(results)
}

async fn apply(conn: &mut AnyConnection, a: &NewAnswer) -> Result<Stored, sqlx::Error> {
    let inserted = sqlx::query(ANSWER)
        .bind(a.task_id)
        .bind(a.study_id)
        .bind(a.user_id)
        .bind(a.instance_id)
        .bind(&a.option_id)
        .bind(&a.value)
        .bind(&a.shown_order)
        .bind(a.elapsed_ms)
        .bind(a.answered_at)
        .bind(a.arrival)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if inserted == 0 {
        return Ok(Stored::AlreadyAnswered);
    }
    for (field, text) in &a.texts {
        sqlx::query(ANSWER_TEXT).bind(a.task_id).bind(field).bind(text).execute(&mut *conn).await?;
    }
    sqlx::query(TASK_DONE).bind(a.task_id).execute(&mut *conn).await?;
    let finished: Option<super::ids::Flag> =
        sqlx::query_scalar(COUNTED).bind(a.study_id).bind(a.user_id).fetch_optional(&mut *conn).await?;
    // Only then: one statement fewer on every other answer.
    if finished == Some(super::ids::Flag(true)) {
        sqlx::query(FINISHED_LEASE).bind(a.answered_at).bind(a.user_id).execute(&mut *conn).await?;
    }
    Ok(Stored::New)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db;
    use sqlx::pool::PoolConnection;
    use sqlx::AnyPool;

    fn answer(task_id: i64) -> NewAnswer {
        NewAnswer {
            task_id,
            study_id: 1,
            user_id: 1,
            instance_id: task_id,
            option_id: "A".into(),
            value: "0".into(),
            shown_order: "[0]".into(),
            elapsed_ms: 10,
            answered_at: 1,
            arrival: 0,
            texts: Vec::new(),
        }
    }

    /// Three bare tasks in a new PostgreSQL database whose updates of
    /// `tasks` fail with `message` when `when` holds of the old row.
    async fn tasks_failing(when: &str, message: &str) -> Option<(db::Location, AnyPool, PoolConnection<sqlx::Any>)> {
        let (pool, location) = crate::store::test_postgres::database().await?;
        crate::store::test_postgres::without_foreign_keys(&pool).await;
        let mut setup = pool.acquire().await.unwrap();
        crate::store::batch::bare_tasks(&mut setup).await;
        let fault = format!(
            "CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF {when} THEN RAISE EXCEPTION '{message}'; END IF; RETURN NEW; END $$"
        );
        sqlx::query(&fault).execute(&mut *setup).await.unwrap();
        sqlx::query("CREATE TRIGGER fail BEFORE UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION fail()")
            .execute(&mut *setup)
            .await
            .unwrap();
        Some((location, pool, setup))
    }

    #[tokio::test]
    async fn an_answer_failing_halfway_leaves_nothing_and_its_batch_mates_commit() {
        // Task 2's insert succeeds, its update fails.
        let Some((location, pool, mut setup)) = tasks_failing("OLD.id = 2", "injected").await else { return };
        let mut conn = db::open_writer(&location).await.unwrap();
        let jobs: Vec<Job> = (1..=3).map(|t| Job { answer: answer(t), reply: oneshot::channel().0 }).collect();
        let results = commit_batch(&mut conn, &jobs).await;
        assert!(matches!(results[0], Ok(Stored::New)), "{results:?}");
        assert!(results[1].as_ref().unwrap_err().to_string().contains("injected"), "{results:?}");
        assert!(matches!(results[2], Ok(Stored::New)), "{results:?}");
        let written = crate::store::batch::written(&pool).await;
        assert_eq!(written, (vec![1, 3], vec![1, 0, 1], 2), "answered, done, count");

        // Once the fault is gone, the retry is stored as new, not "duplicate".
        sqlx::query("DROP TRIGGER fail ON tasks").execute(&mut *setup).await.unwrap();
        let retry = [Job { answer: answer(2), reply: oneshot::channel().0 }];
        assert!(matches!(commit_batch(&mut conn, &retry).await[..], [Ok(Stored::New)]));
    }

    #[tokio::test]
    async fn a_failed_answer_keeps_the_database_error_as_its_source() {
        let Some((location, _pool, _setup)) = tasks_failing("true", "disk says no").await else { return };
        let writer = Writer::spawn(db::open_writer(&location).await.unwrap());
        let e = writer.store(answer(1)).await.unwrap_err();
        assert_eq!(e.to_string(), "storing the answer failed");
        let source = std::error::Error::source(&e).expect("the database error is kept");
        let failed = source.downcast_ref::<Failed>().expect("the writer's error, not its text");
        let db_error = failed.downcast_ref::<sqlx::Error>().expect("a sqlx error");
        assert!(matches!(db_error, sqlx::Error::Database(_)), "{db_error:?}");
        let e = crate::error::ServiceError::from(e);
        assert!(e.chain().starts_with("internal error: answer writer: storing the answer failed: "), "{}", e.chain());
        assert!(e.chain().ends_with("disk says no"), "{}", e.chain());
        assert_eq!(e.chain().matches("disk says no").count(), 1, "{}", e.chain());
    }
}
