//! Candidate import (BiVLC Step 2 files with their images) as one reusable
//! service function: the CLI calls it, a web upload can call it with the
//! uploaded files saved to a temporary directory. Rules (docs/import.md):
//! every problem refuses the whole file; nothing is written to the database
//! before every row and image has been checked; new image files become final
//! only after that; the same file with the same images again is a no-op.
pub mod ab_pairs;
mod candidate_file;
mod commit;
pub mod files;
pub mod pairs;
pub mod rankings;
mod table;
pub mod triplets;

use crate::datasets::import::candidate_file::read_candidates;
use crate::datasets::import::files::{check_files, link_files, Checked, ImageProblem, Staging};
use crate::domain::candidates::{Batch, FileFormat, ImageDir, Problems};
use crate::domain::normalize::NormalizeMode;
use crate::store::images::ImageStore;
use crate::store::rows::from_row;
use serde::Serialize;
use sqlx::AnyPool;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct ImportRequest {
    pub file: PathBuf,
    /// How messages name the file: the path as given, or an upload's name.
    pub file_label: String,
    pub format: FileFormat,
    pub positives: PathBuf,
    pub negatives: PathBuf,
    /// How messages name the two directories (a web upload hides its paths).
    pub dir_labels: [String; 2],
    pub dataset: String,
    pub normalize: NormalizeMode,
    /// Hard-link new image files into the store instead of copying them
    /// (faster; the sources must then never be changed in place).
    pub link: bool,
}

