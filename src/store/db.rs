//! Opening the database: a SQLite file (the default) or a PostgreSQL server,
//! both through sqlx's `Any` driver so every query is written once.
//!
//! SQLite: WAL lets readers run beside the one writer; synchronous=FULL makes
//! every commit durable before we acknowledge it. PostgreSQL: its own
//! defaults (fsync and synchronous_commit on) give the same promise.
use anyhow::Context;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyConnection, AnyPool, ConnectOptions, Connection, Executor};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use super::migrations::{MIGRATOR, PG_MIGRATOR};

/// Run on every SQLite connection as it opens. The busy timeout matters only
/// to other processes (backups, the CLI); this process queues its writers.
pub(super) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
     PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32000;";

/// Where the data lives: `--database`, or the SQLite file in the data dir.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// A `--database` value: `postgres://…`/`postgresql://…`, or
    /// `sqlite://PATH`. Anything else is refused, naming what was given.
    pub fn parse(url: &str) -> anyhow::Result<Location> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            AnyConnectOptions::from_str(url)
                .map_err(|e| anyhow::anyhow!("--database: not a valid PostgreSQL URL ({e})"))?;
            return Ok(Location::Postgres(url.to_owned()));
        }
        if let Some(path) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
            if path.is_empty() {
                anyhow::bail!("--database: sqlite:// needs a file path, e.g. sqlite:///srv/hardneg/hardneg.sqlite");
            }
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or(url);
        anyhow::bail!(
            "--database: unsupported scheme {scheme:?}: use postgres://user:password@host/db or sqlite://PATH"
        )
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }

    /// For messages: the file, or the server without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => without_password(url),
        }
    }

    fn options(&self) -> anyhow::Result<AnyConnectOptions> {
        sqlx::any::install_default_drivers();
        let url = match self {
            Location::Sqlite(p) => format!("sqlite://{}?mode=rwc", p.display()),
            Location::Postgres(url) => url.clone(),
        };
        Ok(AnyConnectOptions::from_str(&url)?.disable_statement_logging())
    }
}

/// `postgres://user:secret@host/db?…` as `postgres://user@host:port/db`:
/// rebuilt from what the driver reads out of it, so no way of writing the
/// password (one with `@` in it, `?password=`) reaches a message.
fn without_password(url: &str) -> String {
    match sqlx::postgres::PgConnectOptions::from_str(url) {
        Ok(o) => format!(
            "postgres://{}@{}:{}/{}",
            o.get_username(),
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap_or_default()
        ),
        Err(_) => "a PostgreSQL URL that cannot be read".into(),
    }
}

/// What each new connection runs first.
async fn prepare(conn: &mut AnyConnection) -> sqlx::Result<()> {
    if is_sqlite(conn) {
        conn.execute(SQLITE_PRAGMAS).await?;
    }
    Ok(())
}

fn is_sqlite(conn: &AnyConnection) -> bool {
    !super::dialect::Backend::is_postgres(conn)
}

/// True when the pool talks to PostgreSQL.
pub fn is_postgres(pool: &AnyPool) -> bool {
    super::dialect::Backend::is_postgres(pool)
}

/// How long a request waits for a PostgreSQL connection before its error.
const PG_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// The shared pool, with the schema migrated: reads, and the rare writes
/// outside the answer path (accounts, studies, imports).
pub async fn open(location: &Location) -> anyhow::Result<AnyPool> {
    if location.is_postgres() {
        // The pool retries a refused connection until its timeout and then says
        // only that it timed out: one plain attempt first gives the reason.
        let options = location.options()?;
        let attempt = AnyConnection::connect_with(&options);
        let what = || format!("opening database {}", location.describe());
        match tokio::time::timeout(std::time::Duration::from_secs(10), attempt).await {
            Ok(conn) => conn.with_context(what)?.close().await.with_context(what)?,
            Err(_) => anyhow::bail!("{}: no answer from the server within 10 s", what()),
        }
    }
    let pool = AnyPoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        // While PostgreSQL is down every acquire retries its connect until
        // this timeout: the default 30 s held each request a minute (two
        // session reads) before its 503.
        .acquire_timeout(match location.is_postgres() {
            true => PG_ACQUIRE_TIMEOUT,
            false => std::time::Duration::from_secs(30),
        })
        // A connection to a local file does not go stale, and the check cost
        // a round trip to the driver's worker thread on every query.
        .test_before_acquire(location.is_postgres())
        // SQLite rolls back by itself when a COMMIT fails (a full disk); the
        // driver's ROLLBACK then fails and leaves its transaction depth at 1,
        // and that connection refused every later BEGIN until a restart
        // (audit X: every arrival a 500 after a brief full disk). Such a
        // connection is closed and a fresh one opened.
        .before_acquire(|conn, _| Box::pin(async move { Ok(!sqlx::Connection::is_in_transaction(conn)) }))
        .after_connect(|conn, _| Box::pin(prepare(conn)))
        .connect_with(location.options()?)
        .await
        .with_context(|| format!("opening database {}", location.describe()))?;
    let migrator = if location.is_postgres() { &PG_MIGRATOR } else { &MIGRATOR };
    migrator.run(&pool).await.context("running database migrations")?;
    Ok(pool)
}

