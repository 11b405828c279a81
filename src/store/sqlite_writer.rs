//! The answer writer on SQLite: a thread of its own with its own connection.
//! Through sqlx each statement was a hand-off to the connection's worker
//! thread and a wake-up back, so a batch went as a few JSON-fed statements;
//! here a statement is a function call, so each answer runs the plain
//! prepared statements (no JSON to build or parse, no temporary tables), and
//! a batch costs one wake-up of this thread and one fsync.
use super::batch::{
    Arrivals, Failed, Job, NewAnswer, Stored, WriteGate, ALL_DONE, ANSWER, ANSWER_TEXT, COUNT_ONE, FINISHED_LEASE,
    MAX_BATCH, TASK_DONE,
};
use rusqlite::{Connection, OpenFlags, Statement};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The pool's pragmas (WAL, synchronous=FULL, its page cache), and statement
/// journals in memory.
fn pragmas() -> String {
    format!("{} PRAGMA temp_store = memory;", super::db::SQLITE_PRAGMAS)
}

/// The writer's connection: its commits reach the WAL in one write each
/// (`gathered_wal`).
fn open(path: &Path) -> anyhow::Result<Connection> {
    let vfs = super::gathered_wal::register().map_err(anyhow::Error::msg)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags_and_vfs(path, flags, vfs)?;
    conn.execute_batch(&pragmas())?;
    Ok(conn)
}

/// Opens the writer's connection to the (existing, migrated) file at `path`
/// and starts its thread, which ends when every sender of `rx` is gone.
pub(super) fn spawn(path: &Path, rx: mpsc::Receiver<Job>, gate: WriteGate) -> anyhow::Result<()> {
    use anyhow::Context;
    let conn = open(path).with_context(|| format!("opening the answer writer's connection to {}", path.display()))?;
    Statements::prepare(&conn).context("preparing the answer writer's statements")?;
    std::thread::Builder::new()
        .name("answer-writer".into())
        .spawn(move || run(conn, rx, &gate))
        .context("starting the answer writer's thread")?;
    Ok(())
}

fn run(conn: Connection, mut rx: mpsc::Receiver<Job>, gate: &WriteGate) {
    let mut statements = match Statements::prepare(&conn) {
        Ok(statements) => statements,
        Err(e) => {
            // `spawn` prepared them a moment ago; the writer's senders now see it gone.
            tracing::error!("answer writer: preparing its statements: {e}");
            return;
        }
    };
    let (mut batch, mut arrivals) = (Vec::with_capacity(MAX_BATCH), Arrivals::default());
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        arrivals.stamp(&mut batch);
        let results = {
            let _gate = gate.blocking_hold();
            commit_batch(&mut statements, &batch)
        };
        for (job, result) in batch.drain(..).zip(results) {
            let _ = job.reply.send(result);
        }
    }
}

/// One transaction, one fsync, no savepoint while every answer goes in (a
/// savepoint copies each page the batch writes to its journal). If one
/// answer fails, the whole transaction is undone and each answer is tried
/// again under its own savepoint, so one bad answer fails only itself.
pub(super) fn commit_batch(s: &mut Statements<'_>, batch: &[Job]) -> Vec<Result<Stored, Failed>> {
    let conn = s.conn;
    let every = |e: rusqlite::Error| {
        let e: Failed = Arc::new(e);
        batch.iter().map(|_| Err(Arc::clone(&e))).collect()
    };
    if let Err(e) = exec(conn, BEGIN) {
        return every(e);
    }
    let all: rusqlite::Result<Vec<Stored>> = batch.iter().map(|j| s.apply(&j.answer)).collect();
    let results: rusqlite::Result<Vec<rusqlite::Result<Stored>>> = match all {
        Ok(results) => Ok(results.into_iter().map(Ok).collect()),
        Err(_) => undo(conn)
            .and_then(|()| exec(conn, BEGIN))
            .and_then(|()| batch.iter().map(|j| alone(conn, || s.apply(&j.answer))).collect()),
    };
    let results = match results {
        Ok(results) => results.into_iter().map(|r| r.map_err(|e| Arc::new(e) as Failed)).collect(),
        Err(e) => {
            // The batch's state is unknown: none of it may be committed.
            let _ = undo(conn);
            return every(e);
        }
    };
    if let Err(e) = exec(conn, COMMIT) {
        let _ = undo(conn);
        return every(e);
    }
    results
}

const BEGIN: &str = "BEGIN IMMEDIATE";
/// SQLITE_CONSTRAINT_FOREIGNKEY: an answer to a task that no longer exists.
const FOREIGN_KEY: std::ffi::c_int = 787;
const COMMIT: &str = "COMMIT";

/// A statement without parameters or rows, prepared once per connection.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

