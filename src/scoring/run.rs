//! `hardneg score`: embeds every caption and image of a dataset (cached
//! ones are read back, not recomputed), turns the four similarities of each
//! instance into an outcome, and stores a model run in one transaction at
//! the end, so a cancelled or failed run leaves no partial run behind.
use super::cache::{self, CacheKey, Kind};
use super::encoder::{Encoder, ImageRef};
use super::feed::{Feed, AHEAD};
use super::rank;
use crate::domain::ids::DatasetId;
use crate::store::images::{sha256_hex, ImageStore};
use crate::store::runs::replace_run;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ScoreRequest {
    /// The run's name in comparisons; also part of the embedding cache key.
    pub name: String,
    pub dataset: String,
    pub batch: usize,
}

/// For one kind of input: distinct items, how many came from the cache, how
/// many the model encoded now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub total: usize,
    pub cached: usize,
    pub encoded: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreSummary {
    pub instances: usize,
    /// Instances without a positive or a negative image.
    pub skipped: usize,
    pub images: Counts,
    pub texts: Counts,
    pub device: String,
    pub replaced_run: bool,
}

struct Scorable {
    id: i64,
    caption: String,
    negative_caption: String,
    positive: String,
    negative: String,
}

/// `negatives`: each instance's negative image as curation has it
/// (`studies::negatives::of_dataset`, which scoring sits below).
async fn scorable_instances(
    db: &AnyPool,
    dataset_id: DatasetId,
    negatives: &HashMap<i64, String>,
) -> sqlx::Result<(Vec<Scorable>, usize)> {
    let rows: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
        "SELECT id, caption, negative_caption, positive_image FROM instances WHERE dataset_id = $1 ORDER BY id",
    )
    .bind(dataset_id)
    .fetch_all(db)
    .await?;
    let (mut out, mut skipped) = (Vec::with_capacity(rows.len()), 0);
    for (id, caption, negative_caption, positive) in rows {
        match (positive, negatives.get(&id)) {
            (Some(positive), Some(negative)) => {
                let negative = negative.clone();
                out.push(Scorable { id, caption, negative_caption, positive, negative })
            }
            _ => skipped += 1,
        }
    }
    Ok((out, skipped))
}

/// Distinct (content hash, payload) pairs in first-seen order; the payload
/// is a file path for images, the text for captions.
pub(super) fn distinct(items: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut seen = std::collections::HashSet::new();
    items.filter(|(h, _)| seen.insert(h.clone())).collect()
}

pub fn cancelled_error(computed: usize) -> anyhow::Error {
    anyhow::anyhow!("cancelled: no run written ({computed} embeddings computed before stay in the cache)")
}

pub(super) struct Embedder<'a> {
    db: &'a AnyPool,
    key: Option<CacheKey>,
    encoder: Option<Box<dyn Encoder>>,
    batch: usize,
    cancel: Arc<AtomicBool>,
    pub computed: usize,
}

impl<'a> Embedder<'a> {
    /// Caches under the run's name and the encoder's identity, if it has one.
    pub fn new(db: &'a AnyPool, encoder: Box<dyn Encoder>, req: &ScoreRequest, cancel: Arc<AtomicBool>) -> Self {
        let key = encoder.identity().map(|id| CacheKey {
            model: req.name.clone(),
            weights: id.weights,
            preprocess: id.preprocess,
        });
        if key.is_none() {
            eprintln!("the scorer names no fingerprint for its weights: embeddings are not cached");
        }
        Embedder { db, key, encoder: Some(encoder), batch: req.batch, cancel, computed: 0 }
    }

    /// Texts, then images; then stops the encoder and checks that every
    /// vector has the same length.
    pub async fn embed_all(
        &mut self,
        texts: Vec<(String, String)>,
        images: Vec<(String, String)>,
    ) -> anyhow::Result<[(HashMap<String, Vec<f32>>, Counts); 2]> {
        let texts = self.embed(Kind::Text, texts).await?;
        let images = self.embed(Kind::Image, images).await?;
        // Stop the scorer before the write: nothing is left running if it fails.
        drop(self.encoder.take());
        // Cached and fresh vectors meet here: a dot product needs equal lengths.
        let dims: std::collections::BTreeSet<usize> = texts.0.values().chain(images.0.values()).map(Vec::len).collect();
        anyhow::ensure!(
            dims.len() == 1,
            "embeddings of different lengths {dims:?}: the model or its cache entries are inconsistent"
        );
        Ok([texts, images])
    }

