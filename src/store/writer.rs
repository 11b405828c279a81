//! The one task that writes answers. Requests queue on a channel; the task
//! takes everything queued, commits it in one transaction (one fsync) and only
//! then replies. Under load, batches grow by themselves: group commit.
use sqlx::SqliteConnection;
use tokio::sync::{mpsc, oneshot};

const MAX_BATCH: usize = 512;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    New,
    /// The task already had an answer; the first one stands.
    AlreadyAnswered,
}

struct Job {
    answer: NewAnswer,
    reply: oneshot::Sender<Result<Stored, String>>,
}

#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the answer writer has stopped")]
    Stopped,
    #[error("storing the answer failed: {0}")]
    Db(String),
}

impl Writer {
    pub fn spawn(conn: SqliteConnection) -> Writer {
        let (tx, rx) = mpsc::channel(8192);
        tokio::spawn(run(conn, rx));
        Writer { tx }
    }

    /// Returns once the answer is committed to disk.
    pub async fn store(&self, answer: NewAnswer) -> Result<Stored, WriteError> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Job { answer, reply }).await.map_err(|_| WriteError::Stopped)?;
        rx.await.map_err(|_| WriteError::Stopped)?.map_err(WriteError::Db)
    }
}

async fn run(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let results = commit_batch(&mut conn, &batch).await;
        for (job, result) in batch.drain(..).zip(results) {
            let _ = job.reply.send(result);
        }
    }
}

async fn commit_batch(conn: &mut SqliteConnection, batch: &[Job]) -> Vec<Result<Stored, String>> {
    if let Err(e) = sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await {
        return batch.iter().map(|_| Err(e.to_string())).collect();
    }
    let mut results = Vec::with_capacity(batch.len());
    for job in batch {
        results.push(apply(conn, &job.answer).await.map_err(|e| e.to_string()));
    }
    if let Err(e) = sqlx::query("COMMIT").execute(&mut *conn).await {
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
        return batch.iter().map(|_| Err(e.to_string())).collect();
    }
    results
}

async fn apply(conn: &mut SqliteConnection, a: &NewAnswer) -> Result<Stored, sqlx::Error> {
    let inserted = sqlx::query(
        "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING",
    )
    .bind(a.task_id)
    .bind(a.study_id)
    .bind(a.user_id)
    .bind(a.instance_id)
    .bind(&a.option_id)
    .bind(&a.value)
    .bind(&a.shown_order)
    .bind(a.elapsed_ms)
    .bind(a.answered_at)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if inserted == 0 {
        return Ok(Stored::AlreadyAnswered);
    }
    sqlx::query("UPDATE tasks SET done = 1, lease_until = NULL WHERE id = ?")
        .bind(a.task_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE participations SET done = done + 1 WHERE study_id = ? AND user_id = ?")
        .bind(a.study_id)
        .bind(a.user_id)
        .execute(&mut *conn)
        .await?;
    Ok(Stored::New)
}
