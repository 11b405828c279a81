//! `hardneg import pairs`: HNC's images to write caption pairs for
//! (`image, type`, optional `id`) or written pairs (with `caption,
//! negative_caption`: the validated pairs an export writes) into a new
//! dataset. As with the other imports, any problem refuses the whole file,
//! naming file, line and field, and nothing is written before every row and
//! image has been checked.
use super::table::{check_new_dataset, read_checked, read_image, store_images};
use super::ImportError;
use crate::domain::candidates::FileFormat;
use crate::domain::ids::DatasetId;
use crate::domain::pairs::{pair_row, Columns, PairRow, PLACEHOLDER};
use crate::domain::results::FieldError;
use crate::store::dataset_rows::{insert_dataset, insert_images, insert_instance, NewInstance};
use crate::store::images::ImageStore;
use sqlx::AnyPool;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct PairsRequest {
    pub file: PathBuf,
    /// How messages name the file.
    pub file_label: String,
    /// Where `image` resolves.
    pub images: PathBuf,
    pub dataset: String,
}

/// Which optional columns the file has: from the CSV header or the first JSON object.
fn columns(file: &Path, label: &str) -> Result<Columns, ImportError> {
    let cannot = |e: String| ImportError::Invalid(format!("{label}: cannot read: {e}"));
    let bytes = std::fs::read(file).map_err(|e| cannot(e.to_string()))?;
    let names: Vec<String> = match FileFormat::from_name(label) {
        FileFormat::Csv => csv::Reader::from_reader(bytes.as_slice())
            .headers()
            .map(|h| h.iter().map(str::to_string).collect())
            .unwrap_or_default(),
        FileFormat::JsonLines => bytes
            .split(|&b| b == b'\n')
            .find(|l| !l.iter().all(u8::is_ascii_whitespace))
            .and_then(|l| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(l).ok())
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default(),
    };
    Ok(Columns::of(&names))
}

/// Imports the file; returns the number of instances and whether they are pairs.
pub async fn import_pairs(db: &AnyPool, store: &ImageStore, req: &PairsRequest) -> Result<(usize, bool), ImportError> {
    check_new_dataset(db, &req.dataset).await?;
    if !req.images.is_dir() {
        return Err(ImportError::Invalid(format!("--images {}: not a directory", req.images.display())));
    }
    let cols = columns(&req.file, &req.file_label)?;
    let images = req.images.clone();
    let mut ids = HashSet::new();
    let checked = read_checked(&req.file, &req.file_label, cols.names(), move |values| {
        let row = pair_row(cols, values)?;
        if let Some(id) = &row.id {
            if !ids.insert(id.clone()) {
                return Err(vec![FieldError { field: "id", message: format!("{id:?} is used by an earlier row") }]);
            }
        }
        let bytes = read_image(&images, &row.image)?;
        Ok((row, bytes))
    })
    .await?;
    let stored = store_images(store, checked.iter().map(|(_, b)| b))?;
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, &req.dataset, "none").await?;
    for (n, ((row, _), img)) in checked.iter().zip(&stored).enumerate() {
        insert_images(&mut tx, std::slice::from_ref(img)).await?;
        let key = row.id.clone().unwrap_or_else(|| format!("{:06}", n + 1));
        insert_pair(&mut tx, dataset_id, &key, row, &img.hash).await?;
    }
    tx.commit().await?;
    Ok((checked.len(), cols.captions))
}

/// One row as an instance: its captions when it has them (a writing item
/// has none), its type in `caption_type`.
pub async fn insert_pair(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    dataset_id: DatasetId,
    key: &str,
    row: &PairRow,
    image: &str,
) -> sqlx::Result<i64> {
    let (caption, negative) = row.pair.as_ref().map_or(("", ""), |(p, n)| (p.as_str(), n.as_str()));
    let new = NewInstance {
        key,
        caption,
        negative_caption: negative,
        caption_orig: caption,
        negative_caption_orig: negative,
        category: PLACEHOLDER,
        positive_image: Some(image),
    };
    let id = insert_instance(tx, dataset_id, &new).await?;
    sqlx::query("UPDATE instances SET caption_type = $1 WHERE id = $2")
        .bind(&row.caption_type)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(id)
}
