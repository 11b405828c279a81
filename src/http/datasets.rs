//! `/api/v1/datasets`: every dataset's funnel. The import upload and the
//! export download are in `import.rs` and `export.rs`.
use crate::domain::funnel::Funnel;
use crate::error::ServiceError;
use crate::http::extract::Caller;
use crate::state::AppState;
use crate::studies::pipeline as funnel;
use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/datasets", get(list_datasets))
        .route("/api/v1/datasets/{name}/funnel", get(dataset_funnel))
        .merge(super::import::routes())
        .merge(super::export::routes())
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