/// Rolls back the open transaction, if an error has not ended it already
/// (SQLite does so itself on some, such as a full disk).
fn undo(conn: &Connection) -> rusqlite::Result<()> {
    if conn.is_autocommit() {
        return Ok(());
    }
    exec(conn, "ROLLBACK")
}

/// Runs `f` under a savepoint, undone if `f` fails. The outer error is the
/// savepoint's own (the transaction's state is then unknown).
fn alone<T>(conn: &Connection, f: impl FnOnce() -> rusqlite::Result<T>) -> rusqlite::Result<rusqlite::Result<T>> {
    exec(conn, "SAVEPOINT answer")?;
    let out = f();
    if out.is_err() {
        exec(conn, "ROLLBACK TO answer")?;
    }
    exec(conn, "RELEASE answer")?;
    Ok(out)
}

/// One answer's statements, prepared once for the connection's life
/// (`prepare_cached` hashes a statement's whole text on every use).
pub(super) struct Statements<'c> {
    conn: &'c Connection,
    answer: Statement<'c>,
    text: Statement<'c>,
    task_done: Statement<'c>,
    count_one: Statement<'c>,
    all_done: Statement<'c>,
    finished_lease: Statement<'c>,
}

impl<'c> Statements<'c> {
    pub(super) fn prepare(conn: &'c Connection) -> rusqlite::Result<Statements<'c>> {
        Ok(Statements {
            conn,
            answer: conn.prepare(ANSWER)?,
            text: conn.prepare(ANSWER_TEXT)?,
            task_done: conn.prepare(TASK_DONE)?,
            count_one: conn.prepare(COUNT_ONE)?,
            all_done: conn.prepare(ALL_DONE)?,
            finished_lease: conn.prepare(FINISHED_LEASE)?,
        })
    }

    /// One answer: the first to its task stands, a repeat stores nothing.
    fn apply(&mut self, a: &NewAnswer) -> rusqlite::Result<Stored> {
        let inserted = match self.answer.execute((
            a.task_id,
            a.study_id,
            a.user_id,
            a.instance_id,
            &a.option_id,
            &a.value,
            &a.shown_order,
            a.elapsed_ms,
            a.answered_at,
            a.arrival,
        )) {
            // The task's row is gone (withdrawn): the failed statement undid itself.
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.extended_code == FOREIGN_KEY => {
                return Ok(Stored::Withdrawn)
            }
            other => other?,
        };
        if inserted == 0 {
            return Ok(Stored::AlreadyAnswered);
        }
        for (field, text) in &a.texts {
            self.text.execute((a.task_id, field, text))?;
        }
        self.task_done.execute([a.task_id])?;
        self.count_one.execute((a.study_id, a.user_id))?;
        let finished: Option<bool> = {
            let mut rows = self.all_done.query((a.study_id, a.user_id))?;
            match rows.next()? {
                Some(row) => Some(row.get(0)?),
                None => None,
            }
        };
        // A link participant's last answer ends its lease in the same commit.
        if finished == Some(true) {
            self.finished_lease.execute((a.answered_at, a.user_id))?;
        }
        Ok(Stored::New)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db;
    use tokio::sync::oneshot;

    fn job(task_id: i64, option: &str, at: i64) -> Job {
        Job { answer: crate::store::batch::test_answer(task_id, option, at), reply: oneshot::channel().0 }
    }

    /// Three bare tasks, a lease, and `fault` (SQL run at set-up) in a new file.
    async fn tasks_with(dir: &tempfile::TempDir, fault: &str) -> (Connection, sqlx::AnyPool) {
        let file = dir.path().join("db.sqlite");
        let pool = db::open_pool(&file).await.unwrap();
        let mut setup = pool.acquire().await.unwrap();
        crate::store::batch::bare_tasks(&mut setup).await;
        let lease = "INSERT INTO leases (study_id, bundle, user_id, state, leased_at, expires_at)
                     VALUES (1, 0, 1, 'active', 0, 99)";
        for sql in [lease, fault] {
            sqlx::query(sql).execute(&mut *setup).await.unwrap();
        }
        (open(&file).unwrap(), pool)
    }

    fn stored(results: &[Result<Stored, Failed>]) -> Vec<Option<Stored>> {
        results.iter().map(|r| r.as_ref().ok().copied()).collect()
    }

    #[tokio::test]
    async fn first_answers_stand_each_is_counted_once_and_the_last_ends_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, pool) = tasks_with(&dir, "SELECT 1").await;
        let mut s = Statements::prepare(&conn).unwrap();
        assert_eq!(stored(&commit_batch(&mut s, &[job(1, "A", 5)])), [Some(Stored::New)]);
        let lease: (String, Option<i64>) =
            sqlx::query_as("SELECT state, ended_at FROM leases").fetch_one(&pool).await.unwrap();
        assert_eq!(lease, ("active".into(), None), "not finished after one of three");

        // Task 1 again (stored before), 2 twice in one batch (the first stands), 3 with its text.
        let batch = [job(1, "B", 6), job(2, "C", 7), job(2, "D", 8), job(3, "A", 9)];
        let got = stored(&commit_batch(&mut s, &batch));
        let (new, repeat) = (Some(Stored::New), Some(Stored::AlreadyAnswered));
        assert_eq!(got, [repeat, new, repeat, new]);
        let rows: Vec<(i64, String, i64)> =
            sqlx::query_as("SELECT task_id, option_id, answered_at FROM answers ORDER BY task_id")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(rows, [(1, "A".into(), 5), (2, "C".into(), 7), (3, "A".into(), 9)]);
        let texts: Vec<(i64, String, String)> =
            sqlx::query_as("SELECT task_id, field, text FROM answer_texts ORDER BY field DESC")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(texts, [(3, "positive".into(), "a \"quoted\" text".into()), (3, "negative".into(), "two".into())]);
        let done: Vec<i64> = sqlx::query_scalar("SELECT done FROM tasks ORDER BY id").fetch_all(&pool).await.unwrap();
        assert_eq!(done, [1, 1, 1]);
        let count: i64 = sqlx::query_scalar("SELECT done FROM participations").fetch_one(&pool).await.unwrap();
        assert_eq!(count, 3, "each new answer counted once");
        let lease: (String, Option<i64>) =
            sqlx::query_as("SELECT state, ended_at FROM leases").fetch_one(&pool).await.unwrap();
        assert_eq!(lease, ("completed".into(), Some(9)), "ended at the last answer");
    }

