//! The embedder's batching and the feed, with encoders that record what they are asked.
use super::*;
use crate::scoring::encoder::{CacheIdentity, ImagePrep, PreparedImages};
use std::sync::Mutex;

/// Records the batches it is asked for; a text's vector is its length.
struct Recorder(Arc<Mutex<Vec<Vec<String>>>>);

impl Encoder for Recorder {
    fn identity(&self) -> Option<CacheIdentity> {
        None
    }
    fn device(&self) -> String {
        "test".into()
    }
    fn source(&self) -> String {
        "recorder".into()
    }
    fn encode_images(&mut self, images: &[ImageRef]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(images.iter().map(|i| vec![i.hash.len() as f32]).collect())
    }
    fn encode_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.0.lock().unwrap().push(texts.to_vec());
        Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
    }
}

/// Images only through the feed: prepared "pixels" are the hashes'
/// lengths, which the model half returns as the vectors.
struct Fed;

struct LenPrep;

impl ImagePrep for LenPrep {
    fn prepare(&self, images: &[ImageRef]) -> anyhow::Result<PreparedImages> {
        if let Some(bad) = images.iter().find(|i| i.hash.starts_with("bad")) {
            anyhow::bail!("decoding {}: not an image", bad.path.display());
        }
        Ok(PreparedImages { count: images.len(), pixels: images.iter().map(|i| i.hash.len() as f32).collect() })
    }
}

impl Encoder for Fed {
    fn identity(&self) -> Option<CacheIdentity> {
        None
    }
    fn device(&self) -> String {
        "test".into()
    }
    fn source(&self) -> String {
        "fed".into()
    }
    fn encode_images(&mut self, _: &[ImageRef]) -> anyhow::Result<Vec<Vec<f32>>> {
        panic!("images go through image_prep and encode_prepared")
    }
    fn encode_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
    }
    fn image_prep(&self) -> Option<Arc<dyn ImagePrep>> {
        Some(Arc::new(LenPrep))
    }
    fn encode_prepared(&mut self, batch: PreparedImages) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(batch.pixels.iter().map(|&p| vec![p]).collect())
    }
}

#[tokio::test]
async fn images_are_prepared_ahead_and_keep_their_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
    let req = ScoreRequest { name: "r".into(), dataset: "d".into(), batch: 2 };
    let mut embedder = Embedder::new(&db, Box::new(Fed), &req, Arc::default());
    let items: Vec<(String, String)> =
        ["a", "bbb", "cc", "dddd", "e"].iter().map(|h| (h.to_string(), format!("/img/{h}"))).collect();
    let (found, counts) = embedder.embed(Kind::Image, items.clone()).await.unwrap();
    assert_eq!(counts, Counts { total: 5, cached: 0, encoded: 5 });
    for (h, _) in &items {
        assert_eq!(found[h], [h.len() as f32], "{h}");
    }
    // A file that fails to decode fails the run with its path.
    let mut embedder = Embedder::new(&db, Box::new(Fed), &req, Arc::default());
    let bad = vec![("a".into(), "/img/a".into()), ("b".into(), "/img/b".into()), ("bad".into(), "/img/bad".into())];
    let err = embedder.embed(Kind::Image, bad).await.unwrap_err().to_string();
    assert_eq!(err, "decoding /img/bad: not an image");
    assert_eq!(embedder.computed, 2, "the batch before it was encoded");
}

#[tokio::test]
async fn captions_are_batched_in_the_order_of_their_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
    let batches = Arc::new(Mutex::new(Vec::new()));
    let req = ScoreRequest { name: "r".into(), dataset: "d".into(), batch: 2 };
    let mut embedder = Embedder::new(&db, Box::new(Recorder(batches.clone())), &req, Arc::default());
    let texts = ["b cat", "A dog", "a cat", "B dogs", "a"];
    let items = texts.iter().enumerate().map(|(i, t)| (format!("h{i}"), t.to_string())).collect();
    let (found, counts) = embedder.embed(Kind::Text, items).await.unwrap();
    assert_eq!(*batches.lock().unwrap(), [vec!["a", "a cat"], vec!["A dog", "b cat"], vec!["B dogs"]]);
    assert_eq!(counts, Counts { total: 5, cached: 0, encoded: 5 });
    for (i, t) in texts.iter().enumerate() {
        assert_eq!(found[&format!("h{i}")], [t.len() as f32], "{t}");
    }
}
