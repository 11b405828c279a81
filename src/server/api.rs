//! HTTP JSON API v1 (documented in docs/api.md). Each handler checks the
//! caller, then calls the same service functions the UI uses.
use super::auth::{self, SessionUser};
use super::error::ServiceError;
use super::state::AppState;
use super::{progress, studies, tasks};
use crate::api_types::{AnswerAck, AnswerRequest, CompareReport, StudyProgress, StudySummary};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use tower_sessions::Session;

/// The logged-in caller; 401 when there is none.
pub struct Caller(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|_| ServiceError::Internal("session layer missing".into()))?;
        auth::current_user(&session).await.map(Caller).ok_or(ServiceError::Unauthorized)
    }
}

impl Caller {
    pub fn researcher(self) -> Result<SessionUser, ServiceError> {
        if self.0.role.may_research() {
            Ok(self.0)
        } else {
            Err(ServiceError::Forbidden("researchers and admins only".into()))
        }
    }
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/session", post(login).delete(logout))
        .route("/api/v1/studies", get(list_studies))
        .route("/api/v1/studies/{id}/next", get(next))
        .route("/api/v1/studies/{id}/progress", get(study_progress))
        .route("/api/v1/tasks/{id}/answer", post(answer))
        .route("/api/v1/compare", get(compare))
        .route("/api/v1/studies/{id}/agreement", get(agreement))
        .merge(super::import_upload::routes())
}

#[derive(Deserialize)]
struct Credentials {
    username: String,
    password: String,
}

async fn login(
    State(state): State<AppState>,
    session: Session,
    Json(c): Json<Credentials>,
) -> Result<StatusCode, ServiceError> {
    match auth::check_credentials(&state.db, &c.username, &c.password).await {
        Ok(user) => {
            auth::log_in(&session, &user).await.map_err(|e| ServiceError::Internal(e.to_string()))?;
            Ok(StatusCode::NO_CONTENT)
        }
        Err(auth::AuthError::BadCredentials) => Err(ServiceError::BadCredentials),
        Err(e) => Err(ServiceError::Internal(e.to_string())),
    }
}

async fn logout(session: Session) -> Result<StatusCode, ServiceError> {
    auth::log_out(&session).await.map_err(|e| ServiceError::Internal(e.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

async fn list_studies(
    State(state): State<AppState>,
    Caller(user): Caller,
) -> Result<Json<Vec<StudySummary>>, ServiceError> {
    Ok(Json(visible_studies(&state, &user).await?))
}

/// Annotators see the studies that admit them; researchers and admins see all.
pub async fn visible_studies(state: &AppState, user: &SessionUser) -> Result<Vec<StudySummary>, ServiceError> {
    let all = studies::list_studies(state, user.id).await?;
    Ok(all
        .into_iter()
        .filter(|(meta, _)| user.role.may_research() || meta.annotators.admits(&user.username))
        .map(|(meta, progress)| studies::summary(&meta, progress))
        .collect())
}

async fn next(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<i64>,
) -> Result<Response, ServiceError> {
    Ok(match tasks::next_task(&state, &user, id).await? {
        Some(task) => Json(task).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

async fn answer(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(task_id): Path<i64>,
    body: Result<Json<AnswerRequest>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<AnswerAck>, ServiceError> {
    let Json(req) = body.map_err(|e| ServiceError::Invalid(format!("request body: {}", e.body_text())))?;
    Ok(Json(tasks::answer(&state, &user, task_id, &req.option, req.elapsed_ms).await?))
}

async fn study_progress(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<Json<StudyProgress>, ServiceError> {
    caller.researcher()?;
    Ok(Json(progress::study_progress(&state, id).await?))
}

#[derive(Deserialize)]
struct CompareQuery {
    dataset: String,
}

async fn compare(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<CompareQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<CompareReport>, ServiceError> {
    caller.researcher()?;
    let Query(q) = query.map_err(|_| ServiceError::Invalid("query parameter `dataset` is required".into()))?;
    Ok(Json(super::compare::compare(&state.db, &q.dataset).await?))
}

#[derive(Deserialize)]
struct AgreementQuery {
    mapping: Option<String>,
}

async fn agreement(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Query(q): Query<AgreementQuery>,
) -> Result<Json<super::agreement::AgreementOut>, ServiceError> {
    caller.researcher()?;
    let mapping = match q.mapping.as_deref() {
        None => None,
        Some(m) => Some(
            super::agreement::Mapping::parse(m)
                .ok_or_else(|| ServiceError::Invalid(format!("unknown mapping {m:?} (full or binary)")))?,
        ),
    };
    Ok(Json(super::agreement::study_agreement_report(&state.db, id, mapping).await?))
}
