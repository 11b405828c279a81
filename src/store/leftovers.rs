//! What a killed server or import leaves in the data dir, removed when the
//! server starts: partial uploads (`images/uploads/`), export scratch
//! directories (`images/.export-tmp/`) and files written beside their final
//! name in the store (`HASH.staging-*`, `HASH.link-*`, `HASH.tmp*`). No
//! process ids are consulted (in a container every start has the same one):
//! the lock taken first makes the starting server the data dir's only one.
//! A CLI import may run beside a server (docs/import.md) and stages files in
//! the store too: it holds `<image store>/import.lock` shared, and the
//! sweep leaves the store's staged files alone while anyone holds it.
use std::os::fd::AsRawFd;
use std::path::Path;

/// Holds `<data dir>/serve.lock` for the process's life: a second server on
/// the same data dir is refused instead of sweeping the first one's files.
pub struct DataDirLock(#[allow(dead_code)] std::fs::File);

pub fn lock_data_dir(data_dir: &Path) -> anyhow::Result<DataDirLock> {
    let path = data_dir.join("serve.lock");
    let file = lock_file(&path)?;
    if !flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
        anyhow::bail!("{}: another hardneg server is using this data dir", path.display());
    }
    Ok(DataDirLock(file))
}

/// A SQLite server's locks: its data dir's `serve.lock`, and one beside its
/// database file, `<file>.serve-lock`, named after the file with symlinks
/// resolved: one server per database file, whatever data dir, path or
/// link names it (an audit served one file from two data dirs, and each
/// server's images were missing at the other), while other files in the
/// same directory stay free to serve.
pub fn lock_for_sqlite(data_dir: &Path, database: &Path) -> anyhow::Result<Vec<DataDirLock>> {
    let data = lock_data_dir(data_dir)?;
    let file = resolved(database);
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".serve-lock");
    let path = file.with_file_name(name);
    let lock = lock_file(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if !flock(&lock, libc::LOCK_EX | libc::LOCK_NB) {
        anyhow::bail!("{}: another hardneg server is using the database {}", path.display(), database.display());
    }
    Ok(vec![data, DataDirLock(lock)])
}

/// The file a path names, symlinks resolved; for a file not made yet, its
/// directory's resolved path and its name.
fn resolved(file: &Path) -> std::path::PathBuf {
    if let Ok(real) = file.canonicalize() {
        return real;
    }
    let dir = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match (dir.canonicalize(), file.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => file.to_path_buf(),
    }
}

/// Held (shared) by a CLI import for its run: see the module comment.
pub struct ImportLock(#[allow(dead_code)] std::fs::File);

/// Waits while a starting server sweeps the store (a moment), then holds
/// the import lock of the image store at `root` shared.
pub fn lock_for_import(root: &Path) -> anyhow::Result<ImportLock> {
    std::fs::create_dir_all(root)?;
    let file = lock_file(&root.join("import.lock"))?;
    if !flock(&file, libc::LOCK_SH) {
        anyhow::bail!("locking {}: {}", root.join("import.lock").display(), std::io::Error::last_os_error());
    }
    Ok(ImportLock(file))
}

/// An exclusive lock on the file at `path`, waited for, held until dropped.
pub struct HeldLock(#[allow(dead_code)] std::fs::File);

pub fn wait_exclusive(path: &Path) -> anyhow::Result<HeldLock> {
    let file = lock_file(path)?;
    if !flock(&file, libc::LOCK_EX) {
        anyhow::bail!("locking {}: {}", path.display(), std::io::Error::last_os_error());
    }
    Ok(HeldLock(file))
}

fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)
}

fn flock(file: &std::fs::File, op: libc::c_int) -> bool {
    // SAFETY: flock only reads the descriptor, which `file` keeps open.
    unsafe { libc::flock(file.as_raw_fd(), op) == 0 }
}

