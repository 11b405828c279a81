//! The client files compiled into the binary (build.rs): written once into
//! the data dir, under their content-hashed name, and served from there like
//! a site built in a checkout. A binary built without a site holds none.
use anyhow::Context;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/embedded_site.rs"));

/// Held while a server unpacks the site, so that servers sharing the data
/// dir unpack one after the other.
const UNPACK_LOCK: &str = ".unpack.lock";

/// The embedded site's `output-name` (`hardneg.<hash>`), if there is a site.
pub fn name() -> Option<&'static str> {
    let (_, bytes) = SITE.iter().find(|(path, _)| *path == "output-name")?;
    std::str::from_utf8(bytes).ok().map(str::trim).filter(|n| !n.is_empty())
}

/// Writes the embedded site to `<data dir>/site/<output-name>` unless a whole
/// copy is there already (its `output-name` is written last), and removes the
/// sites of earlier binaries; returns the directory to serve, or None when
/// the binary carries no site. Servers sharing a data dir (PostgreSQL's,
/// which take no data dir lock) unpack one at a time: started together, each
/// swept the other's staging files away and served a half site.
pub fn unpack(data_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
    let Some(name) = name() else { return Ok(None) };
    let site = data_dir.join("site");
    std::fs::create_dir_all(&site).with_context(|| format!("creating {}", site.display()))?;
    let _one_at_a_time = crate::store::leftovers::wait_exclusive(&site.join(UNPACK_LOCK))?;
    let dir = site.join(name);
    if let Ok(entries) = std::fs::read_dir(&site) {
        for old in entries.flatten().filter(|e| e.file_name() != name && e.file_name() != UNPACK_LOCK) {
            let _ = std::fs::remove_dir_all(old.path());
        }
    }
    if dir.join("output-name").is_file() {
        return Ok(Some(dir));
    }
    let staging = data_dir.join("site").join(format!(".{name}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    for (rel, bytes) in SITE.iter().filter(|(rel, _)| *rel != "output-name") {
        write(&staging.join(rel), bytes)?;
    }
    write(&staging.join("output-name"), name.as_bytes())?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).with_context(|| format!("unpacking the site into {}", dir.display()))?;
    Ok(Some(dir))
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Servers started together on one data dir (an audit: 7 of 18 pairs
    /// left a half site, or one server exited) each end with the whole site.
    #[test]
    fn servers_unpacking_at_once_each_get_the_whole_site() {
        let Some(name) = name() else {
            eprintln!("this build embeds no site: nothing to unpack");
            return;
        };
        let data = tempfile::tempdir().unwrap();
        // An older binary's copy, to be swept.
        std::fs::create_dir_all(data.path().join("site/hardneg.old/pkg")).unwrap();
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let starts: Vec<_> = (0..6).map(|_| s.spawn(|| unpack(data.path()).unwrap().unwrap())).collect();
            starts.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(dirs.iter().all(|d| *d == data.path().join("site").join(name)));
        for (rel, bytes) in SITE.iter().filter(|(rel, _)| *rel != "output-name") {
            let on_disk = std::fs::read(dirs[0].join(rel)).unwrap_or_default();
            assert_eq!(on_disk.len(), bytes.len(), "{rel}");
        }
        assert_eq!(std::fs::read_to_string(dirs[0].join("output-name")).unwrap(), name);
        let left: Vec<String> = std::fs::read_dir(data.path().join("site"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != UNPACK_LOCK)
            .collect();
        assert_eq!(left, [name], "no staging dir and no older copy is left");
    }
}
