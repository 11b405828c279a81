use super::*;
use crate::store::session_table::SessionTable;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use time::Duration;
use tokio::sync::Notify;

struct Db {
    _dir: tempfile::TempDir,
    pool: sqlx::AnyPool,
    store: SessionTable,
}

async fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::store::db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
    let store = SessionTable::new(pool.clone(), Default::default());
    Db { _dir: dir, pool, store }
}

fn record(role: &str, expires_in: Duration) -> Record {
    let data = HashMap::from([("user".to_string(), serde_json::json!({ "role": role }))]);
    Record { id: Id::default(), data, expiry_date: OffsetDateTime::now_utc() + expires_in }
}

fn role(r: &Option<Record>) -> Option<String> {
    r.as_ref().map(|r| r.data["user"]["role"].as_str().unwrap_or_default().to_string())
}

/// Removes every session row behind the cache's back: what a load returns
/// afterwards came from memory.
async fn wipe_table(pool: &sqlx::AnyPool) {
    sqlx::query("DELETE FROM tower_sessions").execute(pool).await.unwrap();
}

#[tokio::test]
async fn without_the_cache_every_load_reads_the_table() {
    let db = db().await;
    let sessions = CachedSessions::without_cache(db.store.clone());
    let mut r = record("annotator", Duration::days(1));
    sessions.create(&mut r).await.unwrap();
    assert_eq!(role(&sessions.load(&r.id).await.unwrap()), Some("annotator".into()));
    wipe_table(&db.pool).await;
    // Another server may have ended the session: the table decides.
    assert_eq!(sessions.load(&r.id).await.unwrap(), None);
}

#[tokio::test]
async fn a_loaded_session_is_served_from_memory_afterwards() {
    let db = db().await;
    let sessions = CachedSessions::new(db.store.clone());
    let mut r = record("annotator", Duration::days(1));
    sessions.create(&mut r).await.unwrap();
    // Writing does not cache: the first load reads the table.
    assert_eq!(role(&sessions.load(&r.id).await.unwrap()), Some("annotator".into()));
    wipe_table(&db.pool).await;
    assert_eq!(role(&sessions.load(&r.id).await.unwrap()), Some("annotator".into()));
    assert_eq!(db.store.load(&r.id).await.unwrap(), None);
}

#[tokio::test]
async fn logging_out_and_saving_replace_the_cached_copy() {
    let db = db().await;
    let sessions = CachedSessions::new(db.store.clone());
    let mut r = record("annotator", Duration::days(1));
    sessions.create(&mut r).await.unwrap();
    sessions.load(&r.id).await.unwrap();
    // A changed session (another user or role after logging in again).
    let changed = Record { data: record("researcher", Duration::days(1)).data, ..r.clone() };
    sessions.save(&changed).await.unwrap();
    assert_eq!(role(&sessions.load(&r.id).await.unwrap()), Some("researcher".into()));
    // Logging out deletes the session: gone from memory too.
    sessions.delete(&r.id).await.unwrap();
    assert_eq!(sessions.load(&r.id).await.unwrap(), None);
    assert_eq!(db.store.load(&r.id).await.unwrap(), None);
}

#[tokio::test]
async fn an_expired_session_is_not_served_from_memory() {
    let db = db().await;
    let sessions = CachedSessions::new(db.store.clone());
    let mut r = record("annotator", Duration::days(1));
    sessions.create(&mut r).await.unwrap();
    sessions.load(&r.id).await.unwrap();
    // The cached copy's expiry passes (the table's copy expires alike).
    let expired = Record { expiry_date: OffsetDateTime::now_utc() - Duration::seconds(1), ..r.clone() };
    db.store.save(&expired).await.unwrap();
    sessions.lock().records.put(r.id, expired);
    assert_eq!(sessions.load(&r.id).await.unwrap(), None);
    assert!(sessions.lock().records.is_empty());
}

#[tokio::test]
async fn deleting_expired_sessions_empties_memory_of_them() {
    let db = db().await;
    let sessions = CachedSessions::new(db.store.clone());
    let mut live = record("annotator", Duration::days(1));
    sessions.create(&mut live).await.unwrap();
    sessions.load(&live.id).await.unwrap();
    let dead = record("annotator", -Duration::seconds(1));
    sessions.lock().records.put(dead.id, dead.clone());
    sessions.delete_expired().await.unwrap();
    assert_eq!(sessions.lock().records.len(), 1);
    assert!(sessions.load(&live.id).await.unwrap().is_some());
}