/// Removes every leftover under the image store `root`; returns how many.
/// Files staged in the store are left while an import runs.
pub fn sweep(root: &Path) -> usize {
    let mut removed = 0;
    for scratch in ["uploads", ".export-tmp"] {
        let Ok(entries) = std::fs::read_dir(root.join(scratch)) else { continue };
        for entry in entries.flatten() {
            removed += remove(&entry.path());
        }
    }
    // Held exclusively for the sweep, so no import starts staging meanwhile.
    let Ok(lock) = lock_file(&root.join("import.lock")) else { return removed };
    if !flock(&lock, libc::LOCK_EX | libc::LOCK_NB) {
        tracing::info!("an import is writing into the image store: its staged files are swept at a later start");
        return removed;
    }
    for store_dir in ["originals", "display"] {
        let Ok(prefixes) = std::fs::read_dir(root.join(store_dir)) else { continue };
        for prefix in prefixes.flatten() {
            let Ok(files) = std::fs::read_dir(prefix.path()) else { continue };
            for file in files.flatten() {
                let name = file.file_name();
                let name = name.to_string_lossy();
                // Final names are bare hashes; anything after a dot is in-progress.
                if let Some((_, ext)) = name.split_once('.') {
                    if ["staging-", "link-", "tmp"].iter().any(|p| ext.starts_with(p)) {
                        removed += remove(&file.path());
                    }
                }
            }
        }
    }
    removed
}

fn remove(path: &Path) -> usize {
    let result = if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
    match result {
        Ok(()) => 1,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not remove a leftover");
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_go_and_final_files_stay() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let hash = "ab".repeat(32);
        for d in ["uploads/1-2/positives", ".export-tmp/1-2-3", "originals/ab", "display/ab"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["uploads/1-2/positives/x.png", ".export-tmp/1-2-3/part"] {
            std::fs::write(root.join(f), b"x").unwrap();
        }
        for ext in ["", ".staging-1-2", ".link-1-0", ".tmp-1-0", ".tmp7"] {
            std::fs::write(root.join("originals/ab").join(format!("{hash}{ext}")), b"x").unwrap();
        }
        std::fs::write(root.join("display/ab").join(&hash), b"x").unwrap();
        assert_eq!(sweep(root), 6);
        assert!(root.join("originals/ab").join(&hash).exists() && root.join("display/ab").join(&hash).exists());
        assert_eq!(std::fs::read_dir(root.join("originals/ab")).unwrap().count(), 1);
        assert_eq!(std::fs::read_dir(root.join("uploads")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(root.join(".export-tmp")).unwrap().count(), 0);
    }

    #[test]
    fn files_staged_by_a_running_import_stay() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("originals/ab").join(format!("{}.staging-1-2", "ab".repeat(32)));
        std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
        std::fs::write(&staged, b"x").unwrap();
        let import = lock_for_import(dir.path()).unwrap();
        assert_eq!(sweep(dir.path()), 0);
        assert!(staged.exists());
        drop(import);
        assert_eq!(sweep(dir.path()), 1);
        assert!(!staged.exists());
    }

    #[test]
    fn a_second_lock_on_one_data_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = lock_data_dir(dir.path()).unwrap();
        let second = lock_data_dir(dir.path()).err().unwrap().to_string();
        assert!(second.contains("another hardneg server is using this data dir"), "{second}");
    }

    #[test]
    fn a_database_file_is_served_by_one_server_whatever_its_data_dir() {
        let (a, b, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = a.path().join("hardneg.sqlite");
        std::fs::write(&file, b"").unwrap();
        let first = lock_for_sqlite(a.path(), &file).unwrap();
        let second = lock_for_sqlite(b.path(), &file).err().unwrap().to_string();
        assert!(second.contains("using the database") && second.contains("hardneg.sqlite"), "{second}");
        // A link to the same file is the same file.
        let link = c.path().join("link.sqlite");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(lock_for_sqlite(b.path(), &link).is_err(), "a symlink got around the lock");
        // Another file in the same directory is free.
        let other = a.path().join("other.sqlite");
        let beside = lock_for_sqlite(b.path(), &other).unwrap();
        drop((first, beside));
        assert_eq!(lock_for_sqlite(b.path(), &file).unwrap().len(), 2);
    }
}
