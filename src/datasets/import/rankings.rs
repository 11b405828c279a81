//! `hardneg import rankings`: prompts with the generated images to rank
//! (`prompt, images, scores, type, subtype`, docs/import.md) into a new
//! dataset for the `ranking` kind. The images become the prompt's
//! candidates in row order; the models' scores go beside them. Any problem
//! refuses the whole file, naming file, line and field; nothing is written
//! before every row and image has been checked.
use super::table::{check_new_dataset, read_checked};
use super::ImportError;
use crate::domain::ids::DatasetId;
use crate::domain::results::FieldError;
use crate::kinds::ranking::rows::{ranking_row, RankingRow, COLUMNS};
use crate::store::dataset_rows::{insert_candidates, insert_dataset, insert_images, insert_instance, NewInstance};
use crate::store::images::{inspect, ImageStore};
use sqlx::AnyPool;
use std::path::Path;

/// Imports the file; returns the number of prompts.
pub async fn import_rankings(
    db: &AnyPool,
    store: &ImageStore,
    file: &Path,
    label: &str,
    images: &Path,
    dataset: &str,
) -> Result<usize, ImportError> {
    check_new_dataset(db, dataset).await?;
    if !images.is_dir() {
        return Err(ImportError::Invalid(format!("--images {}: not a directory", images.display())));
    }
    let dir = images.to_path_buf();
    let checked = read_checked(file, label, &COLUMNS, move |values| {
        let row = ranking_row(values)?;
        let mut bytes = Vec::with_capacity(row.images.len());
        for name in &row.images {
            let b = std::fs::read(dir.join(name)).map_err(|e| e.to_string()).and_then(|b| inspect(&b).map(|_| b));
            bytes.push(b.map_err(|e| vec![FieldError { field: "images", message: format!("image {name:?}: {e}") }])?);
        }
        Ok((row, bytes))
    })
    .await?;
    // Content-addressed: a file stored before a failure below is harmless.
    let mut stored = Vec::with_capacity(checked.len());
    for (_, bytes) in &checked {
        let prompt: Vec<_> = bytes
            .iter()
            .map(|b| store.put(b))
            .collect::<Result<_, _>>()
            .map_err(ImportError::internal("storing an image"))?;
        stored.push(prompt);
    }
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, dataset, "none").await?;
    for (n, ((row, _), images)) in checked.iter().zip(&stored).enumerate() {
        insert_images(&mut tx, images).await?;
        let hashes: Vec<&str> = images.iter().map(|s| s.hash.as_str()).collect();
        insert_prompt(&mut tx, dataset_id, &format!("{:06}", n + 1), row, &hashes).await?;
    }
    tx.commit().await?;
    Ok(checked.len())
}

/// One prompt: an instance with the prompt as its caption (no negative), its
/// images as candidates in row order and each model's score per image.
pub async fn insert_prompt(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    dataset_id: DatasetId,
    key: &str,
    row: &RankingRow,
    images: &[&str],
) -> sqlx::Result<i64> {
    let new = NewInstance {
        key,
        caption: &row.prompt,
        negative_caption: "",
        caption_orig: &row.prompt,
        negative_caption_orig: "",
        category: row.category,
        positive_image: None,
    };
    let id = insert_instance(tx, dataset_id, &new).await?;
    let slots: Vec<(i64, i64, &str)> = images.iter().enumerate().map(|(slot, h)| (id, slot as i64, *h)).collect();
    insert_candidates(tx, &slots).await?;
    for (model, scores) in &row.scores {
        for (slot, score) in scores.iter().enumerate() {
            sqlx::query("INSERT INTO image_scores (instance_id, slot, model, score) VALUES ($1, $2, $3, $4)")
                .bind(id)
                .bind(slot as i64)
                .bind(model)
                .bind(score)
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(id)
}
