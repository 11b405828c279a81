//! The import's one transaction (dataset, images, instances, candidates,
//! the import record) and the digest that makes two imports the same.
use super::{ImportError, ImportRequest};
use crate::datasets::import::files::Checked;
use crate::domain::candidates::Batch;
use crate::domain::ids::DatasetId;
use crate::domain::normalize::NormalizeMode;
use crate::store::dataset_rows::{self as write, insert_dataset, NewInstance};
use crate::store::db::now_secs;
use crate::store::images::StoredImage;
use sha2::{Digest, Sha256};
use sqlx::{Any, AnyPool, Transaction};

/// What makes two imports the same: the file, the mode and every image's content.
pub(super) fn content_digest(file_sha: &str, mode: NormalizeMode, checked: &[Checked]) -> String {
    let mut sha = Sha256::new();
    sha.update(file_sha.as_bytes());
    sha.update(mode.as_str().as_bytes());
    for c in checked {
        sha.update(c.hash);
    }
    hex::encode(sha.finalize())
}

/// The one transaction: dataset, images, instances, candidates, the import record.
pub(super) async fn write(
    db: &AnyPool,
    req: &ImportRequest,
    batch: &Batch,
    checked: &[Checked],
    file_sha: &str,
    content_sha: &str,
    distinct: usize,
) -> Result<(), ImportError> {
    // A connection of its own, closed afterwards, so its settings never reach
    // the pool: a larger page cache, and no per-row foreign-key lookups —
    // every image, dataset and instance the rows refer to is inserted by this
    // very transaction (or, for images, already there: ON CONFLICT DO NOTHING).
    let mut conn = db.acquire().await?;
    conn.close_on_drop();
    crate::store::db::sqlite_settings(&mut conn, &["PRAGMA foreign_keys = OFF", "PRAGMA cache_size = -131072"]).await?;
    let mut tx = crate::store::db::begin_write_on(&mut conn).await?;
    let raced: Option<i64> = sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(&req.dataset)
        .fetch_optional(&mut *tx)
        .await?;
    if raced.is_some() {
        return Err(ImportError::Invalid(format!("dataset {:?} was created by someone else meanwhile", req.dataset)));
    }
    let dataset_id = insert_dataset(&mut tx, &req.dataset, req.normalize.as_str()).await?;
    insert_images(&mut tx, checked).await?;
    insert_rows(&mut tx, dataset_id, batch, checked).await?;
    sqlx::query(
        "INSERT INTO imports (dataset_id, file_name, file_sha256, content_sha256, rows, images, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(dataset_id)
    .bind(&req.file_label)
    .bind(file_sha)
    .bind(content_sha)
    .bind(batch.rows.len() as i64)
    .bind(distinct as i64)
    .bind(now_secs())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Every distinct image's row, in hash order.
async fn insert_images(tx: &mut Transaction<'_, Any>, checked: &[Checked]) -> Result<(), ImportError> {
    // Distinct contents in hash order, so the index grows at its end instead
    // of at random pages; hex hashes are made a chunk at a time (at 1.2M
    // images they would otherwise hold 100 MB).
    let mut by_hash: Vec<&Checked> = checked.iter().collect();
    by_hash.sort_unstable_by_key(|c| c.hash);
    by_hash.dedup_by_key(|c| c.hash);
    for chunk in by_hash.chunks(write::CHUNK) {
        let rows: Vec<StoredImage> = chunk
            .iter()
            .map(|c| StoredImage {
                hash: hex::encode(c.hash),
                mime: c.header.mime,
                width: c.header.width,
                height: c.header.height,
                bytes: c.bytes,
                has_display: c.has_display,
            })
            .collect();
        write::insert_images(tx, &rows).await?;
    }
    Ok(())
}

/// The instances and their four candidate negatives, a chunk at a time,
/// with ids counted on from the next free one (the write lock is held).
async fn insert_rows(
    tx: &mut Transaction<'_, Any>,
    dataset_id: DatasetId,
    batch: &Batch,
    checked: &[Checked],
) -> Result<(), ImportError> {
    let hex = |file: u32| hex::encode(checked[file as usize].hash);
    let first_id = write::next_instance_id(tx).await?;
    for (c, chunk) in batch.rows.chunks(write::CHUNK).enumerate() {
        let chunk_first = first_id + (c * write::CHUNK) as i64;
        let positives: Vec<String> = chunk.iter().map(|r| hex(r.images[0])).collect();
        let instances: Vec<NewInstance> = chunk
            .iter()
            .zip(&positives)
            .map(|(r, positive)| NewInstance {
                key: &r.key,
                caption: &r.caption,
                negative_caption: &r.negative_caption,
                caption_orig: &r.caption_orig,
                negative_caption_orig: &r.negative_caption_orig,
                category: r.category,
                positive_image: Some(positive),
            })
            .collect();
        write::insert_instances(tx, dataset_id, chunk_first, &instances).await?;
        let negatives: Vec<(i64, i64, String)> = (0..chunk.len())
            .flat_map(|k| (0..4).map(move |slot| (k, slot)))
            .map(|(k, slot)| (chunk_first + k as i64, slot as i64, hex(chunk[k].images[1 + slot])))
            .collect();
        let negatives: Vec<(i64, i64, &str)> = negatives.iter().map(|(id, slot, h)| (*id, *slot, h.as_str())).collect();
        write::insert_candidates(tx, &negatives).await?;
    }
    Ok(())
}
