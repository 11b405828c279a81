//! `hardneg score` on a ranking dataset (`import rankings`, the demo's
//! prompts): every image of a prompt gets the similarity of its embedding
//! to the prompt's, stored as the model's scores in `image_scores` beside
//! the imported ones, where the ranking report correlates each model with
//! the people's order. Written in one transaction at the end, as a run.
use super::encoder::Encoder;
use super::rank::dot;
use super::run::{cancelled_error, distinct, Counts, Embedder, ScoreRequest};
use crate::domain::ids::DatasetId;
use crate::store::images::{sha256_hex, ImageStore};
use sqlx::AnyPool;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankingSummary {
    pub prompts: usize,
    /// (prompt, image) scores written.
    pub scores: usize,
    pub images: Counts,
    pub texts: Counts,
    pub device: String,
    /// The model had scores on this dataset before (imported or scored).
    pub replaced: bool,
}

/// A dataset of prompts to rank: instances without a negative caption,
/// whose images are their candidates (what `import rankings` writes).
pub async fn is_ranking_dataset(db: &AnyPool, dataset_id: DatasetId) -> sqlx::Result<bool> {
    let (instances, with_negative): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN negative_caption <> '' OR positive_image IS NOT NULL THEN 1 ELSE 0 END), 0)
         FROM instances WHERE dataset_id = $1",
    )
    .bind(dataset_id)
    .fetch_one(db)
    .await?;
    Ok(instances > 0 && with_negative == 0)
}

pub async fn score_rankings(
    db: &AnyPool,
    store: &ImageStore,
    encoder: Box<dyn Encoder>,
    req: &ScoreRequest,
    dataset_id: DatasetId,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<RankingSummary> {
    let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(
        "SELECT i.id, i.caption, c.slot, c.image FROM instances i JOIN candidates c ON c.instance_id = i.id
         WHERE i.dataset_id = $1 ORDER BY i.id, c.slot",
    )
    .bind(dataset_id)
    .fetch_all(db)
    .await?;
    let mut prompts: BTreeMap<i64, (String, Vec<(i64, String)>)> = BTreeMap::new();
    for (id, prompt, slot, image) in rows {
        prompts.entry(id).or_insert_with(|| (prompt, Vec::new())).1.push((slot, image));
    }
    anyhow::ensure!(!prompts.is_empty(), "dataset {:?} has no prompt with images", req.dataset);
    let images = distinct(prompts.values().flat_map(|(_, imgs)| imgs.iter()).map(|(_, h)| {
        let path = store.original_path(h).display().to_string();
        (h.clone(), path)
    }));
    let texts = distinct(prompts.values().map(|(p, _)| (sha256_hex(p.as_bytes()), p.clone())));
    let device = encoder.device();
    let mut embedder = Embedder::new(db, encoder, req, cancel.clone());
    let [(text_vecs, text_counts), (image_vecs, image_counts)] = embedder.embed_all(texts, images).await?;
    if cancel.load(Ordering::SeqCst) {
        return Err(cancelled_error(embedder.computed));
    }
    let mut tx = crate::store::db::begin_write(db).await?;
    let removed = sqlx::query(
        "DELETE FROM image_scores WHERE model = $1 AND instance_id IN (SELECT id FROM instances WHERE dataset_id = $2)",
    )
    .bind(&req.name)
    .bind(dataset_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let mut scores = 0;
    for (id, (prompt, imgs)) in &prompts {
        let text = &text_vecs[&sha256_hex(prompt.as_bytes())];
        for (slot, image) in imgs {
            sqlx::query("INSERT INTO image_scores (instance_id, slot, model, score) VALUES ($1, $2, $3, $4)")
                .bind(id)
                .bind(slot)
                .bind(&req.name)
                .bind(dot(text, &image_vecs[image]))
                .execute(&mut *tx)
                .await?;
            scores += 1;
        }
    }
    tx.commit().await?;
    Ok(RankingSummary {
        prompts: prompts.len(),
        scores,
        images: image_counts,
        texts: text_counts,
        device,
        replaced: removed > 0,
    })
}
