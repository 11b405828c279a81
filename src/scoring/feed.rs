//! Feeding the model: a thread prepares the next image batches (decoding,
//! resizing, normalising, each batch spread over the rayon pool) while the
//! model encodes the current one, so a GPU does not wait on the CPU work of
//! one batch at a time. Bounded: at most `ahead` prepared batches wait in
//! the channel, one more is being prepared and one encoded.
use super::encoder::{ImagePrep, ImageRef, PreparedImages};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prepared batches waiting for the model, at most.
pub const AHEAD: usize = 2;

pub struct Feed {
    rx: Option<Receiver<anyhow::Result<PreparedImages>>>,
    worker: Option<JoinHandle<()>>,
    /// Time `next` spent waiting for a batch: the model was idle.
    pub waited: Duration,
}

impl Feed {
    /// Prepares `batches` in order on a thread of its own; stops at the
    /// first failure, on `cancel`, or when the feed is dropped.
    pub fn start(
        prep: Arc<dyn ImagePrep>,
        batches: Vec<Vec<ImageRef>>,
        ahead: usize,
        cancel: Arc<AtomicBool>,
    ) -> std::io::Result<Feed> {
        let (tx, rx) = sync_channel(ahead);
        let worker = std::thread::Builder::new().name("hardneg-image-prep".into()).spawn(move || {
            for batch in batches {
                if cancel.load(Ordering::SeqCst) {
                    break;
                }
                let prepared = prep.prepare(&batch);
                let failed = prepared.is_err();
                // A closed channel: the run stopped reading (failed or cancelled).
                if tx.send(prepared).is_err() || failed {
                    break;
                }
            }
        })?;
        Ok(Feed { rx: Some(rx), worker: Some(worker), waited: Duration::ZERO })
    }

    /// The next batch, in order; blocks until it is ready.
    pub fn next_batch(&mut self) -> anyhow::Result<PreparedImages> {
        let start = Instant::now();
        let got = self.rx.as_ref().expect("open until dropped").recv();
        self.waited += start.elapsed();
        got.map_err(|_| anyhow::anyhow!("image preparation stopped before the last batch"))?
    }
}

impl Drop for Feed {
    /// Closes the channel first (a worker blocked on a full one then
    /// stops), then waits for the worker's current batch.
    fn drop(&mut self) {
        drop(self.rx.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts prepared batches; fails on a hash named "bad".
    struct Counting(Arc<AtomicUsize>);

    impl ImagePrep for Counting {
        fn prepare(&self, images: &[ImageRef]) -> anyhow::Result<PreparedImages> {
            anyhow::ensure!(images.iter().all(|i| i.hash != "bad"), "cannot decode bad");
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(PreparedImages { count: images.len(), pixels: images.iter().map(|i| i.hash.len() as f32).collect() })
        }
    }

    fn batches(hashes: &[&[&str]]) -> Vec<Vec<ImageRef>> {
        hashes.iter().map(|b| b.iter().map(|h| ImageRef { hash: h.to_string(), path: h.into() }).collect()).collect()
    }

    #[test]
    fn batches_come_in_order_and_no_more_than_ahead_are_prepared_unread() {
        let done = Arc::new(AtomicUsize::new(0));
        let all = batches(&[&["a"], &["bb", "c"], &["ddd"], &["e"], &["f"], &["g"]]);
        let mut feed = Feed::start(Arc::new(Counting(done.clone())), all, 2, Arc::default()).unwrap();
        // Two wait in the channel, the third is prepared and blocks on send.
        let deadline = Instant::now() + Duration::from_secs(20);
        while done.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert_eq!(feed.next_batch().unwrap(), PreparedImages { count: 1, pixels: vec![1.0] });
        assert_eq!(feed.next_batch().unwrap(), PreparedImages { count: 2, pixels: vec![2.0, 1.0] });
        assert_eq!(feed.next_batch().unwrap().pixels, [3.0]);
        // Dropped with a worker blocked on a full channel: it stops, nothing hangs.
        drop(feed);
    }

    #[test]
    fn a_failed_batch_is_reported_in_its_place_and_ends_the_feed() {
        let all = batches(&[&["a"], &["bad"], &["c"]]);
        let mut feed = Feed::start(Arc::new(Counting(Arc::default())), all, 1, Arc::default()).unwrap();
        assert!(feed.next_batch().is_ok());
        assert!(feed.next_batch().unwrap_err().to_string().contains("cannot decode bad"));
        assert!(feed.next_batch().unwrap_err().to_string().contains("stopped before the last batch"));
    }

    #[test]
    fn cancel_stops_the_preparation() {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(true));
        let mut feed = Feed::start(Arc::new(Counting(done.clone())), batches(&[&["a"], &["b"]]), 1, cancel).unwrap();
        assert!(feed.next_batch().is_err());
        assert_eq!(done.load(Ordering::SeqCst), 0);
    }
}
