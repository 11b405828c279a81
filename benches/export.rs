//! Export benchmark: `cargo bench --bench export`.
//! Builds a synthetic dataset (BENCH_INSTANCES, default 300,000) with Step 3
//! and Step 4 outcomes (`hardneg::cli::bulk_seed`), then times the streaming
//! export for each format and stage, and the download (the route's work:
//! export to scratch, then the tar stream drained), each in a fresh child
//! process (this binary re-run with BENCH_EXPORT_CHILD set), so the peak RSS
//! (VmHWM) is the export's alone. Six distinct tiny PNGs (16x16, ~100 bytes)
//! are shared by every instance: the figures measure rows, merging and the
//! card, not image bytes (each image is placed once; parquet reads it once
//! per row group). Targets (issue 15): final stage >= 50k rows/s for CSV and
//! JSONL, >= 30k rows/s for parquet, peak RSS <= 300 MB. Then the model
//! comparison (three model runs scored on every instance): the report the
//! page and `/api/v1/compare` make, on every instance and on the final
//! stage's, and a drill-down (`/api/v1/compare/failures`).
use futures_util::StreamExt;
use hardneg::cli::bulk_seed;
use hardneg::datasets::export::{download, export_to_dir, ExportRequest};
use hardneg::domain::export::Stage;
use hardneg::store::db;
use hardneg::store::images::ImageStore;
use hardneg::studies::pipeline as funnel;
use std::path::Path;
use std::time::Instant;

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn du(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|d| {
            d.flatten()
                .map(|e| e.metadata().map(|m| if m.is_dir() { du(&e.path()) } else { m.len() }).unwrap_or(0))
                .sum()
        })
        .unwrap_or(0)
}

/// In the child: one export (or only the pipeline's outcomes, or a
/// download drained to the end), then its figures.
async fn child(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let (dir, format, stage, out) = (Path::new(parts[0]), parts[1], parts[2], Path::new(parts[3]));
    let pool = db::open_pool(&dir.join("hardneg.sqlite")).await.unwrap();
    let store = ImageStore::new(dir.join("images"));
    let start = Instant::now();
    let rows = if format == "compare" {
        compare_once(&pool, stage).await
    } else if stage == "outcomes-only" {
        let p = funnel::pipeline(&pool, hardneg::kinds::KINDS, bulk_seed::DATASET).await.unwrap();
        p.step3.map(|s| s.1.len()).unwrap_or(0) as u64
    } else if let Some(format) = format.strip_prefix("tar-") {
        let req = ExportRequest::parse(bulk_seed::DATASET, format, Some(stage), None, None).unwrap();
        let d = download::prepare(pool.clone(), store, req, "bench".into()).await.unwrap();
        let mut body = std::pin::pin!(d.body);
        let mut bytes = 0u64;
        while let Some(chunk) = body.next().await {
            bytes += chunk.unwrap().len() as u64;
        }
        assert_eq!(bytes, d.content_length);
        // The rows the same export to a directory made.
        parts[4].parse().unwrap()
    } else {
        let req = ExportRequest::parse(bulk_seed::DATASET, format, Some(stage), None, None).unwrap();
        let s = export_to_dir(&pool, &store, &req, out, &req.command()).await.unwrap();
        s.counts.total()
    };
    println!("RESULT {rows} {:.3} {}", start.elapsed().as_secs_f64(), vm_hwm_kb());
}

/// The comparison's work once: the report (on the final stage's
/// instances when `stage` is `final`) or a drill-down; the outcomes read.
async fn compare_once(pool: &sqlx::AnyPool, stage: &str) -> u64 {
    use hardneg::models::{compare, failures};
    let kinds = hardneg::kinds::KINDS;
    if stage == "failures" {
        let listed = failures::failures(pool, kinds, bulk_seed::DATASET, "model-0", "group", None).await.unwrap();
        assert_eq!(listed.len(), failures::LIMIT, "the drill-down lists a full page");
        return sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM model_outcomes o JOIN model_runs r ON r.id = o.run_id WHERE r.name = 'model-0'",
        )
        .fetch_one(pool)
        .await
        .unwrap() as u64;
    }
    let stage = (stage == "final").then_some(Stage::Final);
    let only = hardneg::datasets::audit::stage_instances(pool, bulk_seed::DATASET, stage).await.unwrap();
    let report = compare::compare(pool, kinds, bulk_seed::DATASET, &[], only).await.unwrap();
    report.models.iter().map(|m| (m.n + m.left_out) as u64).sum()
}

