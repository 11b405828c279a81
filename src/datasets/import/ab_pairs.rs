//! `hardneg import ab-pairs`: SugarCrepe's A/B/Tie items (`caption,
//! negative_a, source_a, negative_b, source_b, type`) into a new text-only
//! dataset. Any problem refuses the whole file, naming file, line and field.
use super::table::{check_new_dataset, read_checked};
use super::ImportError;
use crate::domain::ab_pairs::{ab_pair, AbPair, COLUMNS};
use crate::domain::ids::DatasetId;
use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use sqlx::AnyPool;
use std::path::Path;

/// Imports the file into dataset `dataset`; returns the number of instances.
pub async fn import_ab_pairs(db: &AnyPool, file: &Path, label: &str, dataset: &str) -> Result<usize, ImportError> {
    check_new_dataset(db, dataset).await?;
    let pairs = read_checked(file, label, &COLUMNS, ab_pair).await?;
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, dataset, "none").await?;
    for (n, p) in pairs.iter().enumerate() {
        insert_ab_pair(&mut tx, dataset_id, &format!("{:06}", n + 1), p).await?;
    }
    tx.commit().await?;
    Ok(pairs.len())
}

/// One item: negative A is the instance's negative caption, B and the sources beside it.
pub async fn insert_ab_pair(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    dataset_id: DatasetId,
    key: &str,
    p: &AbPair,
) -> sqlx::Result<i64> {
    let new = NewInstance {
        key,
        caption: &p.caption,
        negative_caption: &p.negative_a,
        caption_orig: &p.caption,
        negative_caption_orig: &p.negative_a,
        category: p.category,
        positive_image: None,
    };
    let id = insert_instance(tx, dataset_id, &new).await?;
    sqlx::query("UPDATE instances SET negative_b = $1, source_a = $2, source_b = $3 WHERE id = $4")
        .bind(&p.negative_b)
        .bind(&p.source_a)
        .bind(&p.source_b)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(id)
}
