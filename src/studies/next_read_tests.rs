use super::NextRow;
use crate::store::db;
use crate::store::local_reads::LocalReads;
use crate::store::statements::NEXT_TASKS;

type Row = (i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>, Option<String>);

#[tokio::test]
async fn next_tasks_walks_the_queue_in_order_without_temporary_tables() {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    // Three tasks of study 1 for user 1 (foreign keys off: no study, user
    // or instance rows), positions against id order so that only the ORDER
    // BY can give 3, 2.
    for sql in [
        "PRAGMA foreign_keys = OFF",
        "INSERT INTO tasks (id, study_id, user_id, instance_id, position, seed) VALUES (1, 1, 1, 1, 9, 0), (2, 1, 1, 2, 8, 0), (3, 1, 1, 3, 7, 0)",
        "INSERT INTO participations (study_id, user_id, total) VALUES (1, 1, 3)",
    ] {
        sqlx::query(sql).execute(&mut *conn).await.unwrap();
    }

    let plan = query_plan(&mut conn).await;
    assert!(
        plan.iter().all(|d| !d.contains("TEMP B-TREE") && !d.contains("MATERIALIZE")),
        "the next-task query builds temporary tables: {plan:?}"
    );

    // The round trip reads on the calling thread: the same rows, and each
    // commit of another connection seen by the next read.
    let local = LocalReads::open(&db::location_of(&pool)).expect("a SQLite file");
    let rows: Vec<Row> = sqlx::query_as(NEXT_TASKS.sqlite).bind(1).bind(1).fetch_all(&mut *conn).await.unwrap();
    let ids: Vec<Option<i64>> = rows.iter().map(|r| r.2).collect();
    assert_eq!(ids, [Some(3), Some(2)]);
    assert_eq!(local_rows(&local, 1), [(0, 3, Some(3)), (0, 3, Some(2))]);

    sqlx::query("UPDATE tasks SET done = 1").execute(&mut *conn).await.unwrap();
    let rows: Vec<Row> = sqlx::query_as(NEXT_TASKS.sqlite).bind(1).bind(1).fetch_all(&mut *conn).await.unwrap();
    assert_eq!(rows.len(), 1, "progress without tasks: {rows:?}");
    assert_eq!(rows[0].2, None);
    assert_eq!(local_rows(&local, 1), [(0, 3, None)]);
    let none: Vec<Row> = sqlx::query_as(NEXT_TASKS.sqlite).bind(1).bind(2).fetch_all(&mut *conn).await.unwrap();
    assert!(none.is_empty(), "no participation, no row");
    assert_eq!(local_rows(&local, 2), []);
}

/// (done, total, task id) of user `user`'s next tasks in study 1, read in place.
fn local_rows(local: &LocalReads, user: i64) -> Vec<(i64, i64, Option<i64>)> {
    let rows: Vec<NextRow> = local
        .read(|c| c.prepare_cached(NEXT_TASKS.sqlite)?.query_map((1, user), NextRow::from_local)?.collect())
        .unwrap();
    rows.iter().map(|r| (r.done, r.total, r.task_id.map(|t| t.get()))).collect()
}

/// EXPLAIN QUERY PLAN's rows are (id, parent, notused, detail).
async fn query_plan(conn: &mut sqlx::AnyConnection) -> Vec<String> {
    let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {}", NEXT_TASKS.sqlite))
        .bind(1)
        .bind(1)
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    rows.into_iter().map(|r| r.3).collect()
}