/// Three model runs scored on every instance (once per data dir), as
/// `hardneg results import` stores them: outcomes that differ by run.
async fn seed_model_runs(pool: &sqlx::AnyPool) {
    let done: i64 = sqlx::query_scalar("SELECT count(*) FROM model_runs").fetch_one(pool).await.unwrap();
    if done > 0 {
        return;
    }
    for run in 0..3i64 {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO model_runs (dataset_id, name, source, created_at)
             SELECT id, 'model-' || $1, 'bench', 0 FROM datasets WHERE name = $2 RETURNING id",
        )
        .bind(run)
        .bind(bulk_seed::DATASET)
        .fetch_one(pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO model_outcomes (run_id, instance_id, ipos2t, ineg2t, tpos2i, tneg2i)
             SELECT $1, id, (id + $2) % 3 <> 0, (id + $2) % 5 <> 0, (id * 7 + $2) % 4 <> 0, (id + $2) % 2 FROM instances",
        )
        .bind(id)
        .bind(run)
        .execute(pool)
        .await
        .unwrap();
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if let Ok(spec) = std::env::var("BENCH_EXPORT_CHILD") {
        // RUST_LOG=hardneg=debug: the export's phases, on stderr.
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
        return rt.block_on(child(&spec));
    }
    let n: usize = std::env::var("BENCH_INSTANCES").ok().and_then(|v| v.parse().ok()).unwrap_or(300_000);
    // BENCH_DIR keeps the seeded data for the next run (profiling one
    // export again need not seed again); BENCH_ONLY picks runs ("csv-final").
    let tmp = tempfile::tempdir().unwrap();
    let keep = std::env::var("BENCH_DIR").ok().map(std::path::PathBuf::from);
    let data = keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    if data.join("hardneg.sqlite").exists() {
        println!("reusing the data in {} (BENCH_INSTANCES is ignored)", data.display());
    } else {
        std::fs::create_dir_all(&data).unwrap();
        let start = Instant::now();
        rt.block_on(async { bulk_seed::build(&data, n).await.unwrap().close().await });
        println!("built {n} instances with Step 3 and Step 4 answers in {:.1} s", start.elapsed().as_secs_f64());
    }
    rt.block_on(async {
        let pool = db::open_pool(&data.join("hardneg.sqlite")).await.unwrap();
        seed_model_runs(&pool).await;
        pool.close().await
    });
    let only = std::env::var("BENCH_ONLY").ok();
    let runs = [("-", "outcomes-only")].into_iter().chain(
        ["csv", "jsonl", "parquet"]
            .into_iter()
            .flat_map(|f| [(f, Stage::Final.as_str()), (f, Stage::Candidates.as_str())])
            .chain(["tar-csv", "tar-jsonl", "tar-parquet"].map(|f| (f, Stage::Final.as_str())))
            .chain([("compare", "all"), ("compare", "final"), ("compare", "failures")]),
    );
    let mut rows_of = std::collections::HashMap::new();
    for (format, stage) in runs {
        if only.as_ref().is_some_and(|o| !o.split(',').any(|r| r == format!("{format}-{stage}"))) {
            continue;
        }
        let out = tmp.path().join(format!("out-{format}-{stage}"));
        let rows = rows_of.get(&(format.trim_start_matches("tar-"), stage)).copied().unwrap_or(0.0);
        let res = std::process::Command::new(std::env::current_exe().unwrap())
            .env("BENCH_EXPORT_CHILD", format!("{}|{format}|{stage}|{}|{rows}", data.display(), out.display()))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&res.stdout);
        eprint!("{}", String::from_utf8_lossy(&res.stderr));
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            panic!("{format} {stage} failed: {text}{}", String::from_utf8_lossy(&res.stderr));
        };
        let f: Vec<f64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        rows_of.insert((format, stage), f[0]);
        let size = du(&out) as f64 / 1e6;
        println!(
            "{format:>11} {stage:<13} {:>8} rows in {:>6.2} s = {:>8.0} rows/s, peak RSS {:>6.1} MB, output {size:.1} MB{}",
            f[0],
            f[1],
            f[0] / f[1],
            f[2] / 1024.0,
            beside(format, stage)
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// The issue 15 target and the figure before it (docs/export.md,
/// 2026-11-22, release, 300,000 instances), printed beside a run's figures.
fn beside(format: &str, stage: &str) -> String {
    let target = match (format.trim_start_matches("tar-"), stage) {
        ("csv" | "jsonl", "final") => "50,000",
        ("parquet", "final") => "30,000",
        _ => return String::new(),
    };
    let before = BEFORE.iter().find(|b| b.0 == format).map_or("not timed", |b| b.1);
    format!("  [target >= {target} rows/s, <= 300 MB; before: {before}]")
}

const BEFORE: [(&str, &str); 3] =
    [("csv", "6,000 rows/s, 237 MB"), ("jsonl", "5,600 rows/s, 245 MB"), ("parquet", "5,500 rows/s, 240 MB")];