#[tokio::test]
async fn memory_holds_at_most_two_generations() {
    let db = db().await;
    let sessions = CachedSessions::with_generation(db.store.clone(), 2);
    for _ in 0..5 {
        let mut r = record("annotator", Duration::days(1));
        sessions.create(&mut r).await.unwrap();
        sessions.load(&r.id).await.unwrap();
    }
    assert!(sessions.lock().records.len() <= 4);
}

/// The real table, with a load that waits after reading until let go.
#[derive(Clone, Debug)]
struct PausedLoad {
    store: SessionTable,
    pause: Arc<AtomicBool>,
    read: Arc<Notify>,
    resume: Arc<Notify>,
}

#[async_trait::async_trait]
impl SessionStore for PausedLoad {
    async fn create(&self, r: &mut Record) -> session_store::Result<()> {
        self.store.create(r).await
    }
    async fn save(&self, r: &Record) -> session_store::Result<()> {
        self.store.save(r).await
    }
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let r = self.store.load(id).await;
        if self.pause.load(Ordering::SeqCst) {
            self.read.notify_one();
            self.resume.notified().await;
        }
        r
    }
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        self.store.delete(id).await
    }
}

#[tokio::test]
async fn a_load_overtaken_by_a_logout_does_not_bring_the_session_back() {
    let db = db().await;
    let paused = PausedLoad {
        store: db.store.clone(),
        pause: Arc::new(AtomicBool::new(false)),
        read: Arc::default(),
        resume: Arc::default(),
    };
    let sessions = CachedSessions::new(paused.clone());
    let mut r = record("annotator", Duration::days(1));
    sessions.create(&mut r).await.unwrap();
    paused.pause.store(true, Ordering::SeqCst);
    // A request reads the session from the table...
    let load = tokio::spawn({
        let (sessions, id) = (sessions.clone(), r.id);
        async move { sessions.load(&id).await.unwrap() }
    });
    paused.read.notified().await;
    // ...the user logs out before that load finishes...
    sessions.delete(&r.id).await.unwrap();
    paused.resume.notify_one();
    assert!(load.await.unwrap().is_some(), "the overtaken request saw the session it read");
    // ...and the next request finds no session.
    paused.pause.store(false, Ordering::SeqCst);
    assert_eq!(sessions.load(&r.id).await.unwrap(), None);
}

/// A session write (here a new one) takes its turn with the answer writer's commits (the
/// gate they share) instead of meeting SQLite's lock and its busy sleeps:
/// it does not start while a commit holds the gate, and goes once it ends.
#[tokio::test]
async fn a_session_write_waits_for_the_writers_turn() {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::store::db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
    let gate = crate::store::writer::WriteGate::default();
    let store = SessionTable::new(pool.clone(), gate.clone());
    let turn = gate.hold().await;
    let mut r = record("participant", Duration::hours(1));
    let id = r.id.to_string();
    let saving = tokio::spawn(async move { store.create(&mut r).await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let rows = |pool: sqlx::AnyPool, id: String| async move {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM tower_sessions WHERE id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
        n
    };
    assert!(!saving.is_finished(), "the save went ahead while the gate was held");
    assert_eq!(rows(pool.clone(), id.clone()).await, 0);
    drop(turn);
    saving.await.unwrap().unwrap();
    assert_eq!(rows(pool, id).await, 1);
}

#[tokio::test]
async fn a_save_does_not_bring_back_a_session_deleted_meanwhile() {
    let db = db().await;
    let mut r = record("participant", Duration::days(1));
    db.store.create(&mut r).await.unwrap();
    // Ended while its request ran (crowd::sessions, a logout elsewhere);
    // the request's end then saves it.
    db.store.delete(&r.id).await.unwrap();
    db.store.save(&r).await.unwrap();
    assert_eq!(db.store.load(&r.id).await.unwrap(), None);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM tower_sessions").fetch_one(&db.pool).await.unwrap();
    assert_eq!(rows, 0);
    // A stored one is updated as before.
    let mut live = record("annotator", Duration::days(1));
    db.store.create(&mut live).await.unwrap();
    let changed = Record { data: record("researcher", Duration::days(1)).data, ..live.clone() };
    db.store.save(&changed).await.unwrap();
    assert_eq!(role(&db.store.load(&live.id).await.unwrap()), Some("researcher".into()));
}
