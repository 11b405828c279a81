//! Sessions kept in memory in front of their SQLite table: every request
//! loads its session, and that read was two of a round trip's queries.
//!
//! The cache assumes this process is the only writer of the session table
//! (one server on a SQLite file). Servers sharing a PostgreSQL database
//! run [`CachedSessions::without_cache`]: a logout on one must end the
//! session on all. Every write goes through here: a save, create or
//! delete drops the cached copy before and after writing the table, and a
//! load puts what it read into memory only if no write happened meanwhile
//! (a write counter), so the cache never holds an older record than the
//! table. Expiry is checked on every hit, as the table's own load does.
use crate::store::recent::Recent;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};

/// Sessions kept per generation (at most twice this many are held).
const GENERATION: usize = 50_000;

struct Cache {
    records: Recent<Id, Record>,
    /// Writes so far: a load stores its record only if none came between.
    writes: u64,
}

#[derive(Clone)]
pub struct CachedSessions<S> {
    inner: S,
    cache: Arc<Mutex<Cache>>,
    /// False: every load reads the table (more than one server).
    enabled: bool,
}

impl<S> std::fmt::Debug for CachedSessions<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CachedSessions")
    }
}

impl<S> CachedSessions<S> {
    pub fn new(inner: S) -> Self {
        Self::with_generation(inner, GENERATION)
    }

    fn with_generation(inner: S, generation: usize) -> Self {
        CachedSessions {
            inner,
            cache: Arc::new(Mutex::new(Cache { records: Recent::new(generation), writes: 0 })),
            enabled: true,
        }
    }

    /// Straight to the table on every load: for servers sharing a database.
    pub fn without_cache(inner: S) -> Self {
        CachedSessions { enabled: false, ..Self::with_generation(inner, 1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        // A panic while holding the lock cannot leave the map half-written.
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Before and after a write: the cached copy is gone, and loads running
    /// across the write will not put back what they read.
    fn forget(&self, id: &Id) {
        let mut c = self.lock();
        c.writes += 1;
        c.records.remove(id);
    }
}

fn active(r: &Record) -> bool {
    r.expiry_date > OffsetDateTime::now_utc()
}

#[async_trait::async_trait]
impl<S: SessionStore + Clone> SessionStore for CachedSessions<S> {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        self.forget(&record.id);
        let created = self.inner.create(record).await;
        // The store may have picked another id (a collision).
        self.forget(&record.id);
        created
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        self.forget(&record.id);
        let saved = self.inner.save(record).await;
        self.forget(&record.id);
        saved
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        if !self.enabled {
            return self.inner.load(id).await;
        }
        let writes = {
            let mut c = self.lock();
            match c.records.get(id) {
                Some(r) if active(&r) => return Ok(Some(r)),
                Some(_) => c.records.remove(id),
                None => {}
            }
            c.writes
        };
        let record = self.inner.load(id).await?;
        if let Some(r) = &record {
            let mut c = self.lock();
            if c.writes == writes {
                c.records.put(*id, r.clone());
            }
        }
        Ok(record)
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        self.forget(id);
        let deleted = self.inner.delete(id).await;
        self.forget(id);
        deleted
    }
}

#[async_trait::async_trait]
impl<S: ExpiredDeletion + Clone> ExpiredDeletion for CachedSessions<S> {
    async fn delete_expired(&self) -> session_store::Result<()> {
        self.lock().records.retain(active);
        self.inner.delete_expired().await
    }
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
