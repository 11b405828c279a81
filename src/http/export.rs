//! The researchers' download: `GET /api/v1/datasets/{name}/export` streams a
//! tar of the rows file(s), `images/` and the README.md card. The export is
//! written to a scratch directory beside the image store first (images hard
//! linked, so it costs the rows files only), because a tar header needs each
//! file's size; the tar is then streamed and the directory removed (also when
//! the client goes away; a crash's leftovers are swept at the next start).
use crate::datasets::export::tar::TarPlan;
use crate::datasets::export::{export_to_dir, ExportRequest};
use crate::domain::export::safe_name;
use crate::error::ServiceError;
use crate::http::extract::{ApiQuery, Caller};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// A fresh directory under `<image store>/.export-tmp/`, named
/// `PID-NANOS-N`; the next start removes any left behind (`store::leftovers`).
fn scratch_dir(state: &AppState) -> Result<std::path::PathBuf, ServiceError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let dir = state.images.root().join(".export-tmp").join(format!(
        "{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| ServiceError::Internal(format!("creating {}: {e}", dir.display())))?;
    Ok(dir)
}

async fn download(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> Result<Response, ServiceError> {
    caller.researcher()?;
    let format = q
        .format
        .as_deref()
        .ok_or_else(|| ServiceError::Invalid("query parameter `format` is required (csv, jsonl or parquet)".into()))?;
    let req = ExportRequest::parse(&name, format, q.stage.as_deref(), q.split.as_deref(), q.seed)?
        .with_spreadsheet_safe(q.spreadsheet_safe)?;
    let dir = scratch_dir(&state)?;
    let command = format!("{} (downloaded: GET /api/v1/datasets/{name}/export)", req.command());
    // The export writes files synchronously: keep it off the async workers.
    let (db, images, r, d) = (state.db.clone(), state.images.clone(), req.clone(), dir.clone());
    let handle = tokio::runtime::Handle::current();
    let done = tokio::task::spawn_blocking(move || handle.block_on(export_to_dir(&db, &images, &r, &d, &command)))
        .await
        .map_err(|e| ServiceError::Internal(format!("export task: {e}")));
    let summary = match done {
        Ok(Ok(s)) => s,
        Ok(Err(e)) | Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let top = format!("{}-{}", safe_name(&name), req.stage.as_str());
    let files = std::iter::once("README.md".to_string()).chain(summary.files).collect();
    let plan = TarPlan::new(&dir, &top, files)
        .map_err(|e| ServiceError::Internal(format!("listing {}: {e}", dir.display())))?;
    let length = plan.content_length;
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-tar")
        .header(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{top}.tar\""))
        .header(header::CONTENT_LENGTH, length)
        .body(Body::from_stream(plan.stream_and_remove()))
        .map_err(|e| ServiceError::Internal(format!("building the download response: {e}")))
}
