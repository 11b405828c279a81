//! The participant's way through its study: consent, instructions,
//! practice (feedback, never stored as answers), the bundle, the code.
//! Each step is read from and written to stored rows, so a reload, another
//! browser or a restart lands on the same step.
use super::{link_of_study, own_lease, own_place, Completion, Feedback, LinkRow, PracticeView, QuestionView, Stage};
use crate::accounts::SessionUser;
use crate::api_types::Prompt;
use crate::domain::crowd::lease::{overdue, LeaseState};
use crate::domain::ids::{InstanceId, StudyId};
use crate::domain::rng::mix;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::rows::from_row;
use crate::studies::meta::study_meta;
use crate::studies::tasks::image_url;

/// The participant's steps as stored.
struct Steps {
    consented_at: Option<i64>,
    instructed_at: Option<i64>,
    practice_done: i64,
    comprehension_attempts: i64,
    comprehension_passed_at: Option<i64>,
    screened_out_reason: Option<String>,
}
#[rustfmt::skip]
from_row!(Steps {
    consented_at, instructed_at, practice_done, comprehension_attempts, comprehension_passed_at, screened_out_reason
});

async fn steps(state: &AppState, user: &SessionUser) -> Result<Steps, ServiceError> {
    Ok(sqlx::query_as(
        "SELECT consented_at, instructed_at, practice_done, comprehension_attempts, comprehension_passed_at,
                screened_out_reason FROM participants WHERE user_id = $1",
    )
    .bind(user.id)
    .fetch_one(&state.db)
    .await?)
}

/// What the participant's page must show now.
pub async fn stage(state: &AppState, user: &SessionUser, study: StudyId) -> Result<Stage, ServiceError> {
    let place = own_place(state, user, study).await?;
    let link = link_of_study(&state.db, study).await?;
    let s = steps(state, user).await?;
    if let Some(reason) = s.screened_out_reason {
        let c = link.screen_out();
        return Ok(Stage::ScreenedOut { reason, code: c.code, url: c.url });
    }
    if matches!(place, Some((_, LeaseState::Returned))) {
        return Ok(Stage::Returned);
    }
    if s.consented_at.is_none() {
        return Ok(Stage::Consent { text: link.settings.consent.clone() });
    }
    if s.instructed_at.is_none() {
        let text = study_meta(state, study).await?.instructions.clone();
        return Ok(Stage::Instructions { text, again: s.comprehension_attempts > 0 });
    }
    let questions = &link.settings.checks.comprehension;
    if !questions.is_empty() && s.comprehension_passed_at.is_none() {
        let questions =
            questions.iter().map(|q| QuestionView { question: q.question.clone(), options: q.options.clone() });
        return Ok(Stage::Comprehension { attempt: s.comprehension_attempts + 1, questions: questions.collect() });
    }
    let Some((_, lease)) = place else {
        return Ok(Stage::Full { code: link.full_code.clone() });
    };
    let practiced = s.practice_done;
    if (practiced as usize) < link.settings.practice.len() {
        return Ok(Stage::Practice(practice_view(state, user, &link, practiced as usize).await?));
    }
    if let Some(c) = finished(state, user, study, &link).await? {
        return Ok(Stage::Complete { code: c.code, url: c.url });
    }
    let (done, total, expires): (i64, i64, i64) = sqlx::query_as(
        "SELECT p.done, p.total, l.expires_at FROM participations p JOIN leases l ON l.user_id = p.user_id
         WHERE p.study_id = $1 AND p.user_id = $2",
    )
    .bind(study)
    .bind(user.id)
    .fetch_one(&state.db)
    .await?;
    let late = lease == LeaseState::TimedOut || overdue(expires, state.crowd.clock.now());
    Ok(Stage::Working { done, total, late })
}