impl ImportRequest {
    /// The defaults: format by extension, dataset named after the file stem,
    /// BiVLC normalisation.
    pub fn new(file: &Path, positives: &Path, negatives: &Path) -> ImportRequest {
        let label = file.display().to_string();
        ImportRequest {
            format: FileFormat::from_name(&label),
            dataset: file.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default(),
            file: file.to_path_buf(),
            file_label: label,
            positives: positives.to_path_buf(),
            negatives: negatives.to_path_buf(),
            dir_labels: [positives.display().to_string(), negatives.display().to_string()],
            normalize: NormalizeMode::Bivlc,
            link: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    pub dataset: String,
    pub instances: usize,
    /// Distinct image contents the rows refer to.
    pub images: usize,
    /// Of those, the ones this import added to the store.
    pub new_images: usize,
    /// The same file with the same images was imported before; nothing changed.
    pub already_imported: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Problems in the file or its images, each naming file, line and field.
    #[error("{0}")]
    Refused(String),
    /// The request itself: an unreadable file, a taken or empty dataset name.
    #[error("{0}")]
    Invalid(String),
    /// A server-side failure: `context` says what was being done, the
    /// source is kept for the log (the client sees only "internal error").
    #[error("internal error: {context}")]
    Internal {
        context: &'static str,
        #[source]
        source: crate::error::BoxError,
    },
}

impl ImportError {
    /// `map_err(ImportError::internal("staging images"))`.
    pub fn internal<E: Into<crate::error::BoxError>>(context: &'static str) -> impl FnOnce(E) -> ImportError {
        move |e| ImportError::Internal { context, source: e.into() }
    }
}

/// Written here, not in `error.rs`: the error type sits below the features.
impl From<ImportError> for crate::error::ServiceError {
    fn from(e: ImportError) -> Self {
        use crate::error::ServiceError;
        match e {
            ImportError::Refused(m) | ImportError::Invalid(m) => ServiceError::Invalid(m),
            ImportError::Internal { context, source } => ServiceError::internal(context, source),
        }
    }
}

impl From<sqlx::Error> for ImportError {
    fn from(e: sqlx::Error) -> Self {
        ImportError::internal("database")(e)
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ImportError> {
    tokio::task::spawn_blocking(f).await.map_err(ImportError::internal("a blocking import step"))
}

/// The earlier import a dataset came from, if any.
struct Previous {
    file_name: String,
    file_sha256: String,
    content_sha256: String,
    normalize: String,
}
from_row!(Previous { file_name, file_sha256, content_sha256, normalize });

pub async fn import_candidates(
    db: &AnyPool,
    store: &ImageStore,
    req: &ImportRequest,
) -> Result<ImportSummary, ImportError> {
    let label = req.file_label.clone();
    check_request(req)?;
    let start = std::time::Instant::now();
    let (file, format, mode) = (req.file.clone(), req.format, req.normalize);
    let (batch, file_sha) = blocking(move || read_candidates(&file, format, mode))
        .await?
        .map_err(|e| ImportError::Invalid(format!("{label}: cannot read: {e}")))?;
    let file_sha = hex::encode(file_sha);
    tracing::debug!(
        rows = batch.rows.len(),
        files = batch.files.len(),
        ms = start.elapsed().as_millis() as u64,
        "read candidate file"
    );
    if batch.rows.is_empty() {
        return Err(ImportError::Refused(batch.problems.report(&label)));
    }

    let (existing, previous) = earlier_imports(db, &req.dataset).await?;
    let same_file = previous.iter().any(|p| p.file_sha256 == file_sha && p.normalize == mode.as_str());
    if existing.is_some() && batch.problems.is_empty() && !same_file {
        return Err(ImportError::Invalid(taken(&req.dataset, &previous, mode)));
    }

    // Every image, checked on all cores; new content staged (copy mode) unless
    // this can only end in a refusal or a no-op.
    let stage = !req.link && existing.is_none() && batch.problems.is_empty();
    let (store2, positives, negatives) = (store.clone(), req.positives.clone(), req.negatives.clone());
    let (batch, mut checked, staging) = blocking(move || {
        let staging = if stage { Some(Staging::new(&store2)) } else { None }.transpose()?;
        let checked = check_files(&batch.files, &positives, &negatives, &store2, staging.as_ref());
        Ok::<_, std::io::Error>((batch, checked, staging))
    })
    .await?
    .map_err(ImportError::internal("staging images"))?;
    tracing::debug!(ms = start.elapsed().as_millis() as u64, "checked images");
    let problems = with_image_problems(&batch, &mut checked, &req.dir_labels);
    if !problems.as_ref().is_ok_and(Problems::is_empty) {
        if let Some(staging) = staging {
            blocking(move || drop(staging)).await?; // removes what it wrote
        }
        return Err(ImportError::Refused(problems?.report(&label)));
    }
    let checked: Vec<Checked> = checked.into_iter().flatten().collect();
    let content_sha = commit::content_digest(&file_sha, mode, &checked);
    let distinct = {
        let mut hashes: Vec<[u8; 32]> = checked.iter().map(|c| c.hash).collect();
        hashes.sort_unstable();
        hashes.dedup();
        hashes.len()
    };
    if existing.is_some() {
        return same_import(req, &previous, &content_sha, batch.rows.len(), distinct);
    }

    let (batch, checked, new_images) = if req.link {
        link_into_store(store, req, batch, checked).await?
    } else {
        let new_images = checked.iter().filter(|c| c.staged).count();
        (batch, checked, new_images)
    };
    if let Some(staging) = staging {
        blocking(move || staging.promote()).await?.map_err(ImportError::internal("moving images into the store"))?;
    }
    tracing::debug!(ms = start.elapsed().as_millis() as u64, "images in the store");
    commit::write(db, req, &batch, &checked, &file_sha, &content_sha, distinct).await?;
    tracing::debug!(ms = start.elapsed().as_millis() as u64, "committed");
    Ok(ImportSummary {
        dataset: req.dataset.clone(),
        instances: batch.rows.len(),
        images: distinct,
        new_images,
        already_imported: false,
    })
}

/// A dataset name that can be one, and image folders that are folders.
fn check_request(req: &ImportRequest) -> Result<(), ImportError> {
    crate::domain::names::check_dataset_name(&req.dataset).map_err(ImportError::Invalid)?;
    for (flag, dir) in [("--positives", &req.positives), ("--negatives", &req.negatives)] {
        if !dir.is_dir() {
            return Err(ImportError::Invalid(format!("{flag} {}: not a directory", dir.display())));
        }
    }
    Ok(())
}

/// Whether the dataset exists, and the imports it was made from.
async fn earlier_imports(db: &AnyPool, dataset: &str) -> Result<(Option<i64>, Vec<Previous>), ImportError> {
    let existing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(dataset).fetch_optional(db).await?;
    let previous: Vec<Previous> = sqlx::query_as(
        "SELECT i.file_name, i.file_sha256, i.content_sha256, d.normalize FROM imports i JOIN datasets d ON d.id = i.dataset_id WHERE d.name = $1",
    )
    .bind(dataset)
    .fetch_all(db)
    .await?;
    Ok((existing, previous))
}

/// A dataset imported before from this file: the same import again when
/// every image has the same content (nothing to do), else refused.
fn same_import(
    req: &ImportRequest,
    previous: &[Previous],
    content_sha: &str,
    instances: usize,
    images: usize,
) -> Result<ImportSummary, ImportError> {
    match previous.iter().find(|p| p.content_sha256 == content_sha) {
        Some(_) => Ok(ImportSummary {
            dataset: req.dataset.clone(),
            instances,
            images,
            new_images: 0,
            already_imported: true,
        }),
        None => Err(ImportError::Invalid(format!(
            "dataset {:?} was imported from this very file, but some image files now have different content; import it under a new --dataset name",
            req.dataset
        ))),
    }
}

/// `--link`: every image linked into the store (made durable) instead of
/// copied; the batch and the checks come back with the new images' count.
async fn link_into_store(
    store: &ImageStore,
    req: &ImportRequest,
    batch: Batch,
    checked: Vec<Checked>,
) -> Result<(Batch, Vec<Checked>, usize), ImportError> {
    let (store, positives, negatives) = (store.clone(), req.positives.clone(), req.negatives.clone());
    let (batch, checked, linked) = blocking(move || {
        let linked = link_files(&batch.files, &checked, &positives, &negatives, &store);
        let synced = linked.and_then(|linked| store.sync().map(|()| linked));
        (batch, checked, synced)
    })
    .await?;
    let mut linked = linked.map_err(ImportError::internal("linking images into the store"))?;
    // Links made before a problem are complete, verified contents: harmless.
    let problems = with_image_problems(&batch, &mut linked, &req.dir_labels)?;
    if !problems.is_empty() {
        return Err(ImportError::Refused(problems.report(&req.file_label)));
    }
    let new_images = linked.iter().filter(|l| matches!(l, Ok(true))).count();
    Ok((batch, checked, new_images))
}

/// Why an existing dataset name cannot take this file.
fn taken(dataset: &str, previous: &[Previous], mode: NormalizeMode) -> String {
    let why = match previous.first() {
        None => "and was not made by a candidate import".to_string(),
        Some(p) if p.normalize != mode.as_str() => {
            format!("with normalisation {} (this import asks for {mode})", p.normalize)
        }
        Some(p) => format!("from {} (another file: its SHA-256 differs)", p.file_name),
    };
    format!("dataset {dataset:?} already exists {why}; import under a new --dataset name")
}

/// The file's own problems, then one per unusable image file, named at the
/// first line that refers to it; the store's first fault instead, if any
/// (taken out of `checked`: the import ends there).
fn with_image_problems<T>(
    batch: &Batch,
    checked: &mut [Result<T, ImageProblem>],
    dir_labels: &[String; 2],
) -> Result<Problems, ImportError> {
    let store_fault = checked.iter_mut().find(|c| matches!(c, Err(ImageProblem::Store(..))));
    if let Some(Err(ImageProblem::Store(what, e))) =
        store_fault.map(|c| std::mem::replace(c, Err(ImageProblem::File(String::new()))))
    {
        return Err(ImportError::internal(what)(e));
    }
    let mut problems = batch.problems.clone();
    for (f, c) in batch.files.iter().zip(checked.iter()) {
        if let Err(e) = c {
            let others = match f.uses {
                1 => String::new(),
                n => format!(" (also named on {} other line(s))", n - 1),
            };
            let dir = &dir_labels[(f.dir == ImageDir::Negatives) as usize];
            problems.push(f.line, Some(f.column), format!("image {:?} in {dir}: {e}{others}", f.name));
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::ImportError;
    use crate::error::ServiceError;

    #[test]
    fn an_internal_import_error_keeps_its_source_for_the_log_only() {
        let cause = std::io::Error::other("/srv/images/tmp: no space left on device");
        let e = ServiceError::from(ImportError::internal("staging images")(cause));
        assert_eq!(e.to_string(), "internal error: staging images");
        assert!(std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>()).is_some());
        assert_eq!(e.chain(), "internal error: staging images: /srv/images/tmp: no space left on device");
        assert_eq!(e.public_message(), crate::error::INTERNAL_MESSAGE);
    }
}