    #[tokio::test]
    async fn an_answer_failing_halfway_leaves_nothing_and_its_batch_mates_commit() {
        let dir = tempfile::tempdir().unwrap();
        // Task 2's insert succeeds, its update fails.
        let fault =
            "CREATE TRIGGER fail_two BEFORE UPDATE ON tasks WHEN OLD.id = 2 BEGIN SELECT RAISE(ABORT, 'injected'); END";
        let (conn, pool) = tasks_with(&dir, fault).await;
        let mut s = Statements::prepare(&conn).unwrap();
        // The failing answer first: its batch mates are still each applied once.
        let results = commit_batch(&mut s, &[job(2, "A", 1), job(1, "A", 1), job(3, "A", 1)]);
        assert_eq!(stored(&results), [None, Some(Stored::New), Some(Stored::New)]);
        let e = results[0].as_ref().unwrap_err();
        assert!(e.downcast_ref::<rusqlite::Error>().is_some_and(|e| e.to_string().contains("injected")), "{e:?}");
        let written = crate::store::batch::written(&pool).await;
        assert_eq!(
            written,
            (vec![1, 3], vec![1, 0, 1], 2),
            "answered, done, count: the undone first try counts nothing"
        );

        // Once the fault is gone, the retry is stored as new, not "duplicate"
        // (the held statements survive the schema change).
        conn.execute_batch("DROP TRIGGER fail_two").unwrap();
        assert_eq!(stored(&commit_batch(&mut s, &[job(2, "A", 1)])), [Some(Stored::New)]);
    }

    #[tokio::test]
    async fn the_writer_replies_after_its_commit_and_keeps_the_error_as_its_source() {
        let dir = tempfile::tempdir().unwrap();
        let fault =
            "CREATE TRIGGER fail BEFORE UPDATE ON tasks WHEN OLD.id = 3 BEGIN SELECT RAISE(ABORT, 'disk says no'); END";
        let (_conn, pool) = tasks_with(&dir, fault).await;
        let writer = super::super::writer::Writer::open(&db::location_of(&pool)).await.unwrap();
        assert_eq!(writer.store(job(1, "A", 1).answer).await.unwrap(), Stored::New);
        // Acknowledged means committed: another connection sees it at once.
        let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM answers").fetch_one(&pool).await.unwrap();
        assert_eq!(seen, 1);
        let e = writer.store(job(3, "A", 1).answer).await.unwrap_err();
        let source = std::error::Error::source(&e).expect("the database error is kept");
        let failed = source.downcast_ref::<Failed>().expect("the writer's error, not its text");
        assert!(failed.downcast_ref::<rusqlite::Error>().is_some(), "{failed:?}");
        let e = crate::error::ServiceError::from(e);
        assert!(e.chain().starts_with("internal error: answer writer: storing the answer failed: "), "{}", e.chain());
        assert_eq!(e.chain().matches("disk says no").count(), 1, "{}", e.chain());
    }
}