/// More connections to `pool`'s database, for one long job (an export)
/// that must not take the app's own: its read-ahead holds several at once.
/// On SQLite each runs `sqlite_pragmas` after the usual ones.
pub async fn side_pool(pool: &AnyPool, sqlite_pragmas: &'static str) -> sqlx::Result<AnyPool> {
    let postgres = is_postgres(pool);
    AnyPoolOptions::new()
        .max_connections(8)
        .test_before_acquire(false)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                prepare(conn).await?;
                if !postgres {
                    conn.execute(sqlite_pragmas).await?;
                }
                Ok(())
            })
        })
        .connect_with((*pool.connect_options()).clone())
        .await
}

/// Runs SQLite's `pragmas` on a connection held apart from the pool (closed
/// after use, so they never reach it); PostgreSQL has no such settings, so
/// there it does nothing and the caller never asks which database runs.
pub async fn sqlite_settings(conn: &mut AnyConnection, pragmas: &[&str]) -> sqlx::Result<()> {
    if is_sqlite(conn) {
        for pragma in pragmas {
            sqlx::query(pragma).execute(&mut *conn).await?;
        }
    }
    Ok(())
}

/// [`open`] for the SQLite file at `path`.
pub async fn open_pool(path: &Path) -> anyhow::Result<AnyPool> {
    open(&Location::Sqlite(path.to_owned())).await
}

/// The answer writer's own connection. On SQLite its batches are small, so
/// their statement journals stay in memory rather than in a temp file
/// created and deleted on every commit (a dozen system calls each).
pub async fn open_writer(location: &Location) -> anyhow::Result<AnyConnection> {
    let mut conn = location
        .options()?
        .connect()
        .await
        .with_context(|| format!("opening writer connection to {}", location.describe()))?;
    prepare(&mut conn).await?;
    if is_sqlite(&conn) {
        conn.execute("PRAGMA temp_store = memory").await?;
    }
    Ok(conn)
}

/// The data directory of a PostgreSQL server (its images, files a spec
/// names), set once at start: a SQLite database's is the file's folder.
static DATA_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

pub fn set_data_dir(dir: &Path) {
    let _ = DATA_DIR.set(dir.to_owned());
}

/// The database `pool` was opened on.
pub fn location_of(pool: &AnyPool) -> Location {
    let url = &pool.connect_options().database_url;
    if is_postgres(pool) {
        return Location::Postgres(url.to_string());
    }
    match <sqlx::sqlite::SqliteConnectOptions as ConnectOptions>::from_url(url) {
        Ok(o) => Location::Sqlite(o.get_filename().to_path_buf()),
        Err(_) => Location::Sqlite(PathBuf::from(url.path())),
    }
}

/// Where files beside the database live: the SQLite file's folder, or on
/// PostgreSQL the data dir this process was started with.
pub fn data_dir(pool: &AnyPool) -> PathBuf {
    match location_of(pool) {
        Location::Sqlite(file) => file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(".")),
        Location::Postgres(_) => DATA_DIR.get().cloned().unwrap_or_else(|| PathBuf::from(".")),
    }
}

/// PostgreSQL's `BEGIN` for a writer: the transaction and its wait for, then
/// hold of, the advisory lock every writer of every process takes first
/// (released at commit or rollback, or when a killed server's connection
/// drops). One simple-protocol message with both statements: one round trip
/// where two were, in every write transaction and answer batch. The key is
/// "hardneg" in ASCII, written out as a simple query takes no parameters.
const BEGIN_LOCKED: &str = "BEGIN; SELECT pg_advisory_xact_lock(29380541517030759)";

