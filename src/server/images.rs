//! Content-addressed image store. Files are named by their SHA-256, so a
//! request can only ever name a validated hash, never a path.
use anyhow::Context;
use image::{GenericImageView, ImageFormat};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Longest side of the copy served to annotators; originals are kept for export.
pub const DISPLAY_MAX: u32 = 768;

#[derive(Debug, Clone)]
pub struct ImageStore {
    root: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    pub hash: String,
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
    pub has_display: bool,
}

/// A hash as it may appear in a URL: exactly 64 lower-case hex digits.
pub fn parse_hash(s: &str) -> Option<&str> {
    (s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))).then_some(s)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl ImageStore {
    pub fn new(root: impl Into<PathBuf>) -> ImageStore {
        ImageStore { root: root.into() }
    }

    /// The store's directory (exports stage their files beside it, on the same file system).
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, dir: &str, hash: &str) -> PathBuf {
        self.root.join(dir).join(&hash[..2]).join(hash)
    }

    pub fn original_path(&self, hash: &str) -> PathBuf {
        self.path("originals", hash)
    }

    pub fn display_path(&self, hash: &str) -> PathBuf {
        self.path("display", hash)
    }

    /// Stores `bytes` (idempotent: the same content lands on the same file).
    /// Refuses anything that does not decode as PNG or JPEG.
    pub fn put(&self, bytes: &[u8]) -> anyhow::Result<StoredImage> {
        let format = image::guess_format(bytes).context("not a recognised image format")?;
        let mime = match format {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            other => anyhow::bail!("unsupported image format {other:?} (PNG or JPEG expected)"),
        };
        let hash = sha256_hex(bytes);
        let original = self.original_path(&hash);
        let display = self.display_path(&hash);
        let (width, height);
        if original.exists() {
            let img = image::load_from_memory_with_format(bytes, format).context("decoding image")?;
            (width, height) = img.dimensions();
        } else {
            let img = image::load_from_memory_with_format(bytes, format).context("decoding image")?;
            (width, height) = img.dimensions();
            write_atomically(&original, bytes)?;
            if width.max(height) > DISPLAY_MAX {
                let small = img.resize(DISPLAY_MAX, DISPLAY_MAX, image::imageops::FilterType::Triangle);
                let mut out = Vec::new();
                small.to_rgb8().write_to(&mut std::io::Cursor::new(&mut out), ImageFormat::Jpeg)?;
                write_atomically(&display, &out)?;
            }
        }
        Ok(StoredImage {
            hash,
            mime,
            width,
            height,
            bytes: bytes.len() as u64,
            has_display: width.max(height) > DISPLAY_MAX,
        })
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().expect("store paths have a parent");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 7]));
        let mut out = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut out), ImageFormat::Png).unwrap();
        out
    }

    #[test]
    fn stores_by_content_hash_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::new(dir.path());
        let bytes = png(40, 30);
        let a = store.put(&bytes).unwrap();
        let b = store.put(&bytes).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.width, a.height, a.mime), (40, 30, "image/png"));
        assert_eq!(std::fs::read(store.original_path(&a.hash)).unwrap(), bytes);
        assert!(!a.has_display);
    }

    #[test]
    fn large_images_get_a_display_copy_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::new(dir.path());
        let s = store.put(&png(1600, 800)).unwrap();
        assert!(s.has_display);
        let small = image::load_from_memory(&std::fs::read(store.display_path(&s.hash)).unwrap()).unwrap();
        assert_eq!(small.dimensions(), (DISPLAY_MAX, DISPLAY_MAX / 2));
    }

    #[test]
    fn refuses_non_images() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ImageStore::new(dir.path()).put(b"hello").is_err());
    }

    #[test]
    fn only_exact_hashes_parse() {
        let h = sha256_hex(b"x");
        assert_eq!(parse_hash(&h), Some(h.as_str()));
        assert_eq!(parse_hash(&h.to_uppercase()), None);
        assert_eq!(parse_hash("../../etc/passwd"), None);
        assert_eq!(parse_hash(&format!("{}/..", &h[..61])), None);
    }
}
