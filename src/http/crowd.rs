//! Link studies over JSON: the participant's way through
//! (`/api/v1/take/{study}…`; the bundle itself is answered with
//! `/api/v1/studies/{id}/next` and `/api/v1/tasks/{id}/answer`) and the
//! researcher's participants, bundles and link.
use crate::crowd::{self, BundleRow, Completion, Feedback, LinkInfo, ParticipantRow, Stage};
use crate::domain::ids::{BundleId, StudyId};
use crate::error::ServiceError;
use crate::http::extract::{ApiJson, ApiPath, ApiQuery, Participant, Researcher};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/take/{study}", get(take_stage))
        .route("/api/v1/take/{study}/consent", post(consent))
        .route("/api/v1/take/{study}/instructions", post(instructions))
        .route("/api/v1/take/{study}/practice", post(practice))
        .route("/api/v1/take/{study}/comprehension", post(comprehension))
        .route("/api/v1/take/{study}/return", post(give_back))
        .route("/api/v1/take/{study}/completion", get(completion))
        .route("/api/v1/studies/{id}/participants", get(participants))
        .route("/api/v1/studies/{id}/bundles", get(bundles))
        .route("/api/v1/studies/{id}/bundles/{bundle}/reopen", post(reopen))
        .route("/api/v1/studies/{id}/link", get(link))
        .route("/api/v1/studies/{id}/link/rotate", post(rotate))
        .route("/api/v1/studies/{id}/close", post(close))
}

async fn take_stage(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
) -> Result<Json<Stage>, ServiceError> {
    Ok(Json(crowd::stage(&state, &user, study).await?))
}

async fn consent(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
) -> Result<Json<Stage>, ServiceError> {
    Ok(Json(crowd::accept_consent(&state, &user, study).await?))
}

async fn instructions(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
) -> Result<Json<Stage>, ServiceError> {
    Ok(Json(crowd::instructions_read(&state, &user, study).await?))
}

#[derive(Deserialize)]
struct PracticeAnswer {
    index: usize,
    option: String,
}

async fn practice(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
    ApiJson(a): ApiJson<PracticeAnswer>,
) -> Result<Json<Feedback>, ServiceError> {
    Ok(Json(crowd::practice_answer(&state, &user, study, a.index, &a.option).await?))
}

#[derive(Deserialize)]
struct ComprehensionAnswers {
    /// One option index per question, in order.
    answers: Vec<usize>,
}

async fn comprehension(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
    ApiJson(a): ApiJson<ComprehensionAnswers>,
) -> Result<Json<Stage>, ServiceError> {
    Ok(Json(crowd::comprehension_answer(&state, &user, study, &a.answers).await?))
}

async fn give_back(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
) -> Result<Json<Stage>, ServiceError> {
    Ok(Json(crowd::return_study(&state, &user, study).await?))
}

async fn completion(
    State(state): State<AppState>,
    Participant(user): Participant,
    ApiPath(study): ApiPath<StudyId>,
) -> Result<Json<Completion>, ServiceError> {
    Ok(Json(crowd::completion(&state, &user, study).await?))
}

#[derive(Deserialize)]
struct ParticipantsQuery {
    /// Include PROLIFIC_PIDs and the platform's study and session ids (personal data).
    #[serde(default)]
    platform_ids: bool,
}

async fn participants(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiQuery(q): ApiQuery<ParticipantsQuery>,
) -> Result<Json<Vec<ParticipantRow>>, ServiceError> {
    Ok(Json(crowd::participants(&state.db, id, q.platform_ids).await?))
}

async fn bundles(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<Vec<BundleRow>>, ServiceError> {
    Ok(Json(crowd::bundles(&state.db, id).await?))
}

#[derive(Serialize)]
struct Reopened {
    bundle: BundleId,
    /// Leases given back to the pool.
    ended: u64,
}

async fn reopen(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath((id, bundle)): ApiPath<(StudyId, BundleId)>,
) -> Result<Json<Reopened>, ServiceError> {
    Ok(Json(Reopened { bundle, ended: crowd::reopen(&state, id, bundle).await? }))
}

async fn link(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<LinkInfo>, ServiceError> {
    Ok(Json(crowd::link(&state.db, id).await?))
}

async fn rotate(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<LinkInfo>, ServiceError> {
    Ok(Json(crowd::rotate(&state.db, id).await?))
}

async fn close(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<LinkInfo>, ServiceError> {
    Ok(Json(crowd::close(&state.db, id).await?))
}
