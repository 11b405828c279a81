//! Which database the tests' servers use (part of `helpers.rs`, which
//! benches and the browser tests include by path too).
use super::text;
use std::path::Path;
use std::process::Command;

/// The backend tests run on: SQLite (the data dir's file) unless
/// HARDNEG_TEST_BACKEND=postgres, when each data dir gets a database of its
/// own on the cluster at HARDNEG_PG_URL (scripts/test.sh starts one).
pub fn on_postgres() -> bool {
    std::env::var("HARDNEG_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// The `--database` of the data dir `data_dir`: on PostgreSQL a database
/// named after the dir, made on first use; None on SQLite.
pub fn database_of(data_dir: &Path) -> Option<String> {
    if !on_postgres() {
        return None;
    }
    Some(postgres_database(&pg_server(), &database_name(data_dir)))
}

fn pg_server() -> String {
    std::env::var("HARDNEG_PG_URL").expect("HARDNEG_TEST_BACKEND=postgres needs HARDNEG_PG_URL")
}

fn database_name(data_dir: &Path) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&data_dir, &mut h);
    format!("hardneg_t{:016x}", std::hash::Hasher::finish(&h))
}

/// Makes the database of `to_dir` a copy of `from_dir`'s (PostgreSQL's
/// `CREATE DATABASE … TEMPLATE`), once no session is left on the original.
pub fn clone_database(from_dir: &Path, to_dir: &Path) {
    let (from, to) = (database_name(from_dir), database_name(to_dir));
    let end = format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{from}' AND pid <> pg_backend_pid()"
    );
    let create = format!("CREATE DATABASE {to} TEMPLATE {from}");
    let made = Command::new("psql").args([&pg_server(), "-XqA", "-c", &end, "-c", &create]).output().expect("psql");
    assert!(made.status.success(), "{create}: {}", text(&made.stderr));
}

/// The URL of database `name` on the PostgreSQL server at `server`, made
/// (empty) if it is not there yet.
pub fn postgres_database(server: &str, name: &str) -> String {
    let exists = Command::new("psql")
        .args([server, "-XtAc", &format!("SELECT 1 FROM pg_database WHERE datname = '{name}'")])
        .output()
        .expect("psql");
    if text(&exists.stdout).trim() != "1" {
        let made = Command::new("psql").args([server, "-XqAc", &format!("CREATE DATABASE {name}")]).output().unwrap();
        assert!(made.status.success(), "CREATE DATABASE {name}: {}", text(&made.stderr));
    }
    format!("{}/{name}", server.rsplit_once('/').expect("a URL with a database").0)
}

/// The database of `data_dir` as the server opens it (migrated).
pub async fn db_at(data_dir: &Path) -> sqlx::AnyPool {
    let location = match database_of(data_dir) {
        Some(url) => hardneg::store::db::Location::Postgres(url),
        None => hardneg::store::db::Location::Sqlite(data_dir.join("hardneg.sqlite")),
    };
    hardneg::store::db::open(&location).await.unwrap()
}

/// The `hardneg` binary on the data dir `data_dir` (and its database).
pub fn command_on(data_dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("HARDNEG_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_hardneg").into()));
    cmd.arg("--data-dir").arg(data_dir);
    if let Some(url) = database_of(data_dir) {
        cmd.env("HARDNEG_DATABASE", url);
    }
    cmd
}
