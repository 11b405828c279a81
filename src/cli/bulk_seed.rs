//! A large curated dataset made in bulk SQL for the export benchmark and
//! the export's paging tests: `n` instances named "bench" with four
//! candidates each, a Step 3 and a Step 4 study (a pair, `resolve = "first"`)
//! with every planned task answered. Tasks follow the real pairs plan, so
//! the real resolution runs. Six distinct tiny PNGs are shared by every
//! instance: the figures measure rows, not image bytes.
use crate::accounts as auth;
use crate::cli::demo_seed;
use crate::domain::role::Role;
use crate::kinds::REGISTRY;
use crate::store::dataset_rows as datasets;
use crate::store::db;
use crate::store::images::ImageStore;
use crate::studies::create as studies;
use sqlx::AnyPool;
use std::path::Path;

/// The dataset's name.
pub const DATASET: &str = "bench";

fn png(seed: u8) -> Vec<u8> {
    // Tiny and flat, so parquet (which embeds the bytes) stays small on disk.
    let img = image::RgbImage::from_pixel(16, 16, image::Rgb([seed.wrapping_mul(40), 90, 160]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).expect("encoding a PNG in memory");
    out
}

const CATEGORY_SQL: &str = "CASE i % 7 WHEN 0 THEN 'replace' WHEN 1 THEN 'replace' WHEN 2 THEN 'replace' WHEN 3 THEN 'swap' WHEN 4 THEN 'swap' ELSE 'add' END,
    CASE i % 7 WHEN 0 THEN 'obj' WHEN 1 THEN 'att' WHEN 2 THEN 'rel' WHEN 3 THEN 'obj' WHEN 4 THEN 'att' WHEN 5 THEN 'obj' ELSE 'att' END";

/// Builds the database (`hardneg.sqlite`) and image store (`images/`) in `dir`.
pub async fn build(dir: &Path, n: usize) -> anyhow::Result<AnyPool> {
    let pool = db::open_pool(&dir.join("hardneg.sqlite")).await?;
    let store = ImageStore::new(dir.join("images"));
    let imgs = (0..6).map(|i| store.put(&png(i))).collect::<Result<Vec<_>, _>>()?;
    for name in ["a1", "a2"] {
        auth::add_user(&pool, name, Role::Annotator, "bench password").await?;
    }
    let mut tx = pool.begin().await?;
    for img in &imgs {
        demo_seed::insert_image(&mut tx, img).await?;
    }
    let ds = datasets::insert_dataset(&mut tx, DATASET, "none").await?;
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1)
         INSERT INTO instances (dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig, neg_type, subtype, positive_image)
         SELECT $2, 'bench-' || i, 'A red circle to the left of a blue square, number ' || i, 'A blue circle to the left of a red square, number ' || i,
                'a red circle to the left of a blue square, number ' || i, 'a blue circle to the left of a red square, number ' || i, {CATEGORY_SQL},
                CASE i % 2 WHEN 0 THEN $3 ELSE $4 END FROM n"
    ))
    .bind(n as i64)
    .bind(ds)
    .bind(&imgs[0].hash)
    .bind(&imgs[1].hash)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO candidates (instance_id, slot, image)
         SELECT i.id, s.slot, CASE s.slot WHEN 0 THEN $1 WHEN 1 THEN $2 WHEN 2 THEN $3 ELSE $4 END
         FROM instances i, (SELECT 0 AS slot UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) s WHERE i.dataset_id = $5",
    )
    .bind(&imgs[2].hash)
    .bind(&imgs[3].hash)
    .bind(&imgs[4].hash)
    .bind(&imgs[5].hash)
    .bind(ds)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    let step3 = "name = \"S3\"\nkind = \"four_image\"\ndataset = \"bench\"\nseed = 1\nresolve = \"first\"\n[assignment]\nrule = \"pairs\"\npairs = [[\"a1\", \"a2\"]]\noverlap = 2000\n";
    // Every 4th instance None; elsewhere slots differ between the pair now and then.
    answer(&pool, step3, "CASE WHEN t.instance_id % 4 = 3 THEN 'none' ELSE CAST((t.instance_id + t.user_id * (t.instance_id % 5 = 0)) % 3 AS TEXT) END").await?;
    let step4 =
        step3.replace("S3", "S4").replace("four_image", "ambiguity").replace("seed = 1", "seed = 2\nsource = \"S3\"");
    answer(
        &pool,
        &step4,
        "CASE (t.instance_id + t.user_id) % 5 WHEN 0 THEN 'both' WHEN 1 THEN 'generated' ELSE 'real' END",
    )
    .await?;
    Ok(pool)
}

/// Creates the study, then every planned task already answered with `value_sql`.
async fn answer(pool: &AnyPool, spec: &str, value_sql: &str) -> anyhow::Result<()> {
    let study = studies::parse_spec(&REGISTRY, spec, 0)?;
    let id = studies::create_study(pool, &REGISTRY, &study, spec).await?;
    let items = crate::studies::meta::study_items(pool, id).await?;
    let mut tx = pool.begin().await?;
    for name in ["a1", "a2"] {
        let user: i64 =
            sqlx::query_scalar("SELECT id FROM users WHERE username = $1").bind(name).fetch_one(&mut *tx).await?;
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
            let (sql, args) = crate::store::db::numbered(&mut q)?;
            sqlx::query_with(&sql, args).execute(&mut *tx).await?;
        }
    }
    // Arrival stamps as the writer makes them (microseconds), in task order.
    sqlx::query(&format!(
        "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at, arrival)
         SELECT t.id, t.study_id, t.user_id, t.instance_id, 'A', {value_sql}, '[0,1,2,3]', 1000, 1700000000,
                1700000000000000 + t.id FROM tasks t WHERE t.study_id = $1"
    ))
    .bind(id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
