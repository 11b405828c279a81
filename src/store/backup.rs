//! Online backup and restore of a data dir (docs/deploy.md). The database is
//! copied by `VACUUM INTO`, a read transaction: in WAL mode the server goes on
//! committing answers meanwhile, and the copy is the database as of the
//! moment the read began, never a torn file copy. The image files copied are
//! the ones that snapshot names; they are content-addressed and never change,
//! so `--link-dest` can hard-link those an earlier backup already holds.
//! A backup is written into a hidden directory beside its destination and
//! renamed into place last, so a destination that exists is a whole backup.
use super::images::{parse_hash, sha256_hex, ImageStore};
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file that makes a directory a hardneg backup.
pub const MANIFEST: &str = "hardneg-backup.json";
const FORMAT: &str = "hardneg-backup";
const VERSION: u32 = 1;
const DB_FILE: &str = "hardneg.sqlite";

#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// Unix seconds when the database snapshot was taken.
    pub created_at: i64,
    /// The newest migration the snapshot had run.
    pub schema_version: i64,
    pub hardneg_version: String,
    pub images: usize,
    pub answers: i64,
}

#[derive(Debug)]
pub struct BackupReport {
    pub manifest: Manifest,
    /// Image files (originals and display copies) written by copying.
    pub copied: usize,
    /// Image files hard-linked from `--link-dest`.
    pub linked: usize,
    pub bytes_copied: u64,
}

/// One stored image as the snapshot lists it.
struct Listed {
    hash: String,
    has_display: bool,
}

async fn connect(path: &Path, read_only: bool) -> anyhow::Result<SqliteConnection> {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(read_only)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30))
        .disable_statement_logging()
        .connect()
        .await
        .with_context(|| format!("opening database {}", path.display()))
}

