//! Export benchmark: `cargo bench --bench export`.
//! Builds a synthetic dataset (BENCH_INSTANCES, default 300,000) with Step 3
//! and Step 4 outcomes straight into a temp SQLite made by the library's
//! migrations (bulk SQL inserts; tasks follow the real pairs plan so the real
//! resolution runs), then times the streaming export for each format and
//! stage in a fresh child process (this binary re-run with
//! BENCH_EXPORT_CHILD set), so the peak RSS (VmHWM) is the export's alone.
//! Six distinct tiny PNGs (16x16, ~100 bytes) are shared by every instance: the figures measure
//! rows, merging and file placement (every row still links, or for parquet
//! reads, its images), not image bytes.
use hardneg::accounts as auth;
use hardneg::cli::demo_seed;
use hardneg::datasets::export::{export_to_dir, ExportRequest};
use hardneg::datasets::write as datasets;
use hardneg::domain::export::Stage;
use hardneg::store::db;
use hardneg::store::images::ImageStore;
use hardneg::studies::{create as studies, pipeline as funnel};
use sqlx::SqlitePool;
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

fn png(seed: u8) -> Vec<u8> {
    // Tiny and flat, so parquet (which embeds the bytes) stays small on disk.
    let img = image::RgbImage::from_pixel(16, 16, image::Rgb([seed.wrapping_mul(40), 90, 160]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

const CATEGORY_SQL: &str = "CASE i % 7 WHEN 0 THEN 'replace' WHEN 1 THEN 'replace' WHEN 2 THEN 'replace' WHEN 3 THEN 'swap' WHEN 4 THEN 'swap' ELSE 'add' END,
    CASE i % 7 WHEN 0 THEN 'obj' WHEN 1 THEN 'att' WHEN 2 THEN 'rel' WHEN 3 THEN 'obj' WHEN 4 THEN 'att' WHEN 5 THEN 'obj' ELSE 'att' END";

async fn build(dir: &Path, n: usize) -> SqlitePool {
    let pool = db::open_pool(&dir.join("hardneg.sqlite")).await.unwrap();
    let store = ImageStore::new(dir.join("images"));
    let imgs: Vec<_> = (0..6).map(|i| store.put(&png(i)).unwrap()).collect();
    for name in ["a1", "a2"] {
        auth::add_user(&pool, name, hardneg::domain::role::Role::Annotator, "bench password").await.unwrap();
    }
    let mut tx = pool.begin().await.unwrap();
    for img in &imgs {
        demo_seed::insert_image(&mut tx, img).await.unwrap();
    }
    let ds = datasets::insert_dataset(&mut tx, "bench", "none").await.unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         INSERT INTO instances (dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig, neg_type, subtype, positive_image)
         SELECT ?, 'bench-' || i, 'A red circle to the left of a blue square, number ' || i, 'A blue circle to the left of a red square, number ' || i,
                'a red circle to the left of a blue square, number ' || i, 'a blue circle to the left of a red square, number ' || i, {CATEGORY_SQL},
                CASE i % 2 WHEN 0 THEN ? ELSE ? END FROM n"
    ))
    .bind(n as i64)
    .bind(ds)
    .bind(&imgs[0].hash)
    .bind(&imgs[1].hash)
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO candidates (instance_id, slot, image)
         SELECT i.id, s.slot, CASE s.slot WHEN 0 THEN ? WHEN 1 THEN ? WHEN 2 THEN ? ELSE ? END
         FROM instances i, (SELECT 0 AS slot UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) s WHERE i.dataset_id = ?",
    )
    .bind(&imgs[2].hash)
    .bind(&imgs[3].hash)
    .bind(&imgs[4].hash)
    .bind(&imgs[5].hash)
    .bind(ds)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let step3 = "name = \"S3\"\nkind = \"four_image\"\ndataset = \"bench\"\nseed = 1\nresolve = \"first\"\n[assignment]\nrule = \"pairs\"\npairs = [[\"a1\", \"a2\"]]\noverlap = 2000\n";
    // Every 4th instance None; elsewhere slots differ between the pair now and then.
    answer(&pool, step3, "CASE WHEN t.instance_id % 4 = 3 THEN 'none' ELSE CAST((t.instance_id + t.user_id * (t.instance_id % 5 = 0)) % 3 AS TEXT) END").await;
    let step4 =
        step3.replace("S3", "S4").replace("four_image", "ambiguity").replace("seed = 1", "seed = 2\nsource = \"S3\"");
    answer(
        &pool,
        &step4,
        "CASE (t.instance_id + t.user_id) % 5 WHEN 0 THEN 'both' WHEN 1 THEN 'generated' ELSE 'real' END",
    )
    .await;
    pool
}

