//! Writing datasets and instances: one place for the imports, the demo
//! seeder, the results import (text-only datasets) and written pairs.
use crate::domain::category::Category;
use crate::domain::ids::DatasetId;
use crate::store::db::now_secs;
use crate::store::images::StoredImage;
use sqlx::{Any, Transaction};

/// One instance as stored; captions are already normalised, originals kept.
pub struct NewInstance<'a> {
    pub key: &'a str,
    pub caption: &'a str,
    pub negative_caption: &'a str,
    pub caption_orig: &'a str,
    pub negative_caption_orig: &'a str,
    pub category: Category,
    pub positive_image: Option<&'a str>,
}

pub async fn insert_dataset(tx: &mut Transaction<'_, Any>, name: &str, normalize: &str) -> sqlx::Result<DatasetId> {
    sqlx::query_scalar::<_, DatasetId>(
        "INSERT INTO datasets (name, normalize, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(normalize)
    .bind(now_secs())
    .fetch_one(&mut **tx)
    .await
}

/// One instance; its id is returned. Only inside a write transaction
/// (`BEGIN IMMEDIATE`), as [`next_instance_id`] requires.
pub async fn insert_instance(
    tx: &mut Transaction<'_, Any>,
    dataset_id: DatasetId,
    i: &NewInstance<'_>,
) -> sqlx::Result<i64> {
    let id = next_instance_id(tx).await?;
    insert_instances(tx, dataset_id, id, std::slice::from_ref(i)).await?;
    Ok(id)
}

/// Rows per multi-row INSERT: 1,000 rows of up to 10 values stay far below
/// SQLite's 32,766 bound parameters, and equal chunks reuse one prepared
/// statement.
pub const CHUNK: usize = 1000;

/// The id the next bulk-inserted instance gets. Only meaningful inside a
/// write transaction (`BEGIN IMMEDIATE`), which keeps other writers out.
pub async fn next_instance_id(tx: &mut Transaction<'_, Any>) -> sqlx::Result<i64> {
    let max: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM instances").fetch_one(&mut **tx).await?;
    Ok(max.unwrap_or(0) + 1)
}

/// Bulk form of [`insert_instance`] with explicit consecutive ids from
/// `first_id`, so candidates can refer to them without reading them back.
pub async fn insert_instances(
    tx: &mut Transaction<'_, Any>,
    dataset_id: DatasetId,
    first_id: i64,
    rows: &[NewInstance<'_>],
) -> sqlx::Result<()> {
    for (c, chunk) in rows.chunks(CHUNK).enumerate() {
        let mut q = sqlx::QueryBuilder::new(
            "INSERT INTO instances (id, dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig, neg_type, subtype, positive_image) ",
        );
        q.push_values(chunk.iter().enumerate(), |mut b, (k, i)| {
            b.push_bind(first_id + (c * CHUNK + k) as i64)
                .push_bind(dataset_id)
                .push_bind(i.key)
                .push_bind(i.caption)
                .push_bind(i.negative_caption)
                .push_bind(i.caption_orig)
                .push_bind(i.negative_caption_orig)
                .push_bind(i.category.neg_type.as_str())
                .push_bind(i.category.subtype.as_str())
                .push_bind(i.positive_image);
        });
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut **tx).await?;
    }
    // PostgreSQL's identity does not see explicit ids: later instances
    // inserted without one must start after these.
    if crate::store::dialect::Backend::is_postgres(&**tx) && !rows.is_empty() {
        sqlx::query("SELECT setval(pg_get_serial_sequence('instances', 'id'), $1)")
            .bind(first_id + rows.len() as i64 - 1)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Candidate images as (instance id, slot, image hash); ground truth unknown.
pub async fn insert_candidates(tx: &mut Transaction<'_, Any>, rows: &[(i64, i64, &str)]) -> sqlx::Result<()> {
    for chunk in rows.chunks(CHUNK) {
        let mut q = sqlx::QueryBuilder::new("INSERT INTO candidates (instance_id, slot, image) ");
        q.push_values(chunk, |mut b, (id, slot, image)| {
            b.push_bind(*id).push_bind(*slot).push_bind(*image);
        });
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut **tx).await?;
    }
    Ok(())
}

/// Image rows; content already known (same hash) is left as it is.
pub async fn insert_images(tx: &mut Transaction<'_, Any>, images: &[StoredImage]) -> sqlx::Result<()> {
    for chunk in images.chunks(CHUNK) {
        let mut q = sqlx::QueryBuilder::new("INSERT INTO images (hash, mime, width, height, bytes, has_display) ");
        q.push_values(chunk, |mut b, i| {
            b.push_bind(&i.hash)
                .push_bind(i.mime)
                .push_bind(i.width as i64)
                .push_bind(i.height as i64)
                .push_bind(i.bytes as i64)
                .push_bind(i.has_display as i64);
        });
        q.push(" ON CONFLICT DO NOTHING");
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut **tx).await?;
    }
    Ok(())
}