/// The code, when every task of the participant's bundle has a stored answer.
async fn finished(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    link: &LinkRow,
) -> Result<Option<Completion>, ServiceError> {
    // The tasks, and those without a stored answer, in one statement.
    let (any, open): (i64, i64) = sqlx::query_as(
        "SELECT count(*), coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM answers a WHERE a.task_id = t.id)
                                            THEN 0 ELSE 1 END), 0)
         FROM tasks t WHERE t.study_id = $1 AND t.user_id = $2",
    )
    .bind(study)
    .bind(user.id)
    .fetch_one(&state.db)
    .await?;
    Ok((open == 0 && any > 0).then(|| link.completion()))
}

/// The completion code and URL; refused until every task has a stored answer.
pub async fn completion(state: &AppState, user: &SessionUser, study: StudyId) -> Result<Completion, ServiceError> {
    let (_, lease) = own_lease(state, user, study).await?;
    match lease {
        LeaseState::Returned => return Err(ServiceError::Invalid("you returned this study".into())),
        LeaseState::ScreenedOut => return Err(ServiceError::Invalid("your participation was ended".into())),
        _ => {}
    }
    let link = link_of_study(&state.db, study).await?;
    finished(state, user, study, &link).await?.ok_or_else(|| {
        ServiceError::Invalid("not finished: some tasks of your bundle have no stored answer yet".into())
    })
}

/// Sets one of the participant's step times, once; then the next stage.
async fn mark(state: &AppState, user: &SessionUser, study: StudyId, column: &str) -> Result<Stage, ServiceError> {
    if matches!(own_place(state, user, study).await?, Some((_, LeaseState::Returned))) {
        return Ok(Stage::Returned);
    }
    sqlx::query(&format!("UPDATE participants SET {column} = coalesce({column}, $1) WHERE user_id = $2"))
        .bind(state.crowd.clock.now())
        .bind(user.id)
        .execute(&state.db)
        .await?;
    stage(state, user, study).await
}

pub async fn accept_consent(state: &AppState, user: &SessionUser, study: StudyId) -> Result<Stage, ServiceError> {
    mark(state, user, study, "consented_at").await
}

/// Instructions come after consent: read before it, they change nothing.
pub async fn instructions_read(state: &AppState, user: &SessionUser, study: StudyId) -> Result<Stage, ServiceError> {
    match stage(state, user, study).await? {
        Stage::Instructions { .. } => mark(state, user, study, "instructed_at").await,
        other => Ok(other),
    }
}

/// Practice item `index` as the participant sees it (seeded by study, participant and item).
async fn practice_view(
    state: &AppState,
    user: &SessionUser,
    link: &LinkRow,
    index: usize,
) -> Result<PracticeView, ServiceError> {
    let (_, p) = present_practice(state, user, link, index).await?;
    let meta = study_meta(state, link.study_id).await?;
    Ok(PracticeView {
        index,
        count: link.settings.practice.len(),
        item_instructions: p.instructions.is_some(),
        instructions: p.instructions.map(str::to_string).unwrap_or_else(|| meta.instructions.clone()),
        prompt: Prompt { text: p.prompt_text, image_url: p.prompt_image.as_deref().map(image_url) },
        options: crate::studies::tasks::option_views(p.options),
    })
}

async fn present_practice(
    state: &AppState,
    user: &SessionUser,
    link: &LinkRow,
    index: usize,
) -> Result<(String, crate::domain::survey::Presentation), ServiceError> {
    let item =
        link.settings.practice.get(index).ok_or_else(|| ServiceError::Invalid(format!("no practice item {index}")))?;
    let meta = study_meta(state, link.study_id).await?;
    let instance: InstanceId = sqlx::query_scalar(
        "SELECT i.id FROM instances i JOIN studies s ON s.dataset_id = i.dataset_id WHERE s.id = $1 AND i.key = $2",
    )
    .bind(link.study_id)
    .bind(&item.key)
    .fetch_one(&state.db)
    .await?;
    let data = crate::studies::meta::load_item(&state.db, meta.kind, link.study_id, instance, 0).await?;
    let seed = mix(&[meta.seed, user.id.get() as u64, 0x5052_4143, index as u64]) >> 1;
    let p = meta.kind.present(&data, seed).map_err(|e| ServiceError::internal("presenting the practice item", e))?;
    Ok((item.answer.clone(), p))
}

