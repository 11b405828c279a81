//! The image store on real files: hashes, display copies, limits, headers.
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
fn sizes_beyond_the_limits_are_refused_by_name() {
    assert!(check_size(8000, 5000).is_ok());
    assert!(check_size(100_000_000, 1).unwrap_err().contains("limited to 16384 pixels"));
    assert!(check_size(10_000, 10_000).unwrap_err().contains("limited to 40000000 pixels"));
    assert!(check_size(3300, 100).unwrap_err().contains("at most 32 times"));
    assert!(check_size(3200, 100).is_ok());
}

#[test]
fn an_original_without_its_display_copy_is_redone() {
    let dir = tempfile::tempdir().unwrap();
    let store = ImageStore::new(dir.path());
    let bytes = png(1600, 800);
    let s = store.put(&bytes).unwrap();
    std::fs::remove_file(store.display_path(&s.hash)).unwrap();
    assert!(!store.is_complete(&s.hash, true));
    store.put(&bytes).unwrap();
    assert!(store.is_complete(&s.hash, true));
}

fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 7 % 256) as u8, (y * 3 % 256) as u8, 200]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), ImageFormat::Jpeg).unwrap();
    out
}

#[test]
fn inspect_reads_headers_and_refuses_truncated_files() {
    for (bytes, mime) in [(png(33, 20), "image/png"), (jpeg(33, 20), "image/jpeg")] {
        let h = inspect(&bytes).unwrap();
        assert_eq!((h.mime, h.width, h.height), (mime, 33, 20));
        // Cut anywhere after the header and the file is refused.
        for cut in [bytes.len() - 1, bytes.len() - 2, bytes.len() / 2, 40] {
            let e = inspect(&bytes[..cut]).unwrap_err();
            assert!(e.contains("truncated") || e.contains("header"), "{mime} cut at {cut}: {e}");
        }
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"\0\0trailer");
        assert!(inspect(&trailing).is_ok(), "{mime}: data after the end marker is tolerated");
    }
    assert_eq!(inspect(b"hello").unwrap_err(), "not a PNG or JPEG file");
    assert!(inspect(b"GIF89a\x01\x00\x01\x00").unwrap_err().contains("unsupported"));
    assert!(inspect(&png(3, 3)[..20]).unwrap_err().contains("header"));
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

/// A JPEG whose EXIF says "turn 90° clockwise to show" (orientation 6).
fn jpeg_turned(w: u32, h: u32) -> Vec<u8> {
    use image::ImageEncoder;
    let img = image::RgbImage::from_fn(w, h, |x, _| image::Rgb([if x < w / 2 { 250 } else { 5 }, 0, 0]));
    // TIFF, little-endian, one IFD entry: Orientation (0x0112), SHORT, 1, value 6.
    let exif = [b"II*\0".as_slice(), &8u32.to_le_bytes(), &1u16.to_le_bytes()]
        .concat()
        .into_iter()
        .chain([0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0])
        .chain(0u32.to_le_bytes())
        .collect();
    let mut out = Vec::new();
    let mut enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
    enc.set_exif_metadata(exif).unwrap();
    enc.write_image(img.as_raw(), w, h, image::ExtendedColorType::Rgb8).unwrap();
    out
}

#[test]
fn the_display_copy_is_turned_as_the_exif_orientation_says() {
    let dir = tempfile::tempdir().unwrap();
    let store = ImageStore::new(dir.path());
    let s = store.put(&jpeg_turned(1000, 500)).unwrap();
    assert!(s.has_display);
    let small = image::load_from_memory(&std::fs::read(store.display_path(&s.hash)).unwrap()).unwrap().to_rgb8();
    // Shown upright it is tall, and the red left half of the stored pixels is now on top.
    assert_eq!(small.dimensions(), (DISPLAY_MAX / 2, DISPLAY_MAX));
    assert!(small.get_pixel(192, 100)[0] > 200 && small.get_pixel(192, 660)[0] < 60);
    // Without an orientation nothing turns.
    let plain = store.put(&png(1600, 800)).unwrap();
    let plain = image::load_from_memory(&std::fs::read(store.display_path(&plain.hash)).unwrap()).unwrap();
    assert_eq!(plain.dimensions(), (DISPLAY_MAX, DISPLAY_MAX / 2));
}

/// A PNG's header alone (no pixel data): what a decode would need is read from it.
fn png_header(w: u32, h: u32, bit_depth: u8, color: u8) -> Vec<u8> {
    fn crc(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }
    let chunk = |name: &[u8], data: &[u8]| {
        let body = [name, data].concat();
        [&(data.len() as u32).to_be_bytes()[..], &body, &crc(&body).to_be_bytes()].concat()
    };
    let ihdr = [&w.to_be_bytes()[..], &h.to_be_bytes(), &[bit_depth, color, 0, 0, 0]].concat();
    [&b"\x89PNG\r\n\x1a\n"[..], &chunk(b"IHDR", &ihdr), &chunk(b"IDAT", &[]), &chunk(b"IEND", &[])].concat()
}

#[test]
fn a_decode_over_the_memory_bound_is_refused_by_name_before_decoding() {
    // 8000 x 5000 passes the pixel limit; in 16-bit RGBA it would take 320 MB.
    let e = decode(&png_header(8000, 5000, 16, 6), ImageFormat::Png).unwrap_err().to_string();
    assert!(e.contains("8000x5000 image of 64 bits a pixel") && e.contains("over the 160 MB limit"), "{e}");
    // In 8-bit RGBA it is within the bound (and then fails on the missing pixels, not the limit).
    let e = decode(&png_header(8000, 5000, 8, 6), ImageFormat::Png).unwrap_err().to_string();
    assert!(!e.contains("limit"), "{e}");
}
