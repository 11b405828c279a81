//! `GET /api/v1/studies/{id}/adaptive`: a study's adaptive overlap (docs/api.md).
use crate::domain::adaptive::AdaptiveReport;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::http::extract::{ApiPath, Researcher};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/studies/{id}/adaptive", get(adaptive))
}

/// Per item how many answers it took and why it stopped, and answers spent
/// against a fixed overlap of `max`; 404 for a study with a fixed overlap.
async fn adaptive(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<AdaptiveReport>, ServiceError> {
    Ok(Json(crate::studies::adaptive_report::report(&state.db, state.kinds, id).await?))
}
