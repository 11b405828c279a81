//! The session table, on whichever database the server runs (sqlx's `Any`):
//! tower-sessions' SQLite store's layout and record encoding (MessagePack),
//! with the expiry as Unix seconds so one statement serves both backends.
use super::writer::WriteGate;
use sqlx::AnyPool;
use time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};

#[derive(Clone, Debug)]
pub struct SessionTable {
    pool: AnyPool,
    /// On SQLite, writes wait their turn with the answer writer's commits and
    /// arrivals, here rather than in SQLite's busy handler, whose sleeps (1,
    /// 2, 5, 10, … up to 100 ms) made a participant's arrival slow at the
    /// tail. None on PostgreSQL: it has no busy handler and writes rows
    /// concurrently, and a session row in the queue for the gate made every
    /// arrival wait behind the arrivals and answer batches before it.
    gate: Option<WriteGate>,
}

impl SessionTable {
    pub fn new(pool: AnyPool, gate: WriteGate) -> Self {
        let gate = (!super::db::is_postgres(&pool)).then_some(gate);
        SessionTable { pool, gate }
    }

    async fn turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match &self.gate {
            Some(gate) => Some(gate.hold().await),
            None => None,
        }
    }
}

fn backend(e: sqlx::Error) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn encode(record: &Record) -> session_store::Result<Vec<u8>> {
    rmp_serde::to_vec(record).map_err(|e| session_store::Error::Encode(e.to_string()))
}

fn now() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

impl SessionTable {
    /// Runs `sql` with the record's id, data and expiry; the rows it wrote.
    async fn write(&self, sql: &'static str, record: &Record) -> session_store::Result<u64> {
        let _turn = self.turn().await;
        let done = sqlx::query(sql)
            .bind(record.id.to_string())
            .bind(encode(record)?)
            .bind(record.expiry_date.unix_timestamp())
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(done.rows_affected())
    }
}

#[async_trait::async_trait]
impl SessionStore for SessionTable {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        const INSERT: &str =
            "INSERT INTO tower_sessions (id, data, expiry_date) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING";
        // An id already taken: draw another.
        while self.write(INSERT, record).await? == 0 {
            record.id = Id::default();
        }
        Ok(())
    }

    /// Updates a stored session only. tower-sessions calls `create` for a
    /// new one (and after `cycle_id`), so a row missing here was deleted
    /// while the request ran (a logout elsewhere, a participant's session
    /// ended by `crowd::sessions`): an upsert brought it back, untracked
    /// (an audit: 100 session rows of one participant where 3 were kept).
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        self.write("UPDATE tower_sessions SET data = $2, expiry_date = $3 WHERE id = $1", record).await?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let data: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT data FROM tower_sessions WHERE id = $1 AND expiry_date > $2")
                .bind(id.to_string())
                .bind(now())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
        // A record this build cannot read is no session: the visitor starts a new one.
        Ok(data.and_then(|d| rmp_serde::from_slice(&d).ok()))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        let _turn = self.turn().await;
        sqlx::query("DELETE FROM tower_sessions WHERE id = $1")
            .bind(id.to_string())
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for SessionTable {
    async fn delete_expired(&self) -> session_store::Result<()> {
        let _turn = self.turn().await;
        sqlx::query("DELETE FROM tower_sessions WHERE expiry_date <= $1")
            .bind(now())
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
