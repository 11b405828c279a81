//! `POST /api/v1/datasets/import`: the candidate import over HTTP for
//! researchers. The multipart form is streamed to a temporary directory on
//! the image store's file system and handed to the same service function the
//! CLI calls (docs/api.md, docs/import.md).
use crate::datasets::import::{import_candidates, ImportRequest, ImportSummary};
use crate::domain::candidates::{check_file_name, FileFormat};
use crate::domain::normalize::NormalizeMode;
use crate::error::ServiceError;
use crate::http::extract::Researcher;
use crate::state::AppState;
use axum::extract::multipart::{Field, Multipart, MultipartRejection};
use axum::extract::{DefaultBodyLimit, State};
use axum::routing::post;
use axum::{Json, Router};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

/// Largest accepted upload: the file and every image together.
pub const MAX_UPLOAD: usize = 8 << 30;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/datasets/import", post(upload).layer(DefaultBodyLimit::max(MAX_UPLOAD)))
}

/// The upload's files, removed when the request ends however it ends.
struct UploadDir(PathBuf);

impl Drop for UploadDir {
    fn drop(&mut self) {
        let dir = std::mem::take(&mut self.0);
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(move || std::fs::remove_dir_all(dir))),
            Err(_) => drop(std::fs::remove_dir_all(dir)),
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> ServiceError {
    ServiceError::Invalid(format!("request body: {e}"))
}

fn internal(e: impl Into<crate::error::BoxError>) -> ServiceError {
    ServiceError::internal("receiving the upload", e)
}

/// Streams one part to `path`; a name sent twice is refused.
async fn save(mut field: Field<'_>, path: &Path) -> Result<(), ServiceError> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(internal)?;
    }
    let mut file = match tokio::fs::OpenOptions::new().write(true).create_new(true).open(path).await {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(ServiceError::Invalid(format!(
                "{} was sent twice",
                path.file_name().unwrap_or_default().to_string_lossy()
            )));
        }
        other => other.map_err(internal)?,
    };
    while let Some(chunk) = field.chunk().await.map_err(invalid)? {
        file.write_all(&chunk).await.map_err(internal)?;
    }
    file.flush().await.map_err(internal)
}

/// Largest text field (`dataset`, `normalize`): these are short names, and
/// reading one whole would let a client fill the server's memory.
pub const MAX_TEXT_FIELD: usize = 4096;

/// A text field read up to [`MAX_TEXT_FIELD`] bytes; longer is refused.
async fn small_text(mut field: Field<'_>, part: &str) -> Result<String, ServiceError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(invalid)? {
        if bytes.len() + chunk.len() > MAX_TEXT_FIELD {
            return Err(ServiceError::Invalid(format!(
                "form field `{part}` is longer than the limit of {MAX_TEXT_FIELD} bytes"
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| ServiceError::Invalid(format!("form field `{part}` is not valid UTF-8")))
}

/// Form fields: `file` (the CSV or JSON Lines file; its name gives the format
/// and the default dataset name), `positive` and `negative` (one part per
/// image, named as the file names it), optional `dataset` and `normalize`.
async fn upload(
    State(state): State<AppState>,
    _: Researcher,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Json<ImportSummary>, ServiceError> {
    let mut form = form.map_err(|e| invalid(e.body_text()))?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = UploadDir(state.images.root().join("uploads").join(format!("{}-{nanos}", std::process::id())));
    let (positives, negatives, own) = (dir.0.join("positives"), dir.0.join("negatives"), dir.0.join("file"));
    for d in [&positives, &negatives, &own] {
        tokio::fs::create_dir_all(d).await.map_err(internal)?;
    }
    let (mut file, mut dataset, mut normalize) = (None, None, NormalizeMode::Bivlc);
    while let Some(field) = form.next_field().await.map_err(invalid)? {
        let part = field.name().unwrap_or_default().to_string();
        let file_name = field.file_name().map(str::to_string);
        match (part.as_str(), file_name) {
            ("file", Some(name)) => {
                let name = Path::new(&name).file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                check_file_name(&name).map_err(|e| ServiceError::Invalid(format!("field `file`: {e}")))?;
                save(field, &own.join(&name)).await?;
                file = Some(name);
            }
            ("positive" | "negative", Some(name)) => {
                check_file_name(&name).map_err(|e| ServiceError::Invalid(format!("field `{part}`: {e}")))?;
                save(field, &if part == "positive" { &positives } else { &negatives }.join(&name)).await?;
            }
            ("dataset", None) => dataset = Some(small_text(field, "dataset").await?),
            ("normalize", None) => {
                let text = small_text(field, "normalize").await?;
                normalize = NormalizeMode::parse(&text).map_err(|e| ServiceError::Invalid(e.to_string()))?;
            }
            (other, name) => {
                let what = if name.is_some() { "a file" } else { "a text field" };
                return Err(ServiceError::Invalid(format!(
                    "unexpected form field {other:?} ({what}); expected file, positive, negative, dataset, normalize"
                )));
            }
        }
    }
    let name =
        file.ok_or_else(|| ServiceError::Invalid("form field `file` (the CSV or JSON Lines file) is required".into()))?;
    let mut req = ImportRequest::new(&own.join(&name), &positives, &negatives);
    req.file_label = name.clone();
    req.format = FileFormat::from_name(&name);
    req.normalize = normalize;
    req.link = true; // the uploaded files are ours and removed afterwards: linking is safe
    req.dir_labels = ["the uploaded positive images".into(), "the uploaded negative images".into()];
    if let Some(dataset) = dataset {
        req.dataset = dataset;
    }
    let summary = import_candidates(&state.db, &state.images, &req).await?;
    drop(dir);
    Ok(Json(summary))
}
