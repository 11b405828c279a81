//! Query plans on a real PostgreSQL server for the round trip's hottest
//! read: what SQLite's plan test (`studies/next_read_tests.rs`) checks there.
use crate::postgres::{drop_database, fresh_database, server_url};
use hardneg::store::statements::NEXT_TASKS;
use serde_json::Value;
use sqlx::postgres::PgPool;
use sqlx::{Executor, Row as _};

type Row = (i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>, Option<String>);

/// Tasks for participant 1 (and many for others), positions against id
/// order, so only the ORDER BY gives the right two, and a participant's
/// whole queue is long enough that reading it shows.
const QUEUE: i64 = 3000;

#[tokio::test]
async fn the_next_read_takes_two_tasks_from_the_queue_index_in_either_plan() {
    let Some(server) = server_url() else { return };
    let name = format!("hardneg_plans_{}", std::process::id());
    let url = fresh_database(&server, &name).await;
    let pg = PgPool::connect(&url).await.unwrap();
    hardneg::store::db::PG_MIGRATOR.run(&pg).await.unwrap();
    let mut conn = pg.acquire().await.unwrap();
    // No study, user or instance rows: foreign keys are not what is tested.
    conn.execute("SET session_replication_role = replica").await.unwrap();
    conn.execute(
        format!(
            "INSERT INTO tasks (study_id, user_id, instance_id, position, seed)
             SELECT 1, u, i, {QUEUE} - i, 0 FROM generate_series(1, 40) u, generate_series(1, {QUEUE}) i;
             INSERT INTO participations (study_id, user_id, total) SELECT 1, u, {QUEUE} FROM generate_series(1, 40) u;
             UPDATE tasks SET done = 1 WHERE user_id = 1 AND position < 10;
             ANALYZE"
        )
        .as_str(),
    )
    .await
    .unwrap();

    let rows: Vec<Row> =
        sqlx::query_as(NEXT_TASKS.postgres).bind(1_i64).bind(1_i64).fetch_all(&mut *conn).await.unwrap();
    let positions: Vec<i64> = rows.iter().map(|r| QUEUE - r.3.unwrap()).collect();
    assert_eq!(positions, [10, 11], "the two open tasks first in the queue: {rows:?}");
    assert_eq!((rows[0].0, rows[0].1), (0, QUEUE), "the participation's progress");

    // A custom plan (the first executions) and the generic one sqlx's
    // cached statement settles on: each reads two of the queue's tasks.
    for mode in ["force_custom_plan", "force_generic_plan"] {
        conn.execute(format!("SET plan_cache_mode = {mode}").as_str()).await.unwrap();
        conn.execute(format!("PREPARE next_{mode}(bigint, bigint) AS {}", NEXT_TASKS.postgres).as_str()).await.unwrap();
        let explain = format!("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE next_{mode}(1, 1)");
        let row = sqlx::query(&explain).fetch_one(&mut *conn).await.unwrap();
        let plan: Value = serde_json::from_str(&row.try_get_unchecked::<String, _>(0).unwrap()).unwrap();
        let mut read = Vec::new();
        rows_read_from(&plan[0]["Plan"], "tasks", &mut read);
        assert!(!read.is_empty(), "{mode}: no scan of tasks in {plan:#}");
        assert!(read.iter().all(|&n| n <= 2.0), "{mode}: a scan of tasks gave {read:?} rows: {plan:#}");
    }

    conn.execute("UPDATE tasks SET done = 1 WHERE user_id = 1").await.unwrap();
    let rows: Vec<Row> =
        sqlx::query_as(NEXT_TASKS.postgres).bind(1_i64).bind(1_i64).fetch_all(&mut *conn).await.unwrap();
    assert_eq!(rows.len(), 1, "progress without tasks: {rows:?}");
    assert_eq!(rows[0].2, None);
    let none: Vec<Row> =
        sqlx::query_as(NEXT_TASKS.postgres).bind(1_i64).bind(99_i64).fetch_all(&mut *conn).await.unwrap();
    assert!(none.is_empty(), "no participation, no row");
    drop(conn);
    pg.close().await;
    drop_database(&server, &name).await;
}

/// The actual rows per loop of every scan of `table` in an EXPLAIN (FORMAT JSON) plan.
fn rows_read_from(node: &Value, table: &str, out: &mut Vec<f64>) {
    if node["Relation Name"] == table {
        out.push(node["Actual Rows"].as_f64().expect("EXPLAIN ANALYZE gives actual rows"));
    }
    for child in node["Plans"].as_array().into_iter().flatten() {
        rows_read_from(child, table, out);
    }
}
