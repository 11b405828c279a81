//! What a link study (docs/crowd.md) stores beside the study, written in
//! the study's own lifecycle: the link, its bundles and check items at
//! creation (`setup`, `checks::prepare`), follow-up bundles as adaptive
//! rounds decide (`followup`), and a participant's lease as the answer path
//! reads and ends it (`own_lease`, `checks::attention_answered`). The
//! participant's way through and the researcher's view build on these in
//! `crate::crowd`, which this module never names.
pub mod checks;
pub mod followup;
pub mod setup;

use crate::accounts::SessionUser;
use crate::domain::crowd::lease::LeaseState;
use crate::domain::crowd::spec::LinkSettings;
use crate::domain::crowd::steps::StepsDone;
use crate::domain::ids::{BundleId, StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::ids::Flag;
use crate::store::rows::from_row;

/// A link study's settings and codes as stored.
pub struct LinkRow {
    pub study_id: StudyId,
    pub token: String,
    pub open: bool,
    pub completion_code: String,
    pub full_code: Option<String>,
    pub settings: LinkSettings,
}

/// A `study_links` row; [`link_row`] parses its settings.
struct StoredLink {
    study_id: StudyId,
    token: String,
    open: bool,
    completion_code: String,
    full_code: Option<String>,
    settings: String,
}
from_row!(StoredLink { study_id, token, open as Flag, completion_code, full_code, settings });

fn link_row(row: StoredLink) -> Result<LinkRow, ServiceError> {
    let StoredLink { study_id, token, open, completion_code, full_code, settings } = row;
    let settings = serde_json::from_str(&settings)
        .map_err(|e| ServiceError::internal(format!("study {study_id} has corrupt link settings"), e))?;
    Ok(LinkRow { study_id, token, open, completion_code, full_code, settings })
}

/// The columns of `study_links sl` a [`LinkRow`] is read from, alone or
/// beside others (an arrival reads its participant in the same statement).
pub(crate) const LINK_SL_COLUMNS: &str =
    "sl.study_id, sl.token, sl.open, sl.completion_code, sl.full_code, sl.settings";

/// The link in a row that holds [`LINK_SL_COLUMNS`] (read by name).
pub(crate) fn link_in(row: &sqlx::any::AnyRow) -> Result<LinkRow, ServiceError> {
    link_row(<StoredLink as sqlx::FromRow<_>>::from_row(row)?)
}

/// What a token no link has (or that is no token at all) meets.
pub(crate) fn unknown_token() -> ServiceError {
    ServiceError::NotFound("no study has this link; check the address".into())
}

/// The link of a study; NotFound, saying which, when there is no such
/// study or it is not a link study.
pub(crate) async fn link_of_study(db: impl sqlx::AnyExecutor<'_>, study: StudyId) -> Result<LinkRow, ServiceError> {
    use sqlx::Row;
    let row = sqlx::query(&format!(
        "SELECT {LINK_SL_COLUMNS} FROM studies s LEFT JOIN study_links sl ON sl.study_id = s.id WHERE s.id = $1"
    ))
    .bind(study)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| ServiceError::NotFound(format!("no study {study}")))?;
    if row.try_get::<Option<i64>, _>("study_id")?.is_none() {
        return Err(ServiceError::NotFound(format!("study {study} is not a link study")));
    }
    link_in(&row)
}

/// A participant's lease in its own study: 403 for another study, for
/// anyone who is not a participant, or a participant of another study;
/// 422 while it holds no bundle yet (the comprehension check comes first).
pub async fn own_lease(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
) -> Result<(BundleId, LeaseState), ServiceError> {
    own_place(state, user, study).await?.ok_or_else(no_bundle_yet)
}

/// As [`own_lease`], but None for a participant the comprehension check
/// screened out before any bundle: their participation has ended (`next` is
/// 204). One whose place still takes answers must have gone through the
/// steps before the bundle (consent, instructions, `practice` items): a
/// 422 naming the first one missing otherwise.
pub async fn own_lease_unless_ended(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    practice: usize,
) -> Result<Option<(BundleId, LeaseState)>, ServiceError> {
    let (place, steps) = place_and_steps(state, user, study).await?;
    if let Some(place) = place {
        through_steps(place, steps, practice)?;
        return Ok(Some(place));
    }
    let reason: Option<String> =
        sqlx::query_scalar("SELECT screened_out_reason FROM participants WHERE user_id = $1 AND study_id = $2")
            .bind(user.id)
            .bind(study)
            .fetch_optional(&state.db)
            .await?
            .flatten();
    match reason {
        Some(_) => Ok(None),
        None => Err(no_bundle_yet()),
    }
}

