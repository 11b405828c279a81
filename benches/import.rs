//! Candidate import benchmark: `cargo bench --bench import`.
//! (a) The real BiVLC candidates.csv (7,512 rows) with generated placeholder
//!     images (31,609 files), imported through the library function into a
//!     fresh data dir, three times; then the no-op re-import.
//! (b) A synthetic Step 2 CSV, imported by the release binary: wall time and
//!     the child's peak RSS. BENCH_ROWS rows (default 300,000), about 4.8 rows
//!     per positive image as in BiVLC, and four distinct negative images per
//!     row (1.2M files), unless BENCH_NEG_POOL=N re-uses a pool of N negative
//!     files (then the rows still name 1.2M images, but only N distinct ones).
//! Files are generated under BENCH_DIR (default: the system temp dir).
#[path = "../tests/common/placeholders.rs"]
mod placeholders;

use hardneg::server::images::ImageStore;
use hardneg::server::import::{import_candidates, ImportRequest};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn shared(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/bivlc").join(file)
}

fn main() {
    let base = std::env::var_os("BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(base).unwrap();
    real_file(tmp.path());
    synthetic(tmp.path(), env_or("BENCH_ROWS", 300_000), std::env::var("BENCH_NEG_POOL").ok().and_then(|v| v.parse().ok()));
}

fn real_file(dir: &Path) {
    let csv = shared("candidates.csv");
    let (p, n) = placeholders::image_names(&csv);
    let (pos, neg) = (dir.join("real-pos"), dir.join("real-neg"));
    let start = Instant::now();
    placeholders::write_all(&p, &n, &pos, &neg);
    println!("(a) real candidates.csv: generated {} positive JPEG + {} negative PNG placeholders in {:.1} s", p.len(), n.len(), start.elapsed().as_secs_f64());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        for run in 1..=3 {
            let data = dir.join(format!("real-data-{run}"));
            std::fs::create_dir_all(&data).unwrap();
            let db = hardneg::server::db::open_pool(&data.join("hardneg.sqlite")).await.unwrap();
            let store = ImageStore::new(data.join("images"));
            let req = ImportRequest::new(&csv, &pos, &neg);
            let start = Instant::now();
            let s = import_candidates(&db, &store, &req).await.unwrap();
            let first = start.elapsed();
            let start = Instant::now();
            let again = import_candidates(&db, &store, &req).await.unwrap();
            assert!(again.already_imported);
            println!(
                "(a) run {run}: imported {} rows, {} images ({} new) in {:.2} s; re-import (no-op, every image re-read and hashed) {:.2} s",
                s.instances,
                s.images,
                s.new_images,
                first.as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
            db.close().await;
            std::fs::remove_dir_all(&data).unwrap();
        }
    });
    std::fs::remove_dir_all(&pos).unwrap();
    std::fs::remove_dir_all(&neg).unwrap();
}

fn synthetic(dir: &Path, rows: usize, neg_pool: Option<usize>) {
    let positives = (rows * 1561).div_ceil(7512);
    let negatives = neg_pool.unwrap_or(rows * 4);
    let (pos, neg) = (dir.join("syn-pos"), dir.join("syn-neg"));
    let start = Instant::now();
    let pos_names: Vec<String> = (0..positives).map(|i| format!("{i:012}.jpg")).collect();
    let neg_names: Vec<String> = (0..negatives).map(|i| format!("{}_{}.png", i / 4, i % 4)).collect();
    placeholders::write_all(&pos_names, &neg_names, &pos, &neg);
    let file = dir.join("synthetic.csv");
    write_csv(&file, rows, &pos_names, &neg_names);
    let pool = match neg_pool {
        Some(n) => format!("a re-used pool of {n} distinct negative files"),
        None => "every negative a distinct file".to_string(),
    };
    println!(
        "(b) synthetic: {rows} rows naming {} images ({positives} distinct positives, {pool}); generated in {:.1} s",
        rows * 5,
        start.elapsed().as_secs_f64()
    );
    let data = dir.join("syn-data");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_hardneg"))
        .args(["import", "candidates"])
        .arg(&file)
        .arg("--positives")
        .arg(&pos)
        .arg("--negatives")
        .arg(&neg)
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let wall = start.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    println!("(b) {}", String::from_utf8_lossy(&out.stdout).trim());
    println!("(b) wall {:.1} s including process start; peak RSS of the import process {} MiB", wall.as_secs_f64(), child_peak_rss_kib() / 1024);
    let db_bytes: u64 = std::fs::read_dir(&data).unwrap().flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum();
    println!("(b) database files {} MiB", db_bytes / (1 << 20));
}

/// Rows reuse the real captions and categories, in order, with fresh indexes.
fn write_csv(path: &Path, rows: usize, pos: &[String], neg: &[String]) {
    let mut real = csv::Reader::from_path(shared("candidates.csv")).unwrap();
    let texts: Vec<[String; 4]> = real.records().map(|r| r.unwrap()).map(|r| [1, 2, 3, 4].map(|i| r[i].to_string())).collect();
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(std::fs::File::create(path).unwrap()));
    w.write_record(["filename", "caption", "negative_caption", "type", "subtype", "index", "hn_img_0", "hn_img_1", "hn_img_2", "hn_img_3"]).unwrap();
    for i in 0..rows {
        let t = &texts[i % texts.len()];
        let p = &pos[i * pos.len() / rows];
        let n = |k: usize| neg[(i * 4 + k) % neg.len()].as_str();
        let index = i.to_string();
        w.write_record([p.as_str(), &t[0], &t[1], &t[2], &t[3], &index, n(0), n(1), n(2), n(3)]).unwrap();
    }
    w.flush().unwrap();
    std::io::stdout().flush().unwrap();
}

/// The largest peak RSS among waited-for children, in KiB (Linux: ru_maxrss).
fn child_peak_rss_kib() -> i64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    }
}
