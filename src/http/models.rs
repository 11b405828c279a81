//! `/api/v1/compare`: models against people on a dataset, and the
//! instances a model run fails.
use crate::api_types::{CompareReport, Failure};
use crate::error::ServiceError;
use crate::http::extract::Caller;
use crate::models::{compare, failures};
use crate::state::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/compare", get(compare_models)).route("/api/v1/compare/failures", get(model_failures))
}

#[derive(Deserialize)]
struct CompareQuery {
    dataset: String,
}

async fn compare_models(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<CompareQuery>, QueryRejection>,
) -> Result<Json<CompareReport>, ServiceError> {
    caller.researcher()?;
    let Query(q) = query.map_err(|_| ServiceError::Invalid("query parameter `dataset` is required".into()))?;
    Ok(Json(compare::compare(&state.db, &q.dataset).await?))
}

#[derive(Deserialize)]
struct FailureQuery {
    dataset: String,
    model: String,
    #[serde(default = "group")]
    score: String,
    #[serde(rename = "type")]
    neg_type: Option<String>,
}

fn group() -> String {
    "group".into()
}

async fn model_failures(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<FailureQuery>, QueryRejection>,
) -> Result<Json<Vec<Failure>>, ServiceError> {
    caller.researcher()?;
    let Query(q) = query.map_err(|e| ServiceError::Invalid(format!("query: {}", e.body_text())))?;
    Ok(Json(failures::failures(&state.db, &q.dataset, &q.model, &q.score, q.neg_type.as_deref()).await?))
}
