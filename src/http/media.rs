//! Serving stored images: only validated hashes reach the file system, and
//! responses are immutable (the URL names the content).
use crate::error::ServiceError;
use crate::http::extract::Caller;
use crate::state::AppState;
use crate::store::images::parse_hash;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

pub fn routes() -> Router<AppState> {
    Router::new().route("/img/{hash}", get(display)).route("/img/{hash}/original", get(original))
}

async fn display(state: State<AppState>, caller: Caller, Path(hash): Path<String>) -> Result<Response, ServiceError> {
    serve(state, caller, hash, true).await
}

async fn original(state: State<AppState>, caller: Caller, Path(hash): Path<String>) -> Result<Response, ServiceError> {
    serve(state, caller, hash, false).await
}

async fn serve(
    State(state): State<AppState>,
    _caller: Caller,
    hash: String,
    display: bool,
) -> Result<Response, ServiceError> {
    let not_found = || ServiceError::NotFound("no such image".into());
    let hash = parse_hash(&hash).ok_or_else(not_found)?;
    let row: Option<(String, i64)> = sqlx::query_as("SELECT mime, has_display FROM images WHERE hash = $1")
        .bind(hash)
        .fetch_optional(&state.db)
        .await?;
    let (mime, has_display) = row.ok_or_else(not_found)?;
    let (path, mime) = if display && has_display == 1 {
        (state.images.display_path(hash), "image/jpeg".to_string())
    } else {
        (state.images.original_path(hash), mime)
    };
    let bytes = tokio::fs::read(&path).await.map_err(|e| ServiceError::internal(format!("reading image {hash}"), e))?;
    Ok((
        [
            (header::CONTENT_TYPE, mime),
            (header::CACHE_CONTROL, "private, max-age=31536000, immutable".to_string()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
        ],
        bytes,
    )
        .into_response())
}
