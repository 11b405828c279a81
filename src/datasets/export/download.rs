//! The researchers' download of an export as one tar. The export is written
//! to a scratch directory beside the image store first (images hard linked,
//! so it costs the rows files only), because a tar header needs each file's
//! size; the tar is then streamed. The scratch directory goes as soon as
//! nobody is waiting: when the export fails, when the client leaves before
//! the first byte (the export stops at the next row) or mid-download, and
//! after the last file; a crash's leftovers are swept at the next start.
use super::tar::TarPlan;
use super::{export_to_dir_until, ExportRequest, ABANDONED};
use crate::domain::export::safe_name;
use crate::error::ServiceError;
use crate::store::images::ImageStore;
use axum::body::Bytes;
use futures_util::Stream;
use sqlx::AnyPool;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{mpsc, oneshot};

/// A prepared download: the archive's name and length, and its bytes.
pub struct Download<S> {
    /// `<dataset>-<stage>.tar`.
    pub file_name: String,
    pub content_length: u64,
    /// Dropping it (the client left) stops the stream and removes the scratch.
    pub body: S,
}

/// A fresh directory under `<image store>/.export-tmp/`, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(store_root: &Path) -> Result<Scratch, ServiceError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let name = format!("{}-{nanos}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = store_root.join(".export-tmp").join(name);
        std::fs::create_dir_all(&dir).map_err(|e| ServiceError::internal(format!("creating {}", dir.display()), e))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!(dir = %self.0.display(), error = %e, "could not remove the export directory");
        }
    }
}

type Chunks = mpsc::Receiver<std::io::Result<Bytes>>;

/// Runs the export on a blocking thread and answers once the archive's
/// length is known. Dropping the returned future before that (the client
/// went away) stops the export and removes its directory.
pub async fn prepare(
    db: AnyPool,
    images: ImageStore,
    req: ExportRequest,
    command: String,
) -> Result<Download<impl Stream<Item = std::io::Result<Bytes>> + Send + 'static>, ServiceError> {
    let scratch = Scratch::new(images.root())?;
    let top = format!("{}-{}", safe_name(&req.dataset), req.stage.as_str());
    // Named by format too: the three downloads of one stage are three files.
    let file_name = format!("{top}-{}.tar", req.format.as_str());
    let (ready_tx, ready_rx) = oneshot::channel::<Result<(u64, Chunks), ServiceError>>();
    let handle = tokio::runtime::Handle::current();
    let archive_top = top.clone();
    // The export writes files synchronously: keep it off the async workers.
    tokio::task::spawn_blocking(move || {
        let exported =
            handle.block_on(export_to_dir_until(&db, &images, &req, &scratch.0, &command, &|| ready_tx.is_closed()));
        let plan = exported.and_then(|summary| {
            let files = std::iter::once("README.md".to_string()).chain(summary.files).collect();
            TarPlan::new(&scratch.0, &archive_top, files)
                .map_err(|e| ServiceError::internal(format!("listing {}", scratch.0.display()), e))
        });
        let plan = match plan {
            Ok(plan) => plan,
            Err(ServiceError::Internal(e)) if e == ABANDONED => return tracing::info!("{e}"),
            Err(e) => return drop(ready_tx.send(Err(e))),
        };
        let (tx, rx) = mpsc::channel(8);
        if ready_tx.send(Ok((plan.content_length, rx))).is_ok() {
            let done = plan.produce(&tx);
            // Removed before the last block goes out, so a client that has
            // the whole archive never sees the directory still there.
            drop(scratch);
            if let Err(e) = &done {
                tracing::info!(error = %e, "export download ended early");
            }
            TarPlan::finish(&tx, done);
        }
    });
    let (content_length, mut rx) =
        ready_rx.await.map_err(|e| ServiceError::internal("the export task ended without an answer", e))??;
    let body = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    Ok(Download { file_name, content_length, body })
}
