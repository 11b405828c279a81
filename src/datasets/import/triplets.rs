//! `hardneg import triplets`: SugarCrepe++ triplets (`image, p1, p2,
//! negative, type, subtype`) with their images into a new dataset, for the
//! odd-one-out kinds. As with candidates, any problem refuses the whole file,
//! naming file, line and field, and nothing is written before every row and
//! image has been checked.
use super::table::{check_new_dataset, read_checked, read_image, store_images};
use super::ImportError;
use crate::domain::ids::DatasetId;
use crate::domain::triplets::{triplet, Triplet, COLUMNS};
use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use crate::store::images::ImageStore;
use sqlx::AnyPool;
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
pub async fn import_triplets(db: &AnyPool, store: &ImageStore, req: &TripletRequest) -> Result<usize, ImportError> {
    check_new_dataset(db, &req.dataset).await?;
    if !req.images.is_dir() {
        return Err(ImportError::Invalid(format!("--images {}: not a directory", req.images.display())));
    }
    let images = req.images.clone();
    let checked = read_checked(&req.file, &req.file_label, &COLUMNS, move |values| {
        let t = triplet(values)?;
        let bytes = read_image(&images, &t.image)?;
        Ok((t, bytes))
    })
    .await?;
    let stored = store_images(store, checked.iter().map(|(_, b)| b))?;
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, &req.dataset, "none").await?;
    for (n, ((t, _), img)) in checked.iter().zip(&stored).enumerate() {
        crate::store::dataset_rows::insert_images(&mut tx, std::slice::from_ref(img)).await?;
        insert_triplet(&mut tx, dataset_id, &format!("{:06}", n + 1), t, &img.hash).await?;
    }
    tx.commit().await?;
    Ok(checked.len())
}

/// One triplet as an instance: P1 its caption, N its negative caption, P2
/// beside them. The image must be in the store and its table.
pub async fn insert_triplet(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    dataset_id: DatasetId,
    key: &str,
    t: &Triplet,
    image: &str,
) -> sqlx::Result<i64> {
    let new = NewInstance {
        key,
        caption: &t.p1,
        negative_caption: &t.negative,
        caption_orig: &t.p1,
        negative_caption_orig: &t.negative,
        category: t.category,
        positive_image: Some(image),
    };
    let id = insert_instance(tx, dataset_id, &new).await?;
    sqlx::query("UPDATE instances SET paraphrase = $1 WHERE id = $2").bind(&t.p2).bind(id).execute(&mut **tx).await?;
    Ok(id)
}
