//! Tiny placeholder images for the names a Step 2 candidate file uses:
//! distinct content per name (so every file hashes differently), positives
//! as JPEG and negatives as PNG so both formats go through the import.
//! Shared by tests/api/import.rs and benches/import.rs (included by path).
#![allow(dead_code)]
use std::io::Cursor;
use std::path::Path;

/// `dir/img/0.png` .. `dir/img/{n-1}.png`, distinct placeholders; returns `dir/img`.
pub fn png_dir(dir: &Path, n: u32) -> std::path::PathBuf {
    let img = dir.join("img");
    std::fs::create_dir_all(&img).unwrap();
    for i in 0..n {
        std::fs::write(img.join(format!("{i}.png")), png(i)).unwrap();
    }
    img
}

/// 1x1 PNG whose colour is `i`: distinct for i < 2^24.
pub fn png(i: u32) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(1, 1, image::Rgb([(i >> 16) as u8, (i >> 8) as u8, i as u8]));
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// 192x8 JPEG showing `i` as 24 black or white 8x8 blocks: lossy
/// compression cannot merge two of them.
pub fn jpeg(i: u32) -> Vec<u8> {
    let img = image::GrayImage::from_fn(192, 8, |x, _| image::Luma([if i >> (x / 8) & 1 == 1 { 255 } else { 0 }]));
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Jpeg).unwrap();
    out
}

/// The columns holding image names: positive `filename`, then `hn_img_0..3`.
pub fn image_names(csv_path: &Path) -> (Vec<String>, Vec<String>) {
    let mut reader = csv::Reader::from_path(csv_path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (f, hn) = (col("filename"), [col("hn_img_0"), col("hn_img_1"), col("hn_img_2"), col("hn_img_3")]);
    let (mut positives, mut negatives) = (Vec::new(), Vec::new());
    let mut seen = std::collections::HashSet::new();
    for rec in reader.records() {
        let rec = rec.unwrap();
        if seen.insert(rec[f].to_string()) {
            positives.push(rec[f].to_string());
        }
        negatives.extend(hn.iter().map(|&k| rec[k].to_string()));
    }
    (positives, negatives)
}

/// Writes a placeholder for every name, on two threads. Returns the counts.
pub fn write_all(positives: &[String], negatives: &[String], pos_dir: &Path, neg_dir: &Path) -> (usize, usize) {
    std::fs::create_dir_all(pos_dir).unwrap();
    std::fs::create_dir_all(neg_dir).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for (i, name) in positives.iter().enumerate() {
                std::fs::write(pos_dir.join(name), jpeg(i as u32)).unwrap();
            }
        });
        let half = negatives.len() / 2;
        for (offset, part) in [(0, &negatives[..half]), (half, &negatives[half..])] {
            s.spawn(move || {
                for (i, name) in part.iter().enumerate() {
                    std::fs::write(neg_dir.join(name), png((offset + i) as u32)).unwrap();
                }
            });
        }
    });
    (positives.len(), negatives.len())
}
