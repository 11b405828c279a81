//! A tar (ustar) stream of an export directory for the download. Headers
//! are written here; files are read in chunks on a blocking thread and sent
//! through a small channel, so the archive is never held in memory.
use axum::body::Bytes;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::Sender;

const BLOCK: usize = 512;
const CHUNK: usize = 256 * 1024;

fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let s = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(s.as_bytes());
    field[digits] = 0;
}

/// A ustar header for a regular file. Long paths use the prefix field;
/// sizes past 8 GiB use the GNU base-256 form (tar and Python read both).
pub fn header(path: &str, size: u64, mtime: u64) -> Result<[u8; BLOCK], String> {
    let mut h = [0u8; BLOCK];
    let (prefix, name) = if path.len() <= 100 {
        ("", path)
    } else {
        path.char_indices()
            .filter(|&(i, c)| c == '/' && i <= 155 && path.len() - i - 1 <= 100)
            .map(|(i, _)| (&path[..i], &path[i + 1..]))
            .next()
            .ok_or_else(|| format!("path too long for a tar header: {path}"))?
    };
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    if size < 8u64.pow(11) {
        octal(&mut h[124..136], size);
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    octal(&mut h[136..148], mtime);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| b as u64).sum();
    h[148..154].copy_from_slice(format!("{sum:06o}").as_bytes());
    h[154] = 0;
    h[155] = b' ';
    Ok(h)
}

fn padding(size: u64) -> usize {
    (BLOCK - (size % BLOCK as u64) as usize) % BLOCK
}

/// The files of an export directory in archive order: the card, the rows
/// files, then `images/` (listed lazily: there may be very many).
pub struct TarPlan {
    pub dir: PathBuf,
    /// Every entry's path starts with this directory name.
    pub top: String,
    pub files: Vec<String>,
    pub content_length: u64,
}

fn entry_size(size: u64) -> u64 {
    BLOCK as u64 + size + padding(size) as u64
}

impl TarPlan {
    pub fn new(dir: &Path, top: &str, files: Vec<String>) -> io::Result<TarPlan> {
        let mut total = 2 * BLOCK as u64;
        for f in &files {
            total += entry_size(std::fs::metadata(dir.join(f))?.len());
        }
        for e in std::fs::read_dir(dir.join("images"))? {
            total += entry_size(e?.metadata()?.len());
        }
        Ok(TarPlan { dir: dir.to_path_buf(), top: top.to_string(), files, content_length: total })
    }

    /// Ends the archive: the end-of-archive blocks, or `produced`'s error so
    /// that the client sees a broken download rather than a short one.
    pub fn finish(tx: &Sender<io::Result<Bytes>>, produced: io::Result<()>) {
        let _ = tx.blocking_send(produced.map(|()| Bytes::from(vec![0u8; 2 * BLOCK])));
    }

    /// Sends every entry (on a blocking thread); fails as soon as the
    /// receiver is gone. The end-of-archive blocks are [`TarPlan::finish`]'s.
    pub fn produce(&self, tx: &Sender<io::Result<Bytes>>) -> io::Result<()> {
        let send = |b: Bytes| tx.blocking_send(Ok(b)).map_err(|_| io::Error::other("download cancelled"));
        let mtime =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let add = |rel: &str| -> io::Result<()> {
            let path = self.dir.join(rel);
            let mut file = std::fs::File::open(&path)?;
            let size = file.metadata()?.len();
            let h = header(&format!("{}/{rel}", self.top), size, mtime).map_err(io::Error::other)?;
            send(Bytes::copy_from_slice(&h))?;
            let mut left = size;
            while left > 0 {
                let mut buf = vec![0u8; CHUNK.min(left as usize)];
                file.read_exact(&mut buf)?;
                left -= buf.len() as u64;
                send(Bytes::from(buf))?;
            }
            match padding(size) {
                0 => Ok(()),
                n => send(Bytes::from(vec![0u8; n])),
            }
        };
        for f in &self.files {
            add(f)?;
        }
        for e in std::fs::read_dir(self.dir.join("images"))? {
            let name = e?.file_name();
            add(&format!("images/{}", name.to_string_lossy()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_ustar_with_a_valid_checksum() {
        let h = header("demo-final/README.md", 1234, 1_700_000_000).unwrap();
        assert_eq!(&h[..20], b"demo-final/README.md");
        assert_eq!(&h[124..136], b"00000002322\0");
        assert_eq!(&h[257..263], b"ustar\0");
        let stored = u64::from_str_radix(std::str::from_utf8(&h[148..154]).unwrap(), 8).unwrap();
        let mut blank = h;
        blank[148..156].copy_from_slice(b"        ");
        assert_eq!(stored, blank.iter().map(|&b| b as u64).sum::<u64>());
    }

    #[test]
    fn long_paths_use_the_prefix_and_huge_sizes_base_256() {
        let path = format!("{}/images/{}.png", "d".repeat(60), "a".repeat(64));
        let h = header(&path, 9 << 30, 0).unwrap();
        assert_eq!(&h[..75], format!("images/{}.png", "a".repeat(64)).as_bytes());
        assert_eq!(h[75], 0);
        assert_eq!(&h[345..345 + 61], format!("{}\0", "d".repeat(60)).as_bytes());
        assert_eq!(h[124], 0x80);
        assert_eq!(u64::from_be_bytes(h[128..136].try_into().unwrap()), 9 << 30);
        assert!(header(&"x".repeat(300), 1, 0).is_err());
        assert_eq!(padding(512), 0);
        assert_eq!(padding(513), 511);
    }
}