/// Starts a write transaction. SQLite: `BEGIN IMMEDIATE` takes the file's
/// one write lock at once. PostgreSQL: [`BEGIN_LOCKED`], so writers in every
/// process take turns as they do on SQLite.
pub async fn begin_write(pool: &AnyPool) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
    pool.begin_with(if is_postgres(pool) { BEGIN_LOCKED } else { "BEGIN IMMEDIATE" }).await
}

/// Held while a server prepares its database (`serve --demo`): on
/// PostgreSQL a session advisory lock on a connection of its own, so two
/// servers started together on one new database seed it one after the
/// other (the second finds it seeded) instead of one dying on a duplicate
/// key; a killed server's lock goes with its connection. SQLite: nothing
/// (`serve.lock` admits one server per data dir).
pub struct SetupLock(Option<AnyConnection>);

/// The writers' key ("hardneg") plus one.
const SETUP_LOCK: &str = "SELECT pg_advisory_lock(29380541517030760)";

pub async fn hold_setup_lock(pool: &AnyPool) -> sqlx::Result<SetupLock> {
    if !is_postgres(pool) {
        return Ok(SetupLock(None));
    }
    // Detached: the lock must not go back to the pool with the connection.
    let mut conn = pool.acquire().await?.detach();
    conn.execute(SETUP_LOCK).await?;
    Ok(SetupLock(Some(conn)))
}

impl SetupLock {
    /// Ends the session, and with it the lock.
    pub async fn release(self) -> sqlx::Result<()> {
        match self.0 {
            Some(conn) => conn.close().await,
            None => Ok(()),
        }
    }
}

/// [`begin_write`] on a connection already held.
pub async fn begin_write_on(conn: &mut AnyConnection) -> sqlx::Result<sqlx::Transaction<'_, sqlx::Any>> {
    let statement = if is_sqlite(conn) { "BEGIN IMMEDIATE" } else { BEGIN_LOCKED };
    conn.begin_with(statement).await
}

/// The writer's raw BEGIN for a batch (it manages COMMIT itself).
pub async fn begin_batch(conn: &mut AnyConnection) -> sqlx::Result<()> {
    conn.execute(if is_sqlite(conn) { "BEGIN IMMEDIATE" } else { BEGIN_LOCKED }).await?;
    Ok(())
}

pub fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

pub fn now_millis() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A built `QueryBuilder`'s text and arguments, with its `?` placeholders
/// numbered `$1`, `$2`, …: under `Any` the builder writes `?`, which
/// PostgreSQL refuses (SQLite reads both). The pushed SQL must hold no `?`
/// of its own, which is true of every fragment this program pushes.
pub fn numbered<'a>(
    q: &'a mut sqlx::QueryBuilder<'a, sqlx::Any>,
) -> sqlx::Result<(String, sqlx::any::AnyArguments<'a>)> {
    use sqlx::Execute;
    let mut built = q.build();
    let args = built.take_arguments().map_err(sqlx::Error::Encode)?.unwrap_or_default();
    let mut sql = String::with_capacity(built.sql().len() + 16);
    let mut n = 0;
    for c in built.sql().chars() {
        if c == '?' {
            n += 1;
            sql.push('$');
            sql.push_str(&n.to_string());
        } else {
            sql.push(c);
        }
    }
    Ok((sql, args))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_locking_begin_locks_the_writers_key() {
        let key = i64::from_be_bytes(*b"\0hardneg");
        assert_eq!(super::BEGIN_LOCKED, format!("BEGIN; SELECT pg_advisory_xact_lock({key})"));
    }

    #[test]
    fn the_setup_lock_is_a_key_of_its_own() {
        let key = i64::from_be_bytes(*b"\0hardneg") + 1;
        assert_eq!(super::SETUP_LOCK, format!("SELECT pg_advisory_lock({key})"));
    }

    #[test]
    fn a_described_server_never_shows_its_password() {
        for (url, shown) in [
            ("postgres://alice:s3cr@t!@db.example:5433/lab", "postgres://alice@db.example:5433/lab"),
            ("postgres://alice@127.0.0.1/x?password=TOPSECRET", "postgres://alice@127.0.0.1:5432/x"),
            ("postgresql://bob:pw@h/d?sslmode=disable", "postgres://bob@h:5432/d"),
        ] {
            let described = super::Location::Postgres(url.into()).describe();
            assert_eq!(described, shown);
        }
        let odd = super::Location::Postgres("postgres://a:b@h:notaport/d".into()).describe();
        assert_eq!(odd, "a PostgreSQL URL that cannot be read");
    }
}
