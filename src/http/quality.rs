//! A link study's monitoring over HTTP (docs/crowd.md): the live dashboard,
//! the approve list as CSV, and discarding a flagged participant's copy.
//! Researchers and admins only.
use crate::crowd;
use crate::domain::crowd::figures::Dashboard;
use crate::domain::ids::{ParticipantId, StudyId};
use crate::error::ServiceError;
use crate::http::extract::{ApiPath, Researcher};
use crate::state::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/studies/{id}/dashboard", get(dashboard))
        .route("/api/v1/studies/{id}/approve-list.csv", get(approve_list))
        .route("/api/v1/studies/{id}/participants/{number}/discard", post(discard))
}

async fn dashboard(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<Dashboard>, ServiceError> {
    Ok(Json(crowd::dashboard(&state.db, id, state.crowd.clock.now()).await?))
}

async fn approve_list(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Response, ServiceError> {
    let body = crowd::approve::to_csv(&crowd::approve_list(&state.db, state.kinds, id).await?)?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"study-{id}-approve-list.csv\"")),
        ],
        body,
    )
        .into_response())
}

#[derive(Serialize)]
struct Discarded {
    participant: ParticipantId,
    state: crate::domain::crowd::lease::LeaseState,
}

async fn discard(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath((id, number)): ApiPath<(StudyId, ParticipantId)>,
) -> Result<Json<Discarded>, ServiceError> {
    Ok(Json(Discarded { participant: number, state: crowd::discard(&state.db, id, number).await? }))
}
