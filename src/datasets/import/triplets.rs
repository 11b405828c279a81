//! `hardneg import triplets`: SugarCrepe++ triplets (`image, p1, p2,
//! negative, type, subtype`) with their images into a new dataset, for the
//! odd-one-out kinds. As with candidates, any problem refuses the whole file,
//! naming file, line and field, and nothing is written before every row and
//! image has been checked.
use super::table::read_table;
use super::ImportError;
use crate::datasets::write::{insert_dataset, insert_instance, NewInstance};
use crate::domain::candidates::FileFormat;
use crate::domain::triplets::{triplet, Triplet, COLUMNS};
use crate::store::images::{inspect, ImageStore};
use sqlx::SqlitePool;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct TripletRequest {
    pub file: PathBuf,
    /// How messages name the file.
    pub file_label: String,
    /// Where `image` resolves.
    pub images: PathBuf,
    pub dataset: String,
}

/// Imports the file; returns the number of instances.
pub async fn import_triplets(db: &SqlitePool, store: &ImageStore, req: &TripletRequest) -> Result<usize, ImportError> {
    crate::domain::names::check_dataset_name(&req.dataset).map_err(ImportError::Invalid)?;
    if !req.images.is_dir() {
        return Err(ImportError::Invalid(format!("--images {}: not a directory", req.images.display())));
    }
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = ?").bind(&req.dataset).fetch_optional(db).await?;
    if exists.is_some() {
        return Err(ImportError::Invalid(format!(
            "dataset {:?} already exists; import under a new --dataset name",
            req.dataset
        )));
    }
    let (file, images) = (req.file.clone(), req.images.clone());
    let label = req.file_label.clone();
    let checked = tokio::task::spawn_blocking(move || -> Result<_, ImportError> {
        let mut table = read_table(&file, FileFormat::from_name(&label), &COLUMNS)
            .map_err(|e| ImportError::Invalid(format!("{label}: cannot read: {e}")))?;
        let mut rows: Vec<(Triplet, Vec<u8>)> = Vec::new();
        for (line, values) in &table.rows {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            match triplet(&values) {
                Err(errors) => errors.into_iter().for_each(|e| table.problems.push(*line, Some(e.field), e.message)),
                Ok(t) => match std::fs::read(images.join(&t.image)).map_err(|e| e.to_string()).and_then(|b| {
                    inspect(&b)?;
                    Ok(b)
                }) {
                    Ok(bytes) => rows.push((t, bytes)),
                    Err(e) => table.problems.push(*line, Some("image"), format!("image {:?}: {e}", t.image)),
                },
            }
        }
        if !table.problems.is_empty() {
            return Err(ImportError::Refused(table.problems.report(&label)));
        }
        Ok(rows)
    })
    .await
    .map_err(|e| ImportError::Internal(e.to_string()))??;
    // Content-addressed: a file stored before a failure below is harmless.
    let mut stored = Vec::with_capacity(checked.len());
    for (_, bytes) in &checked {
        stored.push(store.put(bytes).map_err(|e| ImportError::Internal(format!("storing an image: {e}")))?);
    }
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    let dataset_id = insert_dataset(&mut tx, &req.dataset, "none").await?;
    for (n, ((t, _), img)) in checked.iter().zip(&stored).enumerate() {
        crate::datasets::write::insert_images(&mut tx, std::slice::from_ref(img)).await?;
        let key = format!("{:06}", n + 1);
        let new = NewInstance {
            key: &key,
            caption: &t.p1,
            negative_caption: &t.negative,
            caption_orig: &t.p1,
            negative_caption_orig: &t.negative,
            category: t.category,
            positive_image: Some(&img.hash),
        };
        let id = insert_instance(&mut tx, dataset_id, &new).await?;
        set_paraphrase(&mut tx, id, &t.p2).await?;
    }
    tx.commit().await?;
    Ok(checked.len())
}

/// P2 beside the instance's caption (P1).
pub async fn set_paraphrase(tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>, instance: i64, p2: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE instances SET paraphrase = ? WHERE id = ?").bind(p2).bind(instance).execute(&mut **tx).await?;
    Ok(())
}