/// Creates the study, then every planned task already answered with `value_sql`.
async fn answer(pool: &SqlitePool, spec: &str, value_sql: &str) {
    let study = studies::parse_spec(spec, 0).unwrap();
    let id = studies::create_study(pool, &study, spec).await.unwrap();
    let items: Vec<i64> =
        sqlx::query_scalar("SELECT instance_id FROM study_items WHERE study_id = ? ORDER BY instance_id")
            .bind(id)
            .fetch_all(pool)
            .await
            .unwrap();
    let mut tx = pool.begin().await.unwrap();
    for name in ["a1", "a2"] {
        let user: i64 =
            sqlx::query_scalar("SELECT id FROM users WHERE username = ?").bind(name).fetch_one(&mut *tx).await.unwrap();
        for chunk in study.rule.plan_upfront(study.kind.spec().questions, study.seed, user, name, &items).chunks(5000) {
            let mut q =
                sqlx::QueryBuilder::new("INSERT INTO tasks (study_id, user_id, instance_id, position, seed, done) ");
            q.push_values(chunk, |mut row, t| {
                row.push_bind(id)
                    .push_bind(user)
                    .push_bind(t.item)
                    .push_bind(t.position)
                    .push_bind(t.seed as i64)
                    .push_bind(1);
            });
            q.build().execute(&mut *tx).await.unwrap();
        }
    }
    sqlx::query(&format!(
        "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at)
         SELECT t.id, t.study_id, t.user_id, t.instance_id, 'A', {value_sql}, '[0,1,2,3]', 1000, 1700000000 FROM tasks t WHERE t.study_id = ?"
    ))
    .bind(id)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
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

/// In the child: one export (or only the pipeline's outcomes), then its figures.
async fn child(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let (dir, format, stage, out) = (Path::new(parts[0]), parts[1], parts[2], Path::new(parts[3]));
    let pool = db::open_pool(&dir.join("hardneg.sqlite")).await.unwrap();
    let start = Instant::now();
    let rows = if stage == "outcomes-only" {
        let p = funnel::pipeline(&pool, "bench").await.unwrap();
        p.step3.map(|s| s.1.len()).unwrap_or(0) as u64
    } else {
        let req = ExportRequest::parse("bench", format, Some(stage), None, None).unwrap();
        let s = export_to_dir(&pool, &ImageStore::new(dir.join("images")), &req, out, &req.command()).await.unwrap();
        s.counts.total()
    };
    println!("RESULT {rows} {:.3} {}", start.elapsed().as_secs_f64(), vm_hwm_kb());
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if let Ok(spec) = std::env::var("BENCH_EXPORT_CHILD") {
        return rt.block_on(child(&spec));
    }
    let n: usize = std::env::var("BENCH_INSTANCES").ok().and_then(|v| v.parse().ok()).unwrap_or(300_000);
    let tmp = tempfile::tempdir().unwrap();
    let start = Instant::now();
    rt.block_on(async { build(tmp.path(), n).await.close().await });
    println!("built {n} instances with Step 3 and Step 4 answers in {:.1} s", start.elapsed().as_secs_f64());
    let runs = [("-", "outcomes-only")].into_iter().chain(
        ["csv", "jsonl", "parquet"]
            .into_iter()
            .flat_map(|f| [(f, Stage::Final.as_str()), (f, Stage::Candidates.as_str())]),
    );
    for (format, stage) in runs {
        let out = tmp.path().join(format!("out-{format}-{stage}"));
        let res = std::process::Command::new(std::env::current_exe().unwrap())
            .env("BENCH_EXPORT_CHILD", format!("{}|{format}|{stage}|{}", tmp.path().display(), out.display()))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&res.stdout);
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            panic!("{format} {stage} failed: {text}{}", String::from_utf8_lossy(&res.stderr));
        };
        let f: Vec<f64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        let size = du(&out) as f64 / 1e6;
        println!(
            "{format:>7} {stage:<13} {:>8} rows in {:>6.2} s = {:>8.0} rows/s, peak RSS {:>6.1} MB, output {size:.1} MB",
            f[0],
            f[1],
            f[0] / f[1],
            f[2] / 1024.0
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}
