//! PostgreSQL as a second backend (issue 36), on a throw-away cluster that
//! scripts/test.sh starts (scripts/pg-cluster.sh) and names in
//! HARDNEG_PG_URL. The schema in migrations/postgres must describe the same
//! tables as SQLite's migrations: same columns (name, type class, NOT NULL,
//! default), keys, unique sets, indexes, foreign keys and views, so every
//! statement that runs on one runs on the other.
use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;
use sqlx::{Connection, Executor, PgConnection, Row};
use std::collections::{BTreeMap, BTreeSet};

/// The server of the throw-away cluster. Without it the test fails (rather
/// than passing unseen); set HARDNEG_SKIP_PG=1 to leave PostgreSQL out.
pub fn server_url() -> Option<String> {
    if std::env::var_os("HARDNEG_SKIP_PG").is_some() {
        return None;
    }
    Some(std::env::var("HARDNEG_PG_URL").expect(
        "HARDNEG_PG_URL is not set: run `eval \"$(scripts/pg-cluster.sh start)\"` first \
         (scripts/test.sh does), or set HARDNEG_SKIP_PG=1",
    ))
}

/// A fresh database on that server for one test, dropped by `drop_database`.
pub async fn fresh_database(server: &str, name: &str) -> String {
    let mut admin = PgConnection::connect(server).await.expect("connecting to the test cluster");
    admin.execute(format!("DROP DATABASE IF EXISTS {name}").as_str()).await.unwrap();
    admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
    format!("{}/{name}", server.rsplit_once('/').expect("a URL with a database").0)
}

pub async fn drop_database(server: &str, name: &str) {
    let mut admin = PgConnection::connect(server).await.unwrap();
    admin.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await.unwrap();
}

#[derive(Debug, Default, PartialEq)]
struct Table {
    /// name -> (type class, NOT NULL, has a default)
    columns: BTreeMap<String, (&'static str, bool, bool)>,
    primary_key: Vec<String>,
    unique: BTreeSet<Vec<String>>,
    /// Named indexes made by CREATE INDEX: name -> (columns, partial).
    indexes: BTreeMap<String, (Vec<String>, bool)>,
    /// (column, referenced table, referenced column)
    foreign_keys: BTreeSet<(String, String, String)>,
}

#[derive(Debug, Default, PartialEq)]
struct Schema {
    tables: BTreeMap<String, Table>,
    views: BTreeMap<String, Vec<String>>,
}

fn class(declared: &str) -> &'static str {
    match declared.to_ascii_lowercase().as_str() {
        "integer" | "bigint" | "smallint" => "integer",
        "real" | "double precision" => "real",
        "text" => "text",
        "blob" | "bytea" => "blob",
        other => panic!("a column type the backends do not share: {other}"),
    }
}

/// Tables the program's migrations do not make (each store makes its own).
fn ours(table: &str) -> bool {
    !table.starts_with("sqlite_") && table != "_sqlx_migrations" && table != "tower_sessions"
}

