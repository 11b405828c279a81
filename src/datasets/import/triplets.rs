//! `hardneg import triplets`: SugarCrepe++ triplets (`image, p1, p2,
//! negative, type, subtype`) with their images into a new dataset, for the
//! odd-one-out kinds. As with candidates, any problem refuses the whole file,
//! naming file, line and field, and nothing is written before every row and
//! image has been checked.
use super::table::{check_new_dataset, read_checked};
use super::ImportError;
use crate::datasets::write::{insert_dataset, insert_instance, NewInstance};
use crate::domain::results::FieldError;
use crate::domain::triplets::{triplet, COLUMNS};
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
    check_new_dataset(db, &req.dataset).await?;
    if !req.images.is_dir() {
        return Err(ImportError::Invalid(format!("--images {}: not a directory", req.images.display())));
    }
    let images = req.images.clone();
    let checked = read_checked(&req.file, &req.file_label, &COLUMNS, move |values| {
        let t = triplet(values)?;
        let bytes = std::fs::read(images.join(&t.image)).map_err(|e| e.to_string()).and_then(|b| {
            inspect(&b)?;
            Ok(b)
        });
        match bytes {
            Ok(bytes) => Ok((t, bytes)),
            Err(e) => Err(vec![FieldError { field: "image", message: format!("image {:?}: {e}", t.image) }]),
        }
    })
    .await?;
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
