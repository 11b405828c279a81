//! The comprehension check in the shell: grade an attempt, record it, and
//! on a pass take the participant's place (the lease, its tasks) in one
//! `BEGIN IMMEDIATE` transaction on the writer's gate, as arrival does. A
//! failed first attempt sends it back to the instructions; a second ends it
//! with the screen-out code, without a lease ever having been taken.
use super::{link_of_study, Stage};
use crate::accounts::SessionUser;
use crate::domain::crowd::comprehension::{after_attempt, grade, AfterAttempt};
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::state::AppState;

/// Answers the comprehension check (`chosen`: one option index per question); the next stage.
pub async fn comprehension_answer(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    chosen: &[usize],
) -> Result<Stage, ServiceError> {
    let attempt = match super::stage(state, user, study).await? {
        Stage::Comprehension { attempt, .. } => attempt,
        _ => return Err(ServiceError::Invalid("there is no comprehension question to answer now".into())),
    };
    let link = link_of_study(&state.db, study).await?;
    let passed = grade(&link.settings.checks.comprehension, chosen).map_err(ServiceError::Invalid)?;
    let now = state.crowd.clock.now();
    let _one_at_a_time = state.writer.exclusive().await;
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    // Counted once per attempt: a double submit finds the count moved on.
    let counted = sqlx::query(
        "UPDATE participants SET comprehension_attempts = comprehension_attempts + 1
         WHERE user_id = $1 AND comprehension_attempts = $2 AND comprehension_passed_at IS NULL",
    )
    .bind(user.id)
    .bind(attempt - 1)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if counted == 1 {
        match after_attempt(attempt, passed) {
            AfterAttempt::Passed => {
                sqlx::query("UPDATE participants SET comprehension_passed_at = $1 WHERE user_id = $2")
                    .bind(now)
                    .bind(user.id)
                    .execute(&mut *tx)
                    .await?;
                // Full meanwhile: the stage says so, and nothing is leased.
                if let (Some(bundle), _) = super::place::reclaim_and_pick(&mut tx, study, now).await? {
                    super::place::take_place(&mut tx, state, &link, bundle, user.id, now).await?;
                }
            }
            // The instructions again, then the last attempt.
            AfterAttempt::ReadAgain => {
                sqlx::query("UPDATE participants SET instructed_at = NULL WHERE user_id = $1")
                    .bind(user.id)
                    .execute(&mut *tx)
                    .await?;
            }
            AfterAttempt::ScreenedOut => super::checks::screen_out(&mut tx, user.id, "comprehension", now).await?,
        }
    }
    tx.commit().await?;
    super::stage(state, user, study).await
}