async fn sqlite_schema(db: &SqlitePool) -> Schema {
    let mut schema = Schema::default();
    let objects: Vec<(String, String)> =
        sqlx::query_as("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            .fetch_all(db)
            .await
            .unwrap();
    for (name, kind) in objects.into_iter().filter(|(n, _)| ours(n)) {
        let columns =
            sqlx::query("SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk FROM pragma_table_info($1)")
                .bind(&name)
                .fetch_all(db)
                .await
                .unwrap();
        if kind == "view" {
            schema.views.insert(name, columns.iter().map(|c| c.get::<String, _>(0)).collect());
            continue;
        }
        let mut t = Table::default();
        let mut pk: Vec<(i64, String)> = Vec::new();
        for c in &columns {
            let (col, declared, pk_pos): (String, String, i64) = (c.get(0), c.get(1), c.get(4));
            // A key column is NOT NULL on both (SQLite's rowid alias reports 0).
            t.columns.insert(col.clone(), (class(&declared), c.get::<bool, _>(2) || pk_pos > 0, c.get(3)));
            if pk_pos > 0 {
                pk.push((pk_pos, col));
            }
        }
        pk.sort();
        t.primary_key = pk.into_iter().map(|(_, c)| c).collect();
        let indexes: Vec<(String, bool, String, bool)> =
            sqlx::query_as("SELECT name, \"unique\", origin, partial FROM pragma_index_list($1)")
                .bind(&name)
                .fetch_all(db)
                .await
                .unwrap();
        for (index, unique, origin, partial) in indexes {
            let cols: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_index_info($1) ORDER BY seqno")
                .bind(&index)
                .fetch_all(db)
                .await
                .unwrap();
            match origin.as_str() {
                "pk" => {}
                "u" => {
                    t.unique.insert(cols);
                }
                _ if unique => {
                    t.unique.insert(cols);
                }
                _ => {
                    t.indexes.insert(index, (cols, partial));
                }
            }
        }
        let fks: Vec<(String, String, Option<String>)> =
            sqlx::query_as("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list($1)")
                .bind(&name)
                .fetch_all(db)
                .await
                .unwrap();
        for (from, table, to) in fks {
            // A reference without a column names the other table's key.
            t.foreign_keys.insert((from, table, to.unwrap_or_else(|| "id".into())));
        }
        schema.tables.insert(name, t);
    }
    schema
}

async fn postgres_schema(db: &PgPool) -> Schema {
    let mut schema = Schema::default();
    let columns = sqlx::query(
        "SELECT c.table_name::text, c.column_name::text, c.data_type::text, c.is_nullable = 'NO',
                c.column_default IS NOT NULL AND c.is_identity = 'NO', t.table_type = 'VIEW'
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position",
    )
    .fetch_all(db)
    .await
    .unwrap();
    for c in &columns {
        let (table, col, ty): (String, String, String) = (c.get(0), c.get(1), c.get(2));
        if !ours(&table) {
            continue;
        }
        if c.get::<bool, _>(5) {
            schema.views.entry(table).or_default().push(col);
        } else {
            schema.tables.entry(table).or_default().columns.insert(col, (class(&ty), c.get(3), c.get(4)));
        }
    }
    let indexes = sqlx::query(
        "SELECT t.relname::text, i.relname::text, x.indisunique, x.indisprimary, x.indpred IS NOT NULL,
                ARRAY(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY k(n, ord)
                      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.ord)
         FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_namespace ns ON ns.oid = t.relnamespace WHERE ns.nspname = 'public'",
    )
    .fetch_all(db)
    .await
    .unwrap();
    for r in &indexes {
        let (table, index): (String, String) = (r.get(0), r.get(1));
        let Some(t) = schema.tables.get_mut(&table) else { continue };
        let cols: Vec<String> = r.get(5);
        if r.get::<bool, _>(3) {
            t.primary_key = cols;
        } else if r.get::<bool, _>(2) {
            t.unique.insert(cols);
        } else {
            t.indexes.insert(index, (cols, r.get(4)));
        }
    }
    let fks = sqlx::query(
        "SELECT t.relname::text, a.attname::text, rt.relname::text, ra.attname::text
         FROM pg_constraint co JOIN pg_class t ON t.oid = co.conrelid JOIN pg_class rt ON rt.oid = co.confrelid
         JOIN pg_namespace ns ON ns.oid = t.relnamespace
         CROSS JOIN LATERAL unnest(co.conkey, co.confkey) AS k(c, r)
         JOIN pg_attribute a ON a.attrelid = co.conrelid AND a.attnum = k.c
         JOIN pg_attribute ra ON ra.attrelid = co.confrelid AND ra.attnum = k.r
         WHERE co.contype = 'f' AND ns.nspname = 'public'",
    )
    .fetch_all(db)
    .await
    .unwrap();
    for r in &fks {
        if let Some(t) = schema.tables.get_mut(&r.get::<String, _>(0)) {
            t.foreign_keys.insert((r.get(1), r.get(2), r.get(3)));
        }
    }
    schema
}

#[tokio::test]
async fn the_postgres_schema_is_sqlites_table_for_table() {
    let Some(server) = server_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hardneg.db");
    hardneg::store::db::open_pool(&file).await.unwrap().close().await;
    // Read back natively: the schema's own types, not `Any`'s.
    let sqlite = SqlitePool::connect(&format!("sqlite://{}", file.display())).await.unwrap();
    let name = format!("hardneg_schema_{}", std::process::id());
    let url = fresh_database(&server, &name).await;
    let pg = PgPool::connect(&url).await.unwrap();
    hardneg::store::db::PG_MIGRATOR.run(&pg).await.expect("PostgreSQL migrations run on an empty database");
    // Run twice: a second start of the server must find nothing to do.
    hardneg::store::db::PG_MIGRATOR.run(&pg).await.unwrap();

    let (lite, post) = (sqlite_schema(&sqlite).await, postgres_schema(&pg).await);
    pg.close().await;
    drop_database(&server, &name).await;
    assert!(lite.tables.len() >= 27 && lite.views.len() >= 2, "SQLite's schema read back: {lite:#?}");
    for (table, shape) in &lite.tables {
        assert_eq!(Some(shape), post.tables.get(table), "table {table} differs (left: SQLite, right: PostgreSQL)");
    }
    assert_eq!(
        lite.tables.keys().collect::<Vec<_>>(),
        post.tables.keys().collect::<Vec<_>>(),
        "the same tables on both backends"
    );
    assert_eq!(lite.views, post.views, "the same views, with the same columns in the same order");
}

/// Both migration sets end at the same version, so a backup's schema
/// version (store::backup) means the same whichever backend wrote it.
#[test]
fn both_backends_end_at_the_same_migration_version() {
    let last = |m: &sqlx::migrate::Migrator| m.iter().map(|m| m.version).max().unwrap();
    assert_eq!(last(&hardneg::store::db::MIGRATOR), last(&hardneg::store::db::PG_MIGRATOR));
}

/// `--database` refuses what it cannot use, saying what and where, and
/// never prints a password.
#[test]
fn a_wrong_scheme_or_an_unreachable_server_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = |url: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hardneg"))
            .args(["datasets", "--data-dir"])
            .arg(dir.path())
            .args(["--database", url])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{url} was accepted");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = run("mysql://root@localhost/hardneg");
    assert!(err.contains("--database") && err.contains("\"mysql\""), "{err}");
    // Port 1 on loopback: nothing listens there.
    let err = run("postgres://hardneg:s3cret-pw@127.0.0.1:1/hardneg");
    assert!(err.contains("opening database postgres://hardneg@127.0.0.1:1/hardneg"), "{err}");
    assert!(!err.contains("s3cret-pw"), "the password is shown: {err}");
    let err = run("sqlite://");
    assert!(err.contains("--database: sqlite:// needs a file path"), "{err}");
    assert!(!dir.path().join("hardneg.sqlite").exists(), "nothing was written to the data dir");
}
