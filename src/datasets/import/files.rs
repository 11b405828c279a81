//! The image side of a candidate import: the image files, read, hashed,
//! checked and staged on all cores (the candidate file is `candidate_file`'s).
//! Nothing here touches the database.
use crate::domain::candidates::{FileRef, ImageDir};
use crate::store::images::{decode, display_copy, inspect, Header, ImageStore, DISPLAY_MAX};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What the import knows of one distinct image file once it is checked.
#[derive(Debug, Clone)]
pub struct Checked {
    pub hash: [u8; 32],
    pub header: Header,
    pub bytes: u64,
    pub has_display: bool,
    /// This import wrote the file's content into the store (first of its content).
    pub staged: bool,
}

/// Why an image could not be taken: the file's own problem (said to whoever
/// imports, at the line naming it), or the store's, a fault of the server
/// (logged, never shown; a full disk is a 503 like any other write).
#[derive(Debug)]
pub enum ImageProblem {
    File(String),
    Store(&'static str, io::Error),
}

impl From<String> for ImageProblem {
    fn from(why: String) -> Self {
        ImageProblem::File(why)
    }
}

impl std::fmt::Display for ImageProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageProblem::File(why) => f.write_str(why),
            ImageProblem::Store(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

fn store_fault(what: &'static str) -> impl FnOnce(io::Error) -> ImageProblem {
    move |e| ImageProblem::Store(what, e)
}

/// New content written beside its final name in the store, as
/// `HASH.staging-TAG`: it becomes final only by an atomic rename, and is
/// removed when dropped unless promoted. (A crash can leave such files
/// behind; they are never served, as only bare hashes are.)
pub struct Staging {
    store: ImageStore,
    tag: String,
    staged: Mutex<Vec<([u8; 32], bool)>>,
}

impl Staging {
    pub fn new(store: &ImageStore) -> io::Result<Staging> {
        store.make_dirs()?;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let tag = format!("staging-{}-{nanos}", std::process::id());
        Ok(Staging { store: store.clone(), tag, staged: Mutex::default() })
    }

    fn path(&self, display: bool, hash: &str) -> PathBuf {
        let fin = if display { self.store.display_path(hash) } else { self.store.original_path(hash) };
        fin.with_extension(&self.tag)
    }

    fn staged(&self) -> Vec<([u8; 32], bool)> {
        std::mem::take(&mut *self.staged.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes every staged file final: data on disk first, then the renames,
    /// then the renames on disk, so a committed row never names a file that
    /// a crash could leave incomplete.
    pub fn promote(self) -> io::Result<()> {
        self.store.sync()?;
        let staged = self.staged();
        let result: io::Result<()> = in_parallel(&staged, |(hash, has_display)| {
            let hash = hex::encode(hash);
            // The display copy first: an original is only ever published whole.
            if *has_display {
                std::fs::rename(self.path(true, &hash), self.store.display_path(&hash))?;
            }
            std::fs::rename(self.path(false, &hash), self.store.original_path(&hash))
        })
        .into_iter()
        .collect();
        if result.is_err() {
            *self.staged.lock().unwrap_or_else(|e| e.into_inner()) = staged; // let drop clean up
        }
        result?;
        self.store.sync()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for (hash, has_display) in self.staged() {
            let hash = hex::encode(hash);
            let _ = std::fs::remove_file(self.path(false, &hash));
            if has_display {
                let _ = std::fs::remove_file(self.path(true, &hash));
            }
        }
    }
}

/// Items handed to a worker thread at a time.
const BLOCK: usize = 64;

/// `f` over every item on twice as many threads as cores: the work is
/// mostly waiting on the file system, and a blocked thread leaves its core
/// to another. Results come back in order.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let work = Mutex::new(out.chunks_mut(BLOCK).zip(items.chunks(BLOCK)));
    let threads = 2 * std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some((slots, items)) = work.lock().ok().and_then(|mut w| w.next()) else { return };
                for (slot, item) in slots.iter_mut().zip(items) {
                    *slot = Some(f(item));
                }
            });
        }
    });
    out.into_iter().map(|r| r.expect("every item is processed")).collect()
}

/// Reads, hashes and checks every distinct file, in parallel; a problem is
/// described without the file's name, which the caller adds. With a
/// [`Staging`], content the store lacks is written — until the first
/// problem, after which the import is refused anyway.
pub fn check_files(
    files: &[FileRef],
    positives: &Path,
    negatives: &Path,
    store: &ImageStore,
    staging: Option<&Staging>,
) -> Vec<Result<Checked, ImageProblem>> {
    let failed = AtomicBool::new(false);
    in_parallel(files, |f| {
        let dir = if f.dir == ImageDir::Positives { positives } else { negatives };
        let stage = staging.filter(|_| !failed.load(Ordering::Relaxed));
        let result = check_one(&dir.join(&*f.name), store, stage);
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        result
    })
}

fn check_one(path: &Path, store: &ImageStore, staging: Option<&Staging>) -> Result<Checked, ImageProblem> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => "not found".to_string(),
        _ => format!("cannot read: {e}"),
    })?;
    let header = inspect(&bytes)?;
    let hash: [u8; 32] = Sha256::digest(&bytes).into();
    let has_display = header.width.max(header.height) > DISPLAY_MAX;
    let mut staged = false;
    if let Some(staging) = staging {
        if !store.is_complete(&hex::encode(hash), has_display) {
            staged = stage(staging, &hash, &bytes, header, has_display)?;
        }
    }
    Ok(Checked { hash, header, bytes: bytes.len() as u64, has_display, staged })
}