/// Integrity check, schema version, answers and the images of a database file.
async fn inspect(path: &Path) -> anyhow::Result<(i64, i64, Vec<Listed>)> {
    let mut conn = connect(path, true).await?;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await?;
    if check != "ok" {
        bail!("{}: integrity check failed: {check}", path.display());
    }
    let schema: i64 = sqlx::query_scalar("SELECT coalesce(max(version), 0) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut conn)
        .await
        .with_context(|| format!("{}: not a hardneg database (no migrations table)", path.display()))?;
    let answers: i64 = sqlx::query_scalar("SELECT count(*) FROM answers").fetch_one(&mut conn).await?;
    let rows: Vec<(String, bool)> =
        sqlx::query_as("SELECT hash, has_display FROM images ORDER BY hash").fetch_all(&mut conn).await?;
    conn.close().await?;
    let mut images = Vec::with_capacity(rows.len());
    for (hash, has_display) in rows {
        if parse_hash(&hash).is_none() {
            bail!("{}: images table holds a malformed hash {hash:?}", path.display());
        }
        images.push(Listed { hash, has_display });
    }
    Ok((schema, answers, images))
}

/// Writes a backup of `data_dir` into the new directory `dest`.
pub async fn backup(data_dir: &Path, dest: &Path, link_dest: Option<&Path>) -> anyhow::Result<BackupReport> {
    let db = data_dir.join(DB_FILE);
    if !db.is_file() {
        return Err(refused(format!("no database at {}: give the server's --data-dir", db.display())));
    }
    if dest.exists() {
        return Err(refused(format!("{}: already exists; a backup goes into a new directory", dest.display())));
    }
    if let Some(prev) = link_dest {
        read_manifest(prev).context("--link-dest")?;
    }
    let staging = Staging::create(dest)?;
    let snapshot = staging.path.join(DB_FILE);
    let created_at = super::db::now_secs();
    let mut conn = connect(&db, false).await?;
    sqlx::query("VACUUM INTO ?")
        .bind(snapshot.to_str().context("the destination's path is not UTF-8")?)
        .execute(&mut conn)
        .await
        .with_context(|| format!("snapshotting {} into {}", db.display(), snapshot.display()))?;
    conn.close().await?;
    let (schema_version, answers, images) = inspect(&snapshot).await?;

    let from = ImageStore::new(data_dir.join("images"));
    let to = ImageStore::new(staging.path.join("images"));
    let prev = link_dest.map(|p| ImageStore::new(p.join("images")));
    let mut report = BackupReport {
        manifest: Manifest {
            format: FORMAT.into(),
            version: VERSION,
            created_at,
            schema_version,
            hardneg_version: env!("CARGO_PKG_VERSION").into(),
            images: images.len(),
            answers,
        },
        copied: 0,
        linked: 0,
        bytes_copied: 0,
    };
    for image in &images {
        for (src, dst, old) in files_of(image, &from, &to, prev.as_ref()) {
            if let Some(old) = old.filter(|o| o.is_file()) {
                let dir = dst.parent().expect("store paths have a parent");
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                if std::fs::hard_link(&old, &dst).is_ok() {
                    report.linked += 1;
                    continue;
                }
            }
            let original = dst == to.original_path(&image.hash);
            report.bytes_copied += copy_checked(&src, &dst, image, original)?;
            report.copied += 1;
        }
    }
    write_json(&staging.path.join(MANIFEST), &report.manifest)?;
    staging.publish()?;
    Ok(report)
}

/// (source, destination, the same file in an earlier backup) for an image's files.
fn files_of(
    image: &Listed,
    from: &ImageStore,
    to: &ImageStore,
    prev: Option<&ImageStore>,
) -> Vec<(PathBuf, PathBuf, Option<PathBuf>)> {
    let h = &image.hash;
    let mut files = vec![(from.original_path(h), to.original_path(h), prev.map(|p| p.original_path(h)))];
    if image.has_display {
        files.push((from.display_path(h), to.display_path(h), prev.map(|p| p.display_path(h))));
    }
    files
}

/// Copies one file, checking an original against its name (a store whose
/// files rotted is reported, not copied on into every later backup).
fn copy_checked(src: &Path, dst: &Path, image: &Listed, original: bool) -> anyhow::Result<u64> {
    let bytes = match std::fs::read(src) {
        Ok(bytes) => bytes,
        // A damaged source, as a file that does not match its hash: refused (exit 2).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused(format!(
                "image {}: {} is missing (the database lists it; the store lacks it)",
                image.hash,
                src.display()
            )))
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("image {}: reading {}", image.hash, src.display())))
        }
    };
    if original && sha256_hex(&bytes) != image.hash {
        return Err(refused(format!("image {}: {} does not match its hash (damaged file)", image.hash, src.display())));
    }
    let dir = dst.parent().expect("store paths have a parent");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dst, &bytes).with_context(|| format!("writing {}", dst.display()))?;
    Ok(bytes.len() as u64)
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// What the command was given is at fault (a destination that exists, a
/// source that is not a backup or is damaged): `hardneg` exits with status 2
/// for it, as for every command's input at fault.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

fn refused(message: String) -> anyhow::Error {
    Refused(message).into()
}

/// Reads and checks a backup's manifest: the sign that `dir` is a hardneg backup.
pub fn read_manifest(dir: &Path) -> anyhow::Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| refused(format!("{}: not a hardneg backup (no readable {MANIFEST}: {e})", dir.display())))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| refused(format!("{}: not a hardneg backup manifest: {e}", path.display())))?;
    if manifest.format != FORMAT {
        return Err(refused(format!("{}: format {:?}, expected {FORMAT:?}", path.display(), manifest.format)));
    }
    if manifest.version > VERSION {
        return Err(refused(format!(
            "{}: backup format version {} is newer than this hardneg reads ({VERSION})",
            path.display(),
            manifest.version
        )));
    }
    Ok(manifest)
}

#[derive(Debug)]
pub struct RestoreReport {
    pub manifest: Manifest,
    pub files: usize,
}

