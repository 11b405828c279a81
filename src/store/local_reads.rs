//! Reads on the calling thread, for the answer round trip's hottest query on
//! SQLite. Each sqlx query is a hand-off to its connection's worker thread
//! and a wake-up back (two context switches, a futex and an eventfd write),
//! which cost more than the indexed read itself. A read here runs in place,
//! on its own connection (WAL: it never waits for the writer), so use it
//! only for reads that take microseconds. PostgreSQL has none of these:
//! its queries go through the pool as before.
use super::db::Location;
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Idle connections kept for reuse; more are opened when several threads
/// read at once, and closed on return beyond this many.
const KEPT: usize = 8;

/// A backup or another process may hold the file briefly; a read waits at
/// most this long (a WAL reader never waits for this process's writer).
const BUSY_WAIT: Duration = Duration::from_millis(200);

pub struct LocalReads {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl LocalReads {
    /// Local reads of the SQLite file at `location`; None on PostgreSQL.
    pub fn open(location: &Location) -> Option<LocalReads> {
        match location {
            Location::Sqlite(path) => Some(LocalReads { path: path.clone(), idle: Mutex::default() }),
            Location::Postgres(_) => None,
        }
    }

    /// Runs `read` on an idle connection (a new one if none is idle).
    pub fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let conn = match self.lock().pop() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let out = read(&conn);
        let mut idle = self.lock();
        if idle.len() < KEPT {
            idle.push(conn);
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        // A panic inside `read` never holds this lock: the list stays whole.
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The database exists (the pool made and migrated it), so no create
    /// flag; `query_only` refuses any write through these connections.
    fn connect(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        conn.busy_timeout(BUSY_WAIT)?;
        conn.pragma_update(None, "query_only", true)?;
        conn.set_prepared_statement_cache_capacity(16);
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_see_every_commit_refuse_writes_and_reuse_connections() {
        let dir = tempfile::tempdir().unwrap();
        let pool = super::super::db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
        let local = LocalReads::open(&super::super::db::location_of(&pool)).expect("a SQLite file");
        let count = |l: &LocalReads| l.read(|c| c.query_row("SELECT count(*) FROM users", [], |r| r.get::<_, i64>(0)));
        assert_eq!(count(&local).unwrap(), 0);
        sqlx::query("INSERT INTO users (username, password_hash, role, created_at) VALUES ('a', 'x', 'annotator', 0)")
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(count(&local).unwrap(), 1, "a commit through the pool is seen by the next read");

        let write = local.read(|c| c.execute("DELETE FROM users", []));
        assert!(write.unwrap_err().to_string().contains("readonly"), "query_only refuses writes");
        assert_eq!(count(&local).unwrap(), 1);

        // Reads nested as on several threads at once: a second connection,
        // and both kept afterwards, no more than KEPT.
        local.read(|_| local.read(|_| Ok(()))).unwrap();
        assert_eq!(local.lock().len(), 2);
        assert!(LocalReads::open(&Location::Postgres("postgres://h/db".into())).is_none());
    }
}
