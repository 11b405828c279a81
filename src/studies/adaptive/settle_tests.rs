use super::*;
use crate::store::db;

/// Study 1's answers as (task/answer id, user, instance, value,
/// answered_at), without tasks or people (foreign keys off on the connection).
async fn store(pool: &AnyPool, rows: &[(i64, i64, i64, &str, i64)]) {
    let mut conn = pool.acquire().await.unwrap();
    sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut *conn).await.unwrap();
    for &(task, user, instance, value, at) in rows {
        sqlx::query(
            "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at)
             VALUES ($1, 1, $2, $3, 'A', $4, '[]', 1000, $5)",
        )
        .bind(task)
        .bind(user)
        .bind(instance)
        .bind(value)
        .bind(at)
        .execute(&mut *conn)
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn a_fit_reads_the_first_answers_in_vote_order_whenever_it_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
    let kind = SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap();
    let study = StudyId::new(1);
    // Three people on 12 items: 1 and 2 agree, 3 answers "none" throughout.
    let mut rows = Vec::new();
    for item in 0..12i64 {
        let value = ["0", "1", "2", "3"][item as usize % 4];
        rows.push((item * 3 + 1, 1, item, value, 100 + item));
        rows.push((item * 3 + 2, 2, item, value, 100 + item));
        rows.push((item * 3 + 3, 3, item, "none", 100 + item));
    }
    store(&pool, &rows).await;
    let at_36 = fit_at(&pool, study, kind, 36).await.unwrap();
    let at_30 = fit_at(&pool, study, kind, 30).await.unwrap();
    assert_ne!(at_30, at_36, "six answers fewer fit alike: the test cannot tell the points apart");

    // Stored later but answered earlier: the point's answers are the first in
    // vote order, so an answer from before replaces the newest one in the fit.
    store(&pool, &[(100, 4, 0, "0", 50)]).await;
    assert_ne!(fit_at(&pool, study, kind, 36).await.unwrap(), at_36, "the early answer is in the first 36");
    let mut again = rows[..35].to_vec();
    again.insert(0, (100, 4, 0, "0", 50));
    let other = db::open_pool(&dir.path().join("other.sqlite")).await.unwrap();
    store(&other, &again).await;
    assert_eq!(
        fit_at(&pool, study, kind, 36).await.unwrap(),
        fit_at(&other, study, kind, 36).await.unwrap(),
        "the same first 36 answers, however many came after: the same fit"
    );

    // Answers after the point change nothing, wherever they are stored.
    let before = fit_at(&pool, study, kind, 30).await.unwrap();
    store(&pool, &[(101, 3, 5, "none", 900), (102, 3, 6, "none", 901)]).await;
    assert_eq!(fit_at(&pool, study, kind, 30).await.unwrap(), before);
}