/// Restores the backup `src` into `data_dir`, which must hold no database.
/// Images first, the database last and by rename: a restore cut short
/// leaves no database behind, and can simply be run again. A refused one
/// (a damaged file in the backup) takes back what it wrote: the data dir
/// it made, or the files it added to one that was there.
pub async fn restore(src: &Path, data_dir: &Path) -> anyhow::Result<RestoreReport> {
    let was: Vec<bool> = ["", "images", "serve.lock"].iter().map(|p| data_dir.join(p).exists()).collect();
    let mut added = Vec::new();
    let done = restore_into(src, data_dir, &mut added).await;
    if done.is_err() {
        let ours = |i: usize, name: &str| (!was[i]).then(|| data_dir.join(name));
        if let Some(dir) = ours(0, "") {
            drop(std::fs::remove_dir_all(dir));
        } else if let Some(images) = ours(1, "images") {
            drop(std::fs::remove_dir_all(images));
        } else {
            added.iter().for_each(|f| drop(std::fs::remove_file(f)));
        }
        ours(2, "serve.lock").map(std::fs::remove_file);
        drop(std::fs::remove_file(data_dir.join(format!("{DB_FILE}.restore-tmp"))));
    }
    done
}

async fn restore_into(src: &Path, data_dir: &Path, added: &mut Vec<PathBuf>) -> anyhow::Result<RestoreReport> {
    let manifest = read_manifest(src)?;
    let snapshot = src.join(DB_FILE);
    let (_, answers, images) =
        inspect(&snapshot).await.with_context(|| format!("{}: backup database", src.display()))?;
    if answers != manifest.answers || images.len() != manifest.images {
        return Err(refused(format!(
            "{}: the database holds {answers} answers and {} images, the manifest says {} and {}",
            src.display(),
            images.len(),
            manifest.answers,
            manifest.images
        )));
    }
    let target = data_dir.join(DB_FILE);
    if target.exists() {
        let here = format!("{}: a database is already here; restore into a new or empty data dir", target.display());
        return Err(refused(here));
    }
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    let _lock = super::leftovers::lock_data_dir(data_dir)?;
    let from = ImageStore::new(src.join("images"));
    let to = ImageStore::new(data_dir.join("images"));
    let mut files = 0;
    for image in &images {
        for (s, d, _) in files_of(image, &from, &to, None) {
            let tmp = d.with_extension(format!("tmp{}", std::process::id()));
            let result = copy_checked(&s, &tmp, image, d == to.original_path(&image.hash));
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result?;
            if !d.exists() {
                added.push(d.clone());
            }
            std::fs::rename(&tmp, &d).with_context(|| format!("renaming into {}", d.display()))?;
            files += 1;
        }
    }
    to.sync().context("flushing the restored images")?;
    let tmp = data_dir.join(format!("{DB_FILE}.restore-tmp"));
    std::fs::copy(&snapshot, &tmp).with_context(|| format!("copying {} to {}", snapshot.display(), tmp.display()))?;
    // The server's own journal mode, set before the file takes its final name.
    let mut conn = connect(&tmp, false).await?;
    sqlx::query("PRAGMA journal_mode = WAL").execute(&mut conn).await?;
    conn.close().await?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, &target).with_context(|| format!("renaming into {}", target.display()))?;
    std::fs::File::open(data_dir)?.sync_all()?;
    Ok(RestoreReport { manifest, files })
}

/// A hidden directory beside the destination, renamed onto it when whole;
/// removed if dropped before that.
struct Staging {
    path: PathBuf,
    dest: PathBuf,
    published: bool,
}

impl Staging {
    fn create(dest: &Path) -> anyhow::Result<Staging> {
        let name = dest.file_name().with_context(|| format!("{}: not a directory name", dest.display()))?;
        let parent = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let path = parent.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
        std::fs::create_dir(&path).with_context(|| format!("cannot write the backup: creating {}", path.display()))?;
        Ok(Staging { path, dest: dest.to_path_buf(), published: false })
    }

    fn publish(mut self) -> anyhow::Result<()> {
        ImageStore::new(&self.path).sync().context("flushing the backup")?;
        if self.dest.exists() {
            bail!("{}: appeared while the backup was written; left as it was", self.dest.display());
        }
        std::fs::rename(&self.path, &self.dest)
            .with_context(|| format!("renaming {} to {}", self.path.display(), self.dest.display()))?;
        self.published = true;
        let parent = self.dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::File::open(parent)?.sync_all()?;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
