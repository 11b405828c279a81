//! The image files of an export: each distinct image goes under `images/`
//! once, named by its content hash. Rows share images (every instance of a
//! source image, candidates reused across instances), so the export keeps
//! the hashes it has placed and never asks the file system again: trying a
//! link per row cost two failing `linkat` calls per row.
use super::sink::io_err;
use crate::domain::export::ImageRef;
use crate::error::ServiceError;
use crate::store::images::ImageStore;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub(super) struct Placer<'a> {
    store: &'a ImageStore,
    dir: PathBuf,
    /// SHA-256 of every image placed so far, as bytes (32 per image rather
    /// than a 64-character string each).
    placed: HashSet<[u8; 32]>,
}

impl<'a> Placer<'a> {
    pub(super) fn new(store: &'a ImageStore, dir: &Path) -> Self {
        Placer { store, dir: dir.to_path_buf(), placed: HashSet::new() }
    }

    /// Places `img` unless it already is; returns whether a file was added.
    pub(super) fn place(&mut self, img: &ImageRef) -> Result<bool, ServiceError> {
        let key = digest(&img.hash)
            .ok_or_else(|| ServiceError::Internal(format!("image hash {:?} is not a SHA-256 in hex", img.hash)))?;
        if self.placed.contains(&key) {
            return Ok(false);
        }
        let added = place_image(self.store, &self.dir, img)?;
        self.placed.insert(key);
        Ok(added)
    }
}

/// The 32 bytes of a SHA-256 as the store names it (64 lower-case hex
/// digits: the file name is the text, so one key must mean one spelling).
fn digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *o = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// Places an image under `images/` by content hash: a hard link into the
/// store when the file system allows, else a copy (via a temp file, so a
/// file that exists is always whole). Returns whether it was new.
fn place_image(store: &ImageStore, dir: &Path, img: &ImageRef) -> Result<bool, ServiceError> {
    let target = dir.join(img.file_name());
    let source = store.original_path(&img.hash);
    match std::fs::hard_link(&source, &target) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // The store lost the file the database lists: say which, not the copy's name.
        Err(e) if !source.exists() => Err(ServiceError::Internal(format!(
            "the image store lacks {} (image {} of the rows): {e}; restore it from a backup",
            source.display(),
            img.hash
        ))),
        Err(_) => {
            let tmp: PathBuf = target.with_extension("part");
            std::fs::copy(&source, &tmp).map_err(|e| io_err("copying image to", &tmp, e))?;
            std::fs::rename(&tmp, &target).map_err(|e| io_err("renaming into", &target, e))?;
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_hex_hash_as_bytes() {
        let hash = crate::store::images::sha256_hex(b"x");
        let d = digest(&hash).unwrap();
        let back: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(back, hash);
        assert_eq!(digest(&hash.to_uppercase()), None);
        assert_eq!(digest(&hash[1..]), None);
        assert_eq!(digest(&format!("{}g", &hash[1..])), None);
    }
}