/// Refuses a place that takes answers before the steps the page leads through first.
fn through_steps(place: (BundleId, LeaseState), steps: StepsDone, practice: usize) -> Result<(), ServiceError> {
    match steps.missing(practice).filter(|_| place.1.may_answer()) {
        Some(step) => Err(ServiceError::Invalid(format!("{step}; nothing was stored"))),
        None => Ok(()),
    }
}

fn no_bundle_yet() -> ServiceError {
    ServiceError::Invalid("you have no bundle yet: pass the comprehension check first".into())
}

/// The answer path for a participant: Ok(false) while its place takes
/// answers; Ok(true) when the place has ended but this task's answer is
/// stored (a repeat, the bundle's last say, its response lost: answered as
/// one); else the refusal (410 when the place was ended early).
pub async fn repeat_after_end(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    practice: usize,
    task: TaskId,
) -> Result<bool, ServiceError> {
    let (place, steps) = place_and_steps(state, user, study).await?;
    let place = place.ok_or_else(no_bundle_yet)?;
    if place.1.may_answer() {
        through_steps(place, steps, practice)?;
        return Ok(false);
    }
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM answers WHERE task_id = $1").bind(task).fetch_one(&state.db).await?;
    match (stored > 0, withdrawn(state, user).await?) {
        (true, _) => Ok(true),
        (false, true) => Err(withdrawn_error(task)),
        (false, false) => {
            Err(ServiceError::Invalid("your place in this study has ended; nothing more is stored".into()))
        }
    }
}

/// Whether the caller's place was ended early (adaptive overlap's
/// `end_uninformative`), which withdraws its unanswered tasks: an answer
/// racing that withdrawal is told so, not given an error.
pub async fn withdrawn(state: &AppState, user: &SessionUser) -> Result<bool, ServiceError> {
    if !user.role.is_participant() {
        return Ok(false);
    }
    let why: Option<Option<String>> = sqlx::query_scalar("SELECT ended_why FROM leases WHERE user_id = $1")
        .bind(user.id)
        .fetch_optional(&state.db)
        .await?;
    Ok(why.flatten().is_some())
}

/// 410: the item left the caller's queue before the answer was stored.
pub fn withdrawn_error(task_id: TaskId) -> ServiceError {
    ServiceError::Gone(format!(
        "task {task_id} was withdrawn before this answer was stored (your place in the study ended: you are done); \
         nothing was stored; ask for your next task"
    ))
}

/// The place, and the steps before it packed as [`StepsDone::unpack`] reads them.
const OWN_PLACE: &str = "SELECT l.bundle, l.state,
            CASE WHEN p.consented_at IS NULL THEN 0 WHEN p.instructed_at IS NULL THEN 1 ELSE 2 + p.practice_done END
     FROM participants p LEFT JOIN leases l ON l.user_id = p.user_id WHERE p.user_id = $1 AND p.study_id = $2";

/// As [`own_lease`], but a participant of the study without a lease is
/// `None` rather than an error.
pub async fn own_place(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
) -> Result<Option<(BundleId, LeaseState)>, ServiceError> {
    Ok(place_and_steps(state, user, study).await?.0)
}

/// The participant pages and routes are for participants only (403).
pub fn participants_only(user: &SessionUser) -> Result<(), ServiceError> {
    match user.role.is_participant() {
        true => Ok(()),
        false => Err(ServiceError::Forbidden("only participants who arrived by the study's link".into())),
    }
}

/// [`own_place`] and the steps before it. Read on every `next` and answer:
/// in place on SQLite (`store::local_reads`).
async fn place_and_steps(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
) -> Result<(Option<(BundleId, LeaseState)>, StepsDone), ServiceError> {
    // Most often the same person opened another study's link in this browser since.
    let refused = || {
        ServiceError::Forbidden(format!(
            "this browser takes part in another study than {study} now; open study {study} again from its link to go on"
        ))
    };
    participants_only(user)?;
    type Row = (Option<i64>, Option<String>, i64);
    let row: Option<Row> = match &state.local {
        Some(local) => local
            .read(|c| {
                use rusqlite::OptionalExtension;
                let mut read = c.prepare_cached(OWN_PLACE)?;
                read.query_row((user.id.get(), study.get()), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()
            })
            .map_err(|e| ServiceError::internal(format!("reading your place in study {study}"), e))?,
        None => sqlx::query_as(OWN_PLACE).bind(user.id).bind(study).fetch_optional(&state.db).await?,
    };
    let (bundle, lease, steps) = row.ok_or_else(refused)?;
    let place = match (bundle, lease) {
        (Some(bundle), Some(lease)) => Some((BundleId::new(bundle), lease_state(&lease)?)),
        _ => None,
    };
    Ok((place, StepsDone::unpack(steps)))
}

/// A stored lease state; an unknown one is an internal error.
pub(crate) fn lease_state(s: &str) -> Result<LeaseState, ServiceError> {
    LeaseState::parse(s).ok_or_else(|| ServiceError::Internal(format!("lease state {s:?}")))
}