/// Checks a practice answer and moves on; nothing is stored as an answer.
/// Answering an earlier item again gives its feedback again.
pub async fn practice_answer(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    index: usize,
    option: &str,
) -> Result<Feedback, ServiceError> {
    let (_, lease) = own_lease(state, user, study).await?;
    if lease == LeaseState::Returned {
        return Err(ServiceError::Invalid("you returned this study".into()));
    }
    let link = link_of_study(&state.db, study).await?;
    let Steps { consented_at, instructed_at, practice_done: done, .. } = steps(state, user).await?;
    if consented_at.is_none() || instructed_at.is_none() {
        return Err(ServiceError::Invalid("practice comes after consent and instructions".into()));
    }
    if index > done as usize {
        return Err(ServiceError::Invalid(format!("practice item {index} comes after item {done}")));
    }
    let (right_value, p) = present_practice(state, user, &link, index).await?;
    let (chosen, value) = match p.resolve(option) {
        Ok(o) => (o.id.clone(), o.value.clone()),
        // Not an option as shown: what the kind's own card sends (a triplet
        // check's verdict and tag), read as a real answer is, so a practice
        // item refuses with the same words.
        Err(_) => {
            let kind = study_meta(state, study).await?.kind;
            kind.answer(&p, option).map_err(|e| ServiceError::Invalid(e.to_string()))?
        }
    };
    let right = p.options.iter().find(|o| o.value == right_value).map(|o| o.id.clone()).unwrap_or_default();
    let feedback_correct = value == right_value;
    sqlx::query(
        "UPDATE participants SET practice_done = CASE WHEN practice_done > $1 THEN practice_done ELSE $1 END
         WHERE user_id = $2",
    )
    .bind(index as i64 + 1)
    .bind(user.id)
    .execute(&state.db)
    .await?;
    Ok(Feedback { correct: feedback_correct, chosen, right, next: stage(state, user, study).await? })
}

/// Gives the study back: the place returns to the pool, the answers so far
/// are kept but not counted.
pub async fn return_study(state: &AppState, user: &SessionUser, study: StudyId) -> Result<Stage, ServiceError> {
    // Before the comprehension check there is no place to give back:
    // nothing changes here, and the page says to return it on Prolific.
    let Some((_, lease)) = own_place(state, user, study).await? else {
        return Ok(Stage::Returned);
    };
    if !lease.may_answer() {
        return match lease {
            LeaseState::Returned => Ok(Stage::Returned),
            _ => Err(ServiceError::Invalid("you have finished this study; there is nothing to return".into())),
        };
    }
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    let returned = sqlx::query(
        "UPDATE leases SET state = 'returned', ended_at = $1 WHERE user_id = $2 AND state IN ('active', 'timed_out')",
    )
    .bind(state.crowd.clock.now())
    .bind(user.id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if returned == 0 {
        // Another tab ended the place between the read above and this write:
        // its last answer finished it (not returned, audit AO), or it returned.
        let now: Option<String> = sqlx::query_scalar("SELECT state FROM leases WHERE user_id = $1")
            .bind(user.id)
            .fetch_optional(&mut *tx)
            .await?;
        tx.rollback().await?;
        return match now.as_deref().and_then(LeaseState::parse) {
            Some(LeaseState::Returned) => Ok(Stage::Returned),
            _ => Err(ServiceError::Invalid("you have finished this study; there is nothing to return".into())),
        };
    }
    crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    tx.commit().await?;
    Ok(Stage::Returned)
}
