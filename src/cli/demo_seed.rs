//! Loading the embedded demo dataset and accounts into an empty database.
use crate::accounts;
use crate::datasets::write::{insert_dataset, insert_instance, NewInstance};
use crate::domain::role::Role;
use crate::store::images::{ImageStore, StoredImage};
use crate::studies::create;
use sqlx::{Sqlite, SqlitePool, Transaction};

pub const DEMO_DATASET: &str = "demo";
pub const DEMO_STUDY: &str = "Demo: BiVLC Step 3 (four images)";

pub async fn insert_image(tx: &mut Transaction<'_, Sqlite>, img: &StoredImage) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT OR IGNORE INTO images (hash, mime, width, height, bytes, has_display) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&img.hash)
    .bind(img.mime)
    .bind(img.width as i64)
    .bind(img.height as i64)
    .bind(img.bytes as i64)
    .bind(img.has_display as i64)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Generates the demo scenes and stores them as dataset "demo". Returns the
/// number of instances. Idempotent: an existing demo dataset is left alone.
pub async fn seed_demo_dataset(db: &SqlitePool, images: &ImageStore, count: usize) -> anyhow::Result<usize> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = ?").bind(DEMO_DATASET).fetch_optional(db).await?;
    if exists.is_some() {
        return Ok(0);
    }
    let instances = tokio::task::spawn_blocking(move || crate::demo::generate(count, 2024)).await?;
    let mut stored = Vec::with_capacity(instances.len());
    for inst in &instances {
        let positive = images.put(&inst.positive_png)?;
        let mut cands = Vec::with_capacity(4);
        for png in &inst.candidates_png {
            cands.push(images.put(png)?);
        }
        stored.push((positive, cands));
    }
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    let dataset_id = insert_dataset(&mut tx, DEMO_DATASET, "none").await?;
    for (inst, (positive, cands)) in instances.iter().zip(&stored) {
        insert_image(&mut tx, positive).await?;
        let new = NewInstance {
            key: &inst.key,
            caption: &inst.caption,
            negative_caption: &inst.negative_caption,
            caption_orig: &inst.caption,
            negative_caption_orig: &inst.negative_caption,
            category: inst.category,
            positive_image: Some(&positive.hash),
        };
        let id = insert_instance(&mut tx, dataset_id, &new).await?;
        for (slot, (img, truth)) in cands.iter().zip(inst.matches_negative).enumerate() {
            insert_image(&mut tx, img).await?;
            sqlx::query("INSERT INTO candidates (instance_id, slot, image, known_match) VALUES (?, ?, ?, ?)")
                .bind(id)
                .bind(slot as i64)
                .bind(&img.hash)
                .bind(truth as i64)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(instances.len())
}

pub const DEMO_STUDY_SPEC: &str = r#"name = "Demo: BiVLC Step 3 (four images)"
kind = "four_image"
dataset = "demo"
annotators = "all"
seed = 2024
"#;

/// Creates the demo study unless it exists.
pub async fn seed_demo_study(db: &SqlitePool) -> anyhow::Result<()> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM studies WHERE name = ?").bind(DEMO_STUDY).fetch_optional(db).await?;
    if exists.is_none() {
        let study = create::parse_spec(DEMO_STUDY_SPEC, 0)?;
        create::create_study(db, &study, DEMO_STUDY_SPEC).await?;
    }
    Ok(())
}

/// On an empty database: demo accounts with fresh random passwords,
/// returned so the caller can print them once.
pub async fn seed_demo_accounts(db: &SqlitePool) -> anyhow::Result<Vec<(String, Role, String)>> {
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(db).await?;
    if users > 0 {
        return Ok(Vec::new());
    }
    let mut created = Vec::new();
    for (name, role) in [
        ("admin", Role::Admin),
        ("researcher", Role::Researcher),
        ("annotator1", Role::Annotator),
        ("annotator2", Role::Annotator),
    ] {
        let password = accounts::generate_password();
        accounts::add_user(db, name, role, &password).await?;
        created.push((name.to_string(), role, password));
    }
    Ok(created)
}
