//! Opening the SQLite file. WAL lets readers run beside the one writer;
//! synchronous=FULL makes every commit durable before we acknowledge it.
use anyhow::Context;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, SqliteConnection};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");
/// PostgreSQL's schema, the same tables (tests/api/postgres.rs compares
/// them). The server does not run on PostgreSQL yet (docs/deploy.md).
pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

fn options(path: &Path) -> anyhow::Result<SqliteConnectOptions> {
    let url = format!("sqlite://{}", path.display());
    Ok(SqliteConnectOptions::from_str(&url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true)
        .pragma("cache_size", "-32000")
        .disable_statement_logging())
}

/// The shared pool: reads, and the rare writes outside the answer path
/// (accounts, studies, imports). Migrations run here.
pub async fn open_pool(path: &Path) -> anyhow::Result<SqlitePool> {
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        // A connection to a local file does not go stale, and the check cost
        // a round trip to the driver's worker thread on every query.
        .test_before_acquire(false)
        .connect_with(options(path)?)
        .await
        .with_context(|| format!("opening database {}", path.display()))?;
    MIGRATOR.run(&pool).await.context("running database migrations")?;
    Ok(pool)
}

/// The answer writer's own connection. Its batches are small, so their
/// statement journals stay in memory rather than in a temp file created and
/// deleted on every commit (a dozen system calls each).
pub async fn open_writer_connection(path: &Path) -> anyhow::Result<SqliteConnection> {
    options(path)?
        .pragma("temp_store", "memory")
        .connect()
        .await
        .with_context(|| format!("opening writer connection to {}", path.display()))
}

pub fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
