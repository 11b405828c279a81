//! Candidate import benchmark: `cargo bench --bench import`.
//! (a) The real BiVLC candidates.csv (7,512 rows) with generated placeholder
//!     images (31,609 files), imported through the library function into a
//!     fresh data dir, three times copying the images and three times with
//!     --link; each followed by the no-op re-import.
//! (b) A synthetic Step 2 CSV, imported by the release binary (copying, then
//!     with --link): wall time and the child's peak RSS. BENCH_ROWS rows (default 300,000), about 4.8 rows
//!     per positive image as in BiVLC, and four negative images per row, each
//!     under its own file name (1.2M names). By default the names are hard
//!     links onto a pool of BENCH_NEG_POOL (default 100,000) distinct files:
//!     every name is still opened, read, checked and hashed, but only the
//!     pool's contents are new to the store, which keeps the disk use near
//!     1 GB instead of ~10 GB (4 KiB per tiny file, twice). BENCH_NEG_POOL=0
//!     writes every negative as a distinct file.
//! Files are generated under BENCH_DIR (default: the system temp dir), which
//! must be on one file system with enough room; BENCH_ONLY=a or b runs one part.
#[path = "../tests/api/placeholders.rs"]
mod placeholders;

use hardneg::datasets::import::{import_candidates, ImportRequest};
use hardneg::store::images::ImageStore;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn shared(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bivlc").join(file)
}

fn main() {
    let base = std::env::var_os("BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(base).unwrap();
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "b" {
        real_file(tmp.path());
    }
    if only != "a" {
        synthetic(tmp.path(), env_or("BENCH_ROWS", 300_000), env_or("BENCH_NEG_POOL", 100_000));
    }
}

fn real_file(dir: &Path) {
    let csv = shared("candidates.csv");
    let (p, n) = placeholders::image_names(&csv);
    let (pos, neg) = (dir.join("real-pos"), dir.join("real-neg"));
    let start = Instant::now();
    placeholders::write_all(&p, &n, &pos, &neg);
    println!(
        "(a) real candidates.csv: generated {} positive JPEG + {} negative PNG placeholders in {:.1} s",
        p.len(),
        n.len(),
        start.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        for (run, link) in [(1, false), (2, false), (3, false), (4, true), (5, true), (6, true)] {
            let data = dir.join(format!("real-data-{run}"));
            std::fs::create_dir_all(&data).unwrap();
            let db = hardneg::store::db::open_pool(&data.join("hardneg.sqlite")).await.unwrap();
            let store = ImageStore::new(data.join("images"));
            let mut req = ImportRequest::new(&csv, &pos, &neg);
            req.link = link;
            let start = Instant::now();
            let s = import_candidates(&db, &store, &req).await.unwrap();
            let first = start.elapsed();
            let start = Instant::now();
            let again = import_candidates(&db, &store, &req).await.unwrap();
            assert!(again.already_imported);
            println!(
                "(a) run {run} ({}): imported {} rows, {} images ({} new) in {:.2} s; re-import (no-op, every image re-read and hashed) {:.2} s",
                if link { "--link" } else { "copy" },
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

fn synthetic(dir: &Path, rows: usize, pool: usize) {
    let positives = (rows * 1561).div_ceil(7512);
    let negatives = rows * 4;
    let distinct = if pool == 0 { negatives } else { pool.min(negatives) };
    let (pos, neg) = (dir.join("syn-pos"), dir.join("syn-neg"));
    let start = Instant::now();
    let pos_names: Vec<String> = (0..positives).map(|i| format!("{i:012}.jpg")).collect();
    let neg_names: Vec<String> = (0..negatives).map(|i| format!("{}_{}.png", i / 4, i % 4)).collect();
    placeholders::write_all(&pos_names, &neg_names[..distinct], &pos, &neg);
    for (i, name) in neg_names.iter().enumerate().skip(distinct) {
        std::fs::hard_link(neg.join(&neg_names[i % distinct]), neg.join(name)).unwrap();
    }
    let file = dir.join("synthetic.csv");
    write_csv(&file, rows, &pos_names, &neg_names);
    let how = if distinct == negatives {
        "every negative a distinct file".to_string()
    } else {
        format!("{negatives} negative file names, hard links onto {distinct} distinct files")
    };
    println!(
        "(b) synthetic: {rows} rows naming {} images ({positives} distinct positives, {how}); generated in {:.1} s",
        rows * 5,
        start.elapsed().as_secs_f64()
    );
    for link in [false, true] {
        import_synthetic(dir, &file, &pos, &neg, link);
    }
}

fn import_synthetic(dir: &Path, file: &Path, pos: &Path, neg: &Path, link: bool) {
    let data = dir.join("syn-data");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_hardneg"))
        .args(["import", "candidates"])
        .args(link.then_some("--link"))
        .arg(file)
        .arg("--positives")
        .arg(pos)
        .arg("--negatives")
        .arg(neg)
        .arg("--data-dir")
        .arg(&data)
        .env("RUST_LOG", "hardneg=debug")
        .output()
        .unwrap();
    let wall = start.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = if link { "--link" } else { "copy" };
    // The log (tracing writes to stdout) gives the time at the end of each phase.
    for line in strip_ansi(&String::from_utf8_lossy(&out.stdout)).lines() {
        match line.split_once("import: ") {
            Some((_, phase)) => println!("(b) {mode}:   {phase}"),
            None => println!("(b) {mode}: {line}"),
        }
    }
    // ru_maxrss covers every waited-for child: the largest import so far.
    println!(
        "(b) {mode}: wall {:.1} s including process start; peak RSS of the import process(es) so far {} MiB",
        wall.as_secs_f64(),
        child_peak_rss_kib() / 1024
    );
    let db_bytes: u64 = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    println!("(b) {mode}: database files {} MiB", db_bytes / (1 << 20));
    std::fs::remove_dir_all(&data).unwrap();
}

/// Rows reuse the real captions and categories, in order, with fresh indexes.
fn write_csv(path: &Path, rows: usize, pos: &[String], neg: &[String]) {
    let mut real = csv::Reader::from_path(shared("candidates.csv")).unwrap();
    let texts: Vec<[String; 4]> =
        real.records().map(|r| r.unwrap()).map(|r| [1, 2, 3, 4].map(|i| r[i].to_string())).collect();
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(std::fs::File::create(path).unwrap()));
    w.write_record(hardneg::domain::candidates::COLUMNS).unwrap();
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

/// The log's colour codes removed.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            out.push(c);
        }
    }
    out
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
