//! Content-addressed image store. Files are named by their SHA-256, so a
//! request can only ever name a validated hash, never a path.
use anyhow::Context;
use image::metadata::Orientation;
use image::{GenericImageView, ImageDecoder, ImageFormat};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Longest side of the copy served to annotators; originals are kept for export.
pub const DISPLAY_MAX: u32 = 768;
/// Largest image accepted, in pixels (8000 x 5000). Checked from the header,
/// before decoding.
pub const MAX_PIXELS: u64 = 40_000_000;
/// Most memory one decode may take (8-bit RGBA at [`MAX_PIXELS`]): a 16-bit
/// image of more than half as many pixels is refused by name before decoding.
pub const MAX_DECODE_BYTES: u64 = 4 * MAX_PIXELS;
/// Longest side accepted, in pixels.
pub const MAX_SIDE: u32 = 16_384;
/// Most elongated shape accepted (long side : short side).
pub const MAX_ASPECT: u32 = 32;

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

    /// Flushes everything written on the store's file system (one syncfs
    /// instead of an fsync per file: bulk imports write thousands of files).
    pub fn sync(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.root)?;
        sync_file_system(&self.root)
    }

    /// The 2 x 256 prefix directories, for bulk writers (made once).
    pub fn make_dirs(&self) -> std::io::Result<()> {
        if !self.root.join("display").join("ff").is_dir() {
            for dir in ["originals", "display"] {
                for prefix in 0..=255u8 {
                    std::fs::create_dir_all(self.root.join(dir).join(format!("{prefix:02x}")))?;
                }
            }
        }
        Ok(())
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
        let (w, h) = image::ImageReader::with_format(std::io::Cursor::new(bytes), format).into_dimensions()?;
        check_size(w, h).map_err(anyhow::Error::msg)?;
        let (img, orientation) = decode(bytes, format).context("decoding image")?;
        let (width, height) = img.dimensions();
        if !self.is_complete(&hash, width.max(height) > DISPLAY_MAX) {
            // The display copy first: an original is only ever published whole.
            if width.max(height) > DISPLAY_MAX {
                write_atomically(&display, &display_copy(&img, orientation)?)?;
            }
            write_atomically(&original, bytes)?;
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

impl ImageStore {
    /// True when the content is fully in the store: its original and, when
    /// it needs one, its display copy. An original without its display copy
    /// (an older crash) counts as absent, so the next import redoes it.
    pub fn is_complete(&self, hash: &str, has_display: bool) -> bool {
        self.original_path(hash).exists() && (!has_display || self.display_path(hash).exists())
    }
}

/// Refuses sizes beyond [`MAX_SIDE`], [`MAX_PIXELS`] and [`MAX_ASPECT`],
/// whose decoding or resizing could take the server's memory.
pub fn check_size(width: u32, height: u32) -> Result<(), String> {
    let (long, short) = (width.max(height), width.min(height));
    if long > MAX_SIDE {
        return Err(format!("{width}x{height} image: sides are limited to {MAX_SIDE} pixels"));
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(format!("{width}x{height} image: images are limited to {MAX_PIXELS} pixels"));
    }
    if long > short.saturating_mul(MAX_ASPECT) {
        return Err(format!("{width}x{height} image: the long side may be at most {MAX_ASPECT} times the short one"));
    }
    Ok(())
}

/// Decodes at most `max(1, cores / 2)` images at once, whatever the number
/// of import threads: each decode can take up to [`MAX_DECODE_BYTES`]. The
/// image comes with its EXIF orientation, which [`display_copy`] applies.
pub fn decode(bytes: &[u8], format: ImageFormat) -> image::ImageResult<(image::DynamicImage, Orientation)> {
    static SLOTS: std::sync::OnceLock<(std::sync::Mutex<usize>, std::sync::Condvar)> = std::sync::OnceLock::new();
    let (free, freed) = SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (std::sync::Mutex::new((cores / 2).max(1)), std::sync::Condvar::new())
    });
    let mut n = free.lock().unwrap_or_else(|p| p.into_inner());
    while *n == 0 {
        n = freed.wait(n).unwrap_or_else(|p| p.into_inner());
    }
    *n -= 1;
    drop(n);
    let img = decode_within_limit(bytes, format);
    *free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    freed.notify_one();
    img
}

