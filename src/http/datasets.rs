//! `/api/v1/datasets`: every dataset's funnel and blind text-only audit. The import upload and the
//! export download are in `import.rs` and `export.rs`.
use crate::domain::funnel::Funnel;
use crate::error::ServiceError;
use crate::http::extract::{ApiQuery, Researcher};
use crate::state::AppState;
use crate::studies::pipeline as funnel;
use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/datasets", get(list_datasets))
        .route("/api/v1/datasets/{name}/funnel", get(dataset_funnel))
        .route("/api/v1/datasets/{name}/audit", get(dataset_audit))
        .merge(super::import::routes())
        .merge(super::export::routes())
}

async fn list_datasets(State(state): State<AppState>, _: Researcher) -> Result<Json<Vec<Funnel>>, ServiceError> {
    Ok(Json(funnel::all_funnels(&state.db, state.kinds).await?))
}

async fn dataset_funnel(
    State(state): State<AppState>,
    _: Researcher,
    Path(name): Path<String>,
) -> Result<Json<Funnel>, ServiceError> {
    Ok(Json(funnel::dataset_funnel(&state.db, state.kinds, &name).await?))
}

#[derive(serde::Deserialize)]
struct AuditQuery {
    /// Default: the furthest stage the dataset's curation reached.
    stage: Option<String>,
}

async fn dataset_audit(
    State(state): State<AppState>,
    _: Researcher,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Json<Vec<crate::domain::audit::AuditResult>>, ServiceError> {
    let stage = q
        .stage
        .map(|s| crate::domain::export::Stage::parse(&s).map_err(|e| ServiceError::Invalid(format!("stage: {e}"))))
        .transpose()?;
    Ok(Json(crate::datasets::audit::stage_audits(&state.db, &name, stage).await?))
}
