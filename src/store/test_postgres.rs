//! A throw-away PostgreSQL database for the unit tests of what only
//! PostgreSQL runs (the sqlx answer writer), on the cluster `HARDNEG_PG_URL`
//! names: `scripts/test.sh` starts one (`scripts/pg-cluster.sh`). Without
//! it these tests fail, saying so, unless `HARDNEG_SKIP_PG=1` skips them,
//! as the API tests' schema check does.
use super::db::{open, Location};
use sqlx::{AnyPool, Connection, Executor};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A new, migrated database; None when `HARDNEG_SKIP_PG` is set.
pub(crate) async fn database() -> Option<(AnyPool, Location)> {
    if std::env::var_os("HARDNEG_SKIP_PG").is_some() {
        return None;
    }
    let server = std::env::var("HARDNEG_PG_URL").expect(
        "HARDNEG_PG_URL is not set: run `eval \"$(scripts/pg-cluster.sh start)\"` first \
         (scripts/test.sh does), or set HARDNEG_SKIP_PG=1",
    );
    let name = format!("hardneg_unit_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    sqlx::any::install_default_drivers();
    let mut admin = sqlx::AnyConnection::connect(&server).await.expect("connecting to the test cluster");
    admin.execute(format!("DROP DATABASE IF EXISTS {name}").as_str()).await.unwrap();
    admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
    let base = server.rsplit_once('/').expect("a URL with a database").0;
    let location = Location::parse(&format!("{base}/{name}")).unwrap();
    Some((open(&location).await.unwrap(), location))
}

/// Drops every foreign key, so a test writes bare rows (tasks without their
/// study, user and instance), as SQLite's `PRAGMA foreign_keys = OFF` lets it.
pub(crate) async fn without_foreign_keys(pool: &AnyPool) {
    let drop_all = "DO $$ DECLARE r record; BEGIN
        FOR r IN SELECT conrelid::regclass::text AS t, conname FROM pg_constraint WHERE contype = 'f' LOOP
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname);
        END LOOP; END $$";
    sqlx::query(drop_all).execute(pool).await.unwrap();
}