    pub async fn embed(
        &mut self,
        kind: Kind,
        items: Vec<(String, String)>,
    ) -> anyhow::Result<(HashMap<String, Vec<f32>>, Counts)> {
        let hashes: Vec<String> = items.iter().map(|(h, _)| h.clone()).collect();
        let mut found = match &self.key {
            Some(key) => cache::lookup(self.db, key, kind, &hashes).await?,
            None => HashMap::new(),
        };
        let mut counts = Counts { total: items.len(), cached: found.len(), encoded: 0 };
        let mut missing: Vec<(String, String)> = items.into_iter().filter(|(h, _)| !found.contains_key(h)).collect();
        // Captions in the order of their words: a batch's neighbours then
        // share first tokens, which the CPU text tower computes once
        // (`seqs`): on BiVLC's captions in batches of 32, 67% of the words
        // as distinct prefixes, against 78% in the dataset's order.
        if matches!(kind, Kind::Text) {
            missing.sort_by_cached_key(|(_, text)| text.to_lowercase());
        }
        let start = Instant::now();
        let refs = |chunk: &[(String, String)]| -> Vec<ImageRef> {
            chunk.iter().map(|(h, p)| ImageRef { hash: h.clone(), path: p.into() }).collect()
        };
        // Images are decoded and resized on other threads ahead of the model.
        let prep = match kind {
            Kind::Image => self.encoder.as_ref().and_then(|e| e.image_prep()),
            Kind::Text => None,
        };
        let mut feed = match prep {
            Some(prep) if !missing.is_empty() => {
                let batches = missing.chunks(self.batch.max(1)).map(refs).collect();
                Some(Feed::start(prep, batches, AHEAD, self.cancel.clone())?)
            }
            _ => None,
        };
        let mut model_time = Duration::ZERO;
        for chunk in missing.chunks(self.batch.max(1)) {
            if self.cancel.load(Ordering::SeqCst) {
                return Err(cancelled_error(self.computed));
            }
            let encoder = self.encoder.take().expect("returned after every batch");
            let (chunk_owned, feed_in) = (chunk.to_vec(), feed.take());
            let (encoder, feed_back, result, spent) = tokio::task::spawn_blocking(move || {
                let (mut encoder, mut feed) = (encoder, feed_in);
                let prepared = feed.as_mut().map(Feed::next_batch);
                let started = Instant::now();
                let r = match (prepared, kind) {
                    (Some(batch), _) => batch.and_then(|b| encoder.encode_prepared(b)),
                    (None, Kind::Image) => encoder.encode_images(&refs(&chunk_owned)),
                    (None, Kind::Text) => {
                        encoder.encode_texts(&chunk_owned.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>())
                    }
                };
                (encoder, feed, r, started.elapsed())
            })
            .await?;
            (self.encoder, feed, model_time) = (Some(encoder), feed_back, model_time + spent);
            // A scorer killed by the same Ctrl-C fails its batch: report the cancel, not that.
            let vectors =
                result
                    .map_err(|e| if self.cancel.load(Ordering::SeqCst) { cancelled_error(self.computed) } else { e })?;
            anyhow::ensure!(
                vectors.len() == chunk.len(),
                "asked for {} {} embeddings, got {}",
                chunk.len(),
                kind.as_str(),
                vectors.len()
            );
            let batch: Vec<(String, Vec<f32>)> = chunk.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
            if let Some(key) = &self.key {
                cache::store(self.db, key, kind, &batch).await?;
            }
            counts.encoded += batch.len();
            self.computed += batch.len();
            found.extend(batch);
            let rate = |secs: f64| counts.encoded as f64 / secs.max(1e-9);
            let k = kind.as_str();
            let fed = match &feed {
                Some(f) => format!(
                    " (model alone {:.1} {k}s/s, {:.1} s waiting for decoded images)",
                    rate(model_time.as_secs_f64()),
                    f.waited.as_secs_f64()
                ),
                None => String::new(),
            };
            // The rates count what this run encoded: the cached ones cost it nothing.
            let cached = match counts.cached {
                0 => String::new(),
                n => format!("; {n} from the cache, not in the rates"),
            };
            eprintln!(
                "{k}s: {}/{} done, {:.1} {k}s/s{fed}{cached}",
                counts.cached + counts.encoded,
                counts.total,
                rate(start.elapsed().as_secs_f64())
            );
        }
        Ok((found, counts))
    }
}

pub(super) async fn dataset_id(db: &AnyPool, name: &str) -> anyhow::Result<DatasetId> {
    sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no dataset named {name:?}"))
}

pub async fn score_dataset(
    db: &AnyPool,
    store: &ImageStore,
    encoder: Box<dyn Encoder>,
    req: &ScoreRequest,
    negatives: &HashMap<i64, String>,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<ScoreSummary> {
    anyhow::ensure!(!req.name.trim().is_empty(), "--name must not be empty");
    let dataset_id = dataset_id(db, &req.dataset).await?;
    let (instances, skipped) = scorable_instances(db, dataset_id, negatives).await?;
    anyhow::ensure!(
        !instances.is_empty(),
        "dataset {:?} has no instance with both a positive and a negative image",
        req.dataset
    );
    let images = distinct(instances.iter().flat_map(|i| [i.positive.clone(), i.negative.clone()]).map(|h| {
        let path = store.original_path(&h).display().to_string();
        (h, path)
    }));
    let texts = distinct(
        instances
            .iter()
            .flat_map(|i| [i.caption.clone(), i.negative_caption.clone()])
            .map(|t| (sha256_hex(t.as_bytes()), t)),
    );
    let (device, source) = (encoder.device(), encoder.source());
    let mut embedder = Embedder::new(db, encoder, req, cancel.clone());
    let [(text_vecs, text_counts), (image_vecs, image_counts)] = embedder.embed_all(texts, images).await?;
    let outcomes: Vec<_> = instances
        .iter()
        .map(|i| {
            let text = |t: &str| &text_vecs[&sha256_hex(t.as_bytes())];
            (
                i.id,
                rank::outcome(
                    text(&i.caption),
                    text(&i.negative_caption),
                    &image_vecs[&i.positive],
                    &image_vecs[&i.negative],
                ),
                Some(i.negative.clone()),
            )
        })
        .collect();
    if cancel.load(Ordering::SeqCst) {
        return Err(cancelled_error(embedder.computed));
    }
    let mut tx = crate::store::db::begin_write(db).await?;
    let replaced_run = replace_run(&mut tx, dataset_id, &req.name, &source, Some(&device), &outcomes).await?;
    tx.commit().await?;
    Ok(ScoreSummary {
        instances: instances.len(),
        skipped,
        images: image_counts,
        texts: text_counts,
        device,
        replaced_run,
    })
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
