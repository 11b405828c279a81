//! The researchers' download: `GET /api/v1/datasets/{name}/export` streams a
//! tar of the rows file(s), `images/` and the README.md card
//! (`datasets::export::download`; this file only translates HTTP).
use crate::datasets::export::{download, ExportRequest};
use crate::error::ServiceError;
use crate::http::extract::{ApiQuery, Researcher};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/datasets/{name}/export", get(download))
}

#[derive(Deserialize)]
struct ExportQuery {
    format: Option<String>,
    stage: Option<String>,
    split: Option<String>,
    seed: Option<u64>,
    #[serde(default)]
    spreadsheet_safe: bool,
}

async fn download(
    State(state): State<AppState>,
    _: Researcher,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> Result<Response, ServiceError> {
    let format = q
        .format
        .as_deref()
        .ok_or_else(|| ServiceError::Invalid("query parameter `format` is required (csv, jsonl or parquet)".into()))?;
    let req = ExportRequest::parse(&name, format, q.stage.as_deref(), q.split.as_deref(), q.seed)?
        .with_spreadsheet_safe(q.spreadsheet_safe);
    let command = format!("{} (downloaded: GET /api/v1/datasets/{name}/export)", req.command());
    let d = download::prepare(state.db.clone(), state.images.clone(), req, command).await?;
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-tar")
        .header(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{}\"", d.file_name))
        .header(header::CONTENT_LENGTH, d.content_length)
        .body(Body::from_stream(d.body))
        .map_err(|e| ServiceError::internal("building the download response", e))
}
