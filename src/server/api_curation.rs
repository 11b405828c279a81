//! JSON API v1 for curation: creating studies, datasets and their funnel,
//! the adjudication queue. Researchers and admins only.
use super::api::Caller;
use super::error::ServiceError;
use super::state::AppState;
use super::{adjudication, funnel, studies};
use crate::api_types::Dispute;
use crate::domain::funnel::Funnel;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/studies", post(create_study))
        .route("/api/v1/datasets", get(list_datasets))
        .route("/api/v1/datasets/{name}/funnel", get(dataset_funnel))
        .route("/api/v1/studies/{id}/disputes", get(disputes))
        .route("/api/v1/studies/{id}/adjudicate", post(adjudicate))
        .route("/api/v1/compare/failures", get(failures))
}

#[derive(Serialize)]
struct Created {
    id: i64,
    name: String,
    seed: u64,
}

/// Body: the study spec as TOML text (docs/study-spec.md).
async fn create_study(
    State(state): State<AppState>,
    caller: Caller,
    spec: String,
) -> Result<(StatusCode, Json<Created>), ServiceError> {
    caller.researcher()?;
    let study =
        studies::parse_spec(&spec, super::db::now_secs() as u64).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let id =
        studies::create_study(&state.db, &study, &spec).await.map_err(|e| ServiceError::Invalid(format!("{e:#}")))?;
    Ok((StatusCode::CREATED, Json(Created { id, name: study.name, seed: study.seed })))
}

async fn list_datasets(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<Funnel>>, ServiceError> {
    caller.researcher()?;
    Ok(Json(funnel::all_funnels(&state.db).await?))
}

async fn dataset_funnel(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Funnel>, ServiceError> {
    caller.researcher()?;
    Ok(Json(funnel::dataset_funnel(&state.db, &name).await?))
}

async fn disputes(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<Json<Vec<Dispute>>, ServiceError> {
    caller.researcher()?;
    Ok(Json(adjudication::disputes(&state.db, id).await?))
}

#[derive(Deserialize)]
struct Decision {
    instance_id: i64,
    value: String,
}

async fn adjudicate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    body: Result<Json<Decision>, axum::extract::rejection::JsonRejection>,
) -> Result<StatusCode, ServiceError> {
    let user = caller.researcher()?;
    let Json(d) = body.map_err(|e| ServiceError::Invalid(format!("request body: {}", e.body_text())))?;
    adjudication::adjudicate(&state.db, &user, id, d.instance_id, &d.value).await?;
    Ok(StatusCode::NO_CONTENT)
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

async fn failures(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<axum::extract::Query<FailureQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<crate::api_types::Failure>>, ServiceError> {
    caller.researcher()?;
    let axum::extract::Query(q) = query.map_err(|e| ServiceError::Invalid(format!("query: {}", e.body_text())))?;
    Ok(Json(super::failures::failures(&state.db, &q.dataset, &q.model, &q.score, q.neg_type.as_deref()).await?))
}