fn decode_within_limit(bytes: &[u8], format: ImageFormat) -> image::ImageResult<(image::DynamicImage, Orientation)> {
    let mut decoder = image::ImageReader::with_format(std::io::Cursor::new(bytes), format).into_decoder()?;
    let need = decoder.total_bytes();
    if need > MAX_DECODE_BYTES {
        let (w, h) = decoder.dimensions();
        let bits = decoder.color_type().bytes_per_pixel() * 8;
        let msg = format!(
            "{w}x{h} image of {bits} bits a pixel: decoding it takes {} MB, over the {} MB limit \
             (save it with 8 bits a channel, or smaller)",
            need / 1_000_000,
            MAX_DECODE_BYTES / 1_000_000
        );
        return Err(image::ImageError::IoError(std::io::Error::other(msg)));
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Ok((image::DynamicImage::from_decoder(decoder)?, orientation))
}

/// The copy annotators see: longest side [`DISPLAY_MAX`], JPEG, turned as
/// its EXIF orientation says (as a browser shows the original). A box
/// filter in one pass (`thumbnail`) allocates only the small copy; a
/// two-pass resize would hold a float copy of a whole long side, and the
/// turn is made on the small copy.
pub fn display_copy(img: &image::DynamicImage, orientation: Orientation) -> anyhow::Result<Vec<u8>> {
    let mut small = img.thumbnail(DISPLAY_MAX, DISPLAY_MAX);
    small.apply_orientation(orientation);
    let mut out = Vec::new();
    small.to_rgb8().write_to(&mut std::io::Cursor::new(&mut out), ImageFormat::Jpeg)?;
    Ok(out)
}

/// What a bulk import learns about an image without decoding its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub format: ImageFormat,
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
}

/// The bulk import's check, far cheaper than a decode: PNG or JPEG magic
/// bytes, a header that gives non-zero dimensions, and a complete file
/// structure (PNG: chunks up to IEND; JPEG: segments and scans up to EOI),
/// so a truncated file is refused. Damaged compressed pixel data inside a
/// complete structure is not detected; that needs a full decode.
pub fn inspect(bytes: &[u8]) -> Result<Header, String> {
    let (format, mime) = match image::guess_format(bytes) {
        Ok(ImageFormat::Png) => (ImageFormat::Png, "image/png"),
        Ok(ImageFormat::Jpeg) => (ImageFormat::Jpeg, "image/jpeg"),
        Ok(other) => return Err(format!("unsupported image format {other:?} (PNG or JPEG expected)")),
        Err(_) => return Err("not a PNG or JPEG file".into()),
    };
    let (width, height) = image::ImageReader::with_format(std::io::Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(|e| format!("unreadable {} header: {e}", format_name(format)))?;
    if width == 0 || height == 0 {
        return Err(format!("{}x{} image", width, height));
    }
    check_size(width, height)?;
    let complete = if format == ImageFormat::Png { png_complete(bytes) } else { jpeg_complete(bytes) };
    complete.map_err(|e| format!("{} {e}", format_name(format)))?;
    Ok(Header { format, mime, width, height })
}

fn format_name(f: ImageFormat) -> &'static str {
    if f == ImageFormat::Png {
        "PNG"
    } else {
        "JPEG"
    }
}

/// Walks the chunks after the signature; data after IEND is tolerated.
fn png_complete(b: &[u8]) -> Result<(), String> {
    let mut pos = 8;
    while pos + 8 <= b.len() {
        let len = u32::from_be_bytes([b[pos], b[pos + 1], b[pos + 2], b[pos + 3]]) as usize;
        let end = pos.saturating_add(12).saturating_add(len);
        if end > b.len() {
            return Err(format!("truncated: a chunk at byte {pos} runs past the end ({} bytes)", b.len()));
        }
        if &b[pos + 4..pos + 8] == b"IEND" {
            return Ok(());
        }
        pos = end;
    }
    Err(format!("truncated: no IEND chunk ({} bytes)", b.len()))
}

/// Walks the marker segments and entropy-coded scans after SOI up to EOI.
/// In scan data a 0xFF byte is followed by 0x00 (stuffing) or a restart
/// marker, so the next other 0xFF xx is the next marker.
fn jpeg_complete(b: &[u8]) -> Result<(), String> {
    let truncated = || format!("truncated: no end-of-image marker ({} bytes)", b.len());
    let mut pos = 2;
    loop {
        // Skip anything up to the next marker, then fill bytes.
        pos += b.get(pos..).and_then(|r| r.iter().position(|&x| x == 0xFF)).ok_or_else(truncated)?;
        while b.get(pos + 1) == Some(&0xFF) {
            pos += 1;
        }
        let marker = *b.get(pos + 1).ok_or_else(truncated)?;
        match marker {
            0xD9 => return Ok(()),
            0x00 | 0x01 | 0xD0..=0xD7 => pos += 2,
            _ => {
                let len =
                    b.get(pos + 2..pos + 4).map(|l| u16::from_be_bytes([l[0], l[1]]) as usize).ok_or_else(truncated)?;
                pos += 2 + len;
                if pos > b.len() {
                    return Err(truncated());
                }
                if marker == 0xDA {
                    pos = scan_end(b, pos).ok_or_else(truncated)?;
                }
            }
        }
    }
}

/// The position of the marker that ends the scan starting at `pos`.
fn scan_end(b: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        pos += b.get(pos..)?.iter().position(|&x| x == 0xFF)?;
        match *b.get(pos + 1)? {
            0x00 | 0xD0..=0xD7 => pos += 2,
            _ => return Some(pos),
        }
    }
}

#[cfg(target_os = "linux")]
fn sync_file_system(dir: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(dir)?;
    // SAFETY: syncfs only reads the descriptor, which `f` keeps open.
    if unsafe { libc::syncfs(f.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_dir: &Path) -> std::io::Result<()> {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
    Ok(())
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
#[path = "images_tests.rs"]
mod tests;
