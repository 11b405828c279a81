//! `/api/v1/compare`: models against people on a dataset, and the
//! instances a model run fails.
use crate::api_types::{CompareReport, Failure};
use crate::error::ServiceError;
use crate::http::extract::{ApiQuery, Caller};
use crate::models::{compare, failures};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/compare", get(compare_models))
        .route("/api/v1/compare/datasets", get(datasets_with_results))
        .route("/api/v1/compare/failures", get(model_failures))
}

/// The datasets the comparison page lists.
async fn datasets_with_results(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<String>>, ServiceError> {
    caller.researcher()?;
    Ok(Json(compare::datasets_with_results(&state.db).await?))
}

#[derive(Deserialize)]
struct CompareQuery {
    dataset: String,
}

async fn compare_models(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CompareQuery>,
) -> Result<Json<CompareReport>, ServiceError> {
    caller.researcher()?;
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
    ApiQuery(q): ApiQuery<FailureQuery>,
) -> Result<Json<Vec<Failure>>, ServiceError> {
    caller.researcher()?;
    Ok(Json(failures::failures(&state.db, &q.dataset, &q.model, &q.score, q.neg_type.as_deref()).await?))
}
