//! Steps shared by the check tests: a POST with a JSON body, and whether a
//! participant holds a lease (read from the real database file).
use crate::helpers::TestApp;
use reqwest::Client;
use serde_json::Value;

pub async fn post_json(app: &TestApp, client: &Client, path: &str, body: Value) -> (u16, Value) {
    let res = client.post(app.url(path)).json(&body).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// True when the participant with this PID has no lease row.
pub async fn no_lease(app: &TestApp, study: i64, pid: &str) -> bool {
    let db = crate::crowd_checks::db(app).await;
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM leases l JOIN participants p ON p.user_id = l.user_id WHERE p.study_id = $1 AND p.platform_pid = $2",
    )
    .bind(study)
    .bind(pid)
    .fetch_one(&db)
    .await
    .unwrap();
    n == 0
}
