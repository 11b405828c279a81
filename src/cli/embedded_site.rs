//! The client files compiled into the binary (build.rs): written once into
//! the data dir, under their content-hashed name, and served from there like
//! a site built in a checkout. A binary built without a site holds none.
use anyhow::Context;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/embedded_site.rs"));

/// The embedded site's `output-name` (`hardneg.<hash>`), if there is a site.
pub fn name() -> Option<&'static str> {
    let (_, bytes) = SITE.iter().find(|(path, _)| *path == "output-name")?;
    std::str::from_utf8(bytes).ok().map(str::trim).filter(|n| !n.is_empty())
}

/// Writes the embedded site to `<data dir>/site/<output-name>` unless a whole
/// copy is there already (its `output-name` is written last), and removes the
/// sites of earlier binaries; returns the directory to serve, or None when
/// the binary carries no site. The caller holds the data dir's lock.
pub fn unpack(data_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
    let Some(name) = name() else { return Ok(None) };
    let dir = data_dir.join("site").join(name);
    if let Ok(entries) = std::fs::read_dir(data_dir.join("site")) {
        for old in entries.flatten().filter(|e| e.file_name() != name) {
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
