//! Writing datasets and instances: one place for the demo seeder, the
//! results import (text-only datasets) and, next, the candidate import.
use super::db::now_secs;
use crate::domain::category::Category;
use sqlx::{Sqlite, Transaction};

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

pub async fn insert_dataset(tx: &mut Transaction<'_, Sqlite>, name: &str, normalize: &str) -> sqlx::Result<i64> {
    Ok(sqlx::query("INSERT INTO datasets (name, normalize, created_at) VALUES (?, ?, ?)")
        .bind(name)
        .bind(normalize)
        .bind(now_secs())
        .execute(&mut **tx)
        .await?
        .last_insert_rowid())
}

pub async fn insert_instance(tx: &mut Transaction<'_, Sqlite>, dataset_id: i64, i: &NewInstance<'_>) -> sqlx::Result<i64> {
    Ok(sqlx::query(
        "INSERT INTO instances (dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig, neg_type, subtype, positive_image)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(dataset_id)
    .bind(i.key)
    .bind(i.caption)
    .bind(i.negative_caption)
    .bind(i.caption_orig)
    .bind(i.negative_caption_orig)
    .bind(i.category.neg_type.as_str())
    .bind(i.category.subtype.as_str())
    .bind(i.positive_image)
    .execute(&mut **tx)
    .await?
    .last_insert_rowid())
}
