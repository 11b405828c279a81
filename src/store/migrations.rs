//! The schema's migrations, embedded: build.rs lists migrations/ and
//! migrations/postgres/, and each file becomes the `Migration` that
//! `sqlx::migrate!` made of it (version and description from the file
//! name, the SHA-384 of its text as checksum), so a database migrated by an
//! earlier build validates. Not the macro: see [`crate::store::rows`].
use sqlx::migrate::{Migration, MigrationType, Migrator};
use std::borrow::Cow;
use std::sync::LazyLock;

// SQLITE and POSTGRES: (version, description, text) in version order.
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

pub static MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE));
/// PostgreSQL's schema, the same tables (tests/api/postgres.rs compares them).
pub static PG_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES));

fn migrator(files: &'static [(i64, &'static str, &'static str)]) -> Migrator {
    let migrations = files
        .iter()
        .map(|&(version, description, sql)| {
            let no_tx = sql.starts_with("-- no-transaction");
            Migration::new(version, Cow::Borrowed(description), MigrationType::Simple, Cow::Borrowed(sql), no_tx)
        })
        .collect::<Vec<_>>();
    // What `migrate!` writes (its `Migrator::DEFAULT`): locking, every migration in a transaction.
    Migrator { migrations: Cow::Owned(migrations), ignore_missing: false, locking: true, no_tx: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(m: &Migrator) -> Vec<String> {
        m.iter()
            .map(|m| {
                let (v, d, t, c, n) = (m.version, &m.description, m.migration_type, &m.checksum, m.no_tx);
                format!("{v} {d:?} {t:?} {c:?} {n} {}", m.sql.len())
            })
            .collect()
    }

    /// What sqlx itself reads from the directories at run time, with the
    /// code `migrate!` used at compile time: the same versions,
    /// descriptions, types and checksums.
    #[tokio::test]
    async fn the_embedded_migrations_are_what_sqlx_reads_from_the_directories() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (embedded, dir) in [(&*MIGRATOR, "migrations"), (&*PG_MIGRATOR, "migrations/postgres")] {
            let read = Migrator::new(root.join(dir)).await.expect("sqlx reads the directory");
            assert!(read.iter().count() > 1, "{dir}");
            assert_eq!(described(embedded), described(&read), "{dir}");
        }
    }
}