/// Link mode, once every check has passed: each new content's source file
/// is hard-linked to its final name (one metadata operation instead of a
/// copy), or copied where linking fails (another file system), and read back
/// and hashed, so a file changed since its check is caught and removed. The
/// store then shares those files with their source: they must never be
/// changed in place. Results line up with `files`: true where this import
/// added the content.
pub fn link_files(
    files: &[FileRef],
    checked: &[Checked],
    positives: &Path,
    negatives: &Path,
    store: &ImageStore,
) -> io::Result<Vec<Result<bool, ImageProblem>>> {
    store.make_dirs()?;
    let mut seen = std::collections::HashSet::new();
    let first: Vec<bool> = checked.iter().map(|c| seen.insert(c.hash)).collect();
    let indexes: Vec<usize> = (0..files.len()).collect();
    // Where each directory really is: a name must resolve inside it with no
    // symbolic link on the way (a linked subdirectory reaches outside too).
    let (real_pos, real_neg) = (std::fs::canonicalize(positives)?, std::fs::canonicalize(negatives)?);
    Ok(in_parallel(&indexes, |&i| {
        let (f, c) = (&files[i], &checked[i]);
        let hex = hex::encode(c.hash);
        let fin = store.original_path(&hex);
        if !first[i] || store.is_complete(&hex, c.has_display) {
            return Ok(false);
        }
        let src = if f.dir == ImageDir::Positives { positives } else { negatives }.join(&*f.name);
        let real_dir = if f.dir == ImageDir::Positives { &real_pos } else { &real_neg };
        if !std::fs::canonicalize(&src).is_ok_and(|real| real.components().eq(real_dir.join(&*f.name).components())) {
            return Err(SYMLINK.to_string().into());
        }
        let changed = || "changed while importing (its content no longer matches the check)".to_string();
        // Linked under a temporary name, published only once its display
        // copy exists: a refusal or crash never leaves a half-stored image.
        static UNIQUE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = fin.with_extension(format!("link-{}-{}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_file(&tmp);
        let linked = std::fs::hard_link(&src, &tmp).is_ok();
        // link(2) does not follow a symbolic link: the store would hold the
        // link itself, pointing outside it (or nowhere). Checked on what was
        // linked, so a file swapped for a link after its check is caught too.
        if linked && std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_symlink()) {
            let _ = std::fs::remove_file(&tmp);
            return Err(SYMLINK.to_string().into());
        }
        let bytes = std::fs::read(if linked { &tmp } else { &src })
            .map_err(|e| ImageProblem::File(format!("cannot read: {e}")));
        let published = bytes.and_then(|bytes| {
            if <[u8; 32]>::from(Sha256::digest(&bytes)) != c.hash {
                return Err(changed().into());
            }
            if c.has_display {
                let (img, turn) = decode(&bytes, c.header.format).map_err(|e| format!("cannot decode: {e}"))?;
                place(&store.display_path(&hex), &display_copy(&img, turn).map_err(display_fault)?, i)?;
            }
            if linked {
                std::fs::rename(&tmp, &fin).map_err(store_fault("writing into the store"))
            } else {
                place(&fin, &bytes, i)
            }
        });
        if published.is_err() && linked {
            let _ = std::fs::remove_file(&tmp);
        }
        published.map(|()| true)
    }))
}

/// Why link mode refuses a symbolic link among the image files (or on the way to one).
pub const SYMLINK: &str = "is a symbolic link or reached through one, which --link cannot store; link or copy its \
     target instead, or import without --link";

/// Writes a file under a temporary name, flushes it, and renames it into
/// place: a crash must never leave a partial file under a final name, which
/// a later import would take as present (link mode's fallback and display
/// copies only; the copy mode stages and flushes in bulk instead).
fn place(path: &Path, bytes: &[u8], unique: usize) -> Result<(), ImageProblem> {
    use std::io::Write;
    let tmp = path.with_extension(format!("tmp-{}-{unique}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    written.and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ImageProblem::Store("writing into the store", e)
    })
}

/// The display copy is made from an image that decoded: failing to encode
/// it is the server's fault, not the file's.
fn display_fault(e: anyhow::Error) -> ImageProblem {
    ImageProblem::Store("making the display copy", io::Error::other(e))
}

/// Writes one new content beside its final name; false when another file
/// with the same content got there first.
fn stage(
    staging: &Staging,
    hash: &[u8; 32],
    bytes: &[u8],
    header: Header,
    has_display: bool,
) -> Result<bool, ImageProblem> {
    let hex = hex::encode(hash);
    let path = staging.path(false, &hex);
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(ImageProblem::Store("staging a copy", e)),
        Ok(mut file) => {
            if let Err(e) = io::Write::write_all(&mut file, bytes) {
                let _ = std::fs::remove_file(&path);
                return Err(ImageProblem::Store("staging a copy", e));
            }
        }
    }
    // Only large images are decoded, to make the copy annotators see.
    let display = if has_display {
        let copy = decode(bytes, header.format)
            .map_err(|e| ImageProblem::File(format!("cannot decode: {e}")))
            .and_then(|(img, turn)| display_copy(&img, turn).map_err(display_fault))
            .and_then(|small| {
                std::fs::write(staging.path(true, &hex), small).map_err(store_fault("staging the display copy"))
            });
        if let Err(e) = copy {
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(staging.path(true, &hex));
            return Err(e);
        }
        true
    } else {
        false
    };
    staging.staged.lock().unwrap_or_else(|e| e.into_inner()).push((*hash, display));
    Ok(true)
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
