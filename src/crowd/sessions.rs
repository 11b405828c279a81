//! A participant's sessions from link arrivals. Each arrival in a browser
//! without the session cookie starts a session; a known PROLIFIC_PID
//! re-posting the join form without one (a script, or the same person in a
//! fourth browser) would add session rows without bound (an audit: 6,463
//! rows in 30 s from one address). The newest [`KEPT`] stay; an older one
//! is ended (that browser is asked to open the study link again).
use crate::domain::ids::UserId;
use crate::error::ServiceError;
use sqlx::AnyPool;

/// Sessions from arrivals again that one participant keeps (two browsers
/// is a real case: a phone and a laptop). The first arrival's own session
/// is not counted among them (recording it would cost every first arrival
/// a write): with it, at most `KEPT + 1` browsers at once.
pub const KEPT: usize = 3;

/// Records `session` as `user`'s newest, ending the ones past [`KEPT`].
pub async fn keep_newest(db: &AnyPool, user: UserId, session: &str) -> Result<(), ServiceError> {
    let mut tx = crate::store::db::begin_write(db).await?;
    let held: Option<String> = sqlx::query_scalar("SELECT link_sessions FROM participants WHERE user_id = $1")
        .bind(user)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(held) = held else { return Ok(()) };
    let (kept, ended) = crate::domain::crowd::sessions::newest(&held, session, KEPT);
    for id in &ended {
        sqlx::query("DELETE FROM tower_sessions WHERE id = $1").bind(id).execute(&mut *tx).await?;
    }
    sqlx::query("UPDATE participants SET link_sessions = $1 WHERE user_id = $2")
        .bind(kept)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
