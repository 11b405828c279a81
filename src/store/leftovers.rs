//! What a killed server or import leaves in the data dir, removed when the
//! server starts: partial uploads (`images/uploads/`), export scratch
//! directories (`images/.export-tmp/`) and files written beside their final
//! name in the store (`HASH.staging-*`, `HASH.link-*`, `HASH.tmp*`). No
//! process ids are consulted (in a container every start has the same one):
//! the lock taken first makes the starting server the data dir's only one.
use std::path::Path;

/// Holds `<data dir>/serve.lock` for the process's life: a second server on
/// the same data dir is refused instead of sweeping the first one's files.
pub struct DataDirLock(#[allow(dead_code)] std::fs::File);

pub fn lock_data_dir(data_dir: &Path) -> anyhow::Result<DataDirLock> {
    use std::os::fd::AsRawFd;
    let path = data_dir.join("serve.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
    // SAFETY: flock only reads the descriptor, which `file` keeps open.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        anyhow::bail!("{}: another hardneg server is using this data dir", path.display());
    }
    Ok(DataDirLock(file))
}

/// Removes every leftover under the image store `root`; returns how many.
pub fn sweep(root: &Path) -> usize {
    let mut removed = 0;
    for scratch in ["uploads", ".export-tmp"] {
        let Ok(entries) = std::fs::read_dir(root.join(scratch)) else { continue };
        for entry in entries.flatten() {
            removed += remove(&entry.path());
        }
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
    fn a_second_lock_on_one_data_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = lock_data_dir(dir.path()).unwrap();
        let second = lock_data_dir(dir.path()).err().unwrap().to_string();
        assert!(second.contains("another hardneg server is using this data dir"), "{second}");
    }
}
