//! Loading the embedded demo dataset and accounts into an empty database.
use crate::accounts;
use crate::datasets::import::ab_pairs::insert_ab_pair;
use crate::datasets::import::triplets::insert_triplet;
use crate::domain::role::Role;
use crate::domain::triplets::Triplet;
use crate::kinds::REGISTRY;
use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use crate::store::images::{ImageStore, StoredImage};
use crate::studies::create;
use sqlx::{Any, AnyPool, Transaction};

pub const DEMO_DATASET: &str = "demo";
pub const DEMO_STUDY: &str = "Demo: BiVLC Step 3 (four images)";

pub async fn insert_image(tx: &mut Transaction<'_, Any>, img: &StoredImage) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO images (hash, mime, width, height, bytes, has_display) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING",
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
pub async fn seed_demo_dataset(db: &AnyPool, images: &ImageStore, count: usize) -> anyhow::Result<usize> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(DEMO_DATASET).fetch_optional(db).await?;
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
    let mut tx = crate::store::db::begin_write(db).await?;
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
            sqlx::query("INSERT INTO candidates (instance_id, slot, image, known_match) VALUES ($1, $2, $3, $4)")
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

pub const DEMO_TRIPLETS: &str = "demo-triplets";
/// Two per SugarCrepe++ subset.
pub const DEMO_TRIPLET_COUNT: usize = 10;

/// The demo triplets as dataset "demo-triplets" (idempotent, as the scenes).
pub async fn seed_demo_triplets(db: &AnyPool, images: &ImageStore) -> anyhow::Result<usize> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(DEMO_TRIPLETS).fetch_optional(db).await?;
    if exists.is_some() {
        return Ok(0);
    }
    let triplets = tokio::task::spawn_blocking(|| crate::demo::triplets::generate(DEMO_TRIPLET_COUNT, 2024)).await?;
    let stored = triplets.iter().map(|t| images.put(&t.png)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, DEMO_TRIPLETS, "none").await?;
    for (t, img) in triplets.iter().zip(&stored) {
        insert_image(&mut tx, img).await?;
        let triplet = Triplet {
            image: String::new(),
            p1: t.p1.clone(),
            p2: t.p2.clone(),
            negative: t.negative.clone(),
            category: t.category,
        };
        insert_triplet(&mut tx, dataset_id, &t.key, &triplet, &img.hash).await?;
    }
    tx.commit().await?;
    Ok(triplets.len())
}

pub const DEMO_AB_PAIRS: &str = "demo-ab-pairs";
/// One per SugarCrepe subset.
pub const DEMO_AB_PAIR_COUNT: usize = 7;

/// The demo A/B/Tie items as dataset "demo-ab-pairs" (idempotent).
pub async fn seed_demo_ab_pairs(db: &AnyPool) -> anyhow::Result<usize> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(DEMO_AB_PAIRS).fetch_optional(db).await?;
    if exists.is_some() {
        return Ok(0);
    }
    let items = crate::demo::ab_pairs::generate(DEMO_AB_PAIR_COUNT, 2024);
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, DEMO_AB_PAIRS, "none").await?;
    for (i, p) in items.iter().enumerate() {
        insert_ab_pair(&mut tx, dataset_id, &format!("ab-{i:03}"), p).await?;
    }
    tx.commit().await?;
    Ok(items.len())
}

pub const DEMO_RANKINGS: &str = "demo-rankings";
/// Two per image count (2–5).
pub const DEMO_RANKING_COUNT: usize = 8;

/// The demo prompts to rank as dataset "demo-rankings", with the demo models' scores (idempotent).
pub async fn seed_demo_rankings(db: &AnyPool, images: &ImageStore) -> anyhow::Result<usize> {
    use crate::kinds::ranking::rows::RankingRow;
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(DEMO_RANKINGS).fetch_optional(db).await?;
    if exists.is_some() {
        return Ok(0);
    }
    let prompts =
        tokio::task::spawn_blocking(|| crate::demo::ranking_prompts::generate(DEMO_RANKING_COUNT, 2024)).await?;
    let stored: Vec<Vec<StoredImage>> = prompts
        .iter()
        .map(|p| p.images.iter().map(|png| images.put(png)).collect::<anyhow::Result<Vec<_>>>())
        .collect::<anyhow::Result<_>>()?;
    let mut tx = crate::store::db::begin_write(db).await?;
    let dataset_id = insert_dataset(&mut tx, DEMO_RANKINGS, "none").await?;
    for (p, imgs) in prompts.iter().zip(&stored) {
        crate::store::dataset_rows::insert_images(&mut tx, imgs).await?;
        let row =
            RankingRow { prompt: p.prompt.clone(), images: Vec::new(), scores: p.scores.clone(), category: p.category };
        let hashes: Vec<&str> = imgs.iter().map(|i| i.hash.as_str()).collect();
        crate::datasets::import::rankings::insert_prompt(&mut tx, dataset_id, &p.key, &row, &hashes).await?;
    }
    tx.commit().await?;
    Ok(prompts.len())
}

/// The protocol demo studies: SugarCrepe++'s two odd-one-out settings on
/// the demo triplets and their expert check, SugarCrepe's A/B/Tie on the demo
/// pairs, ranking on the demo prompts.
pub const DEMO_PROTOCOL_SPECS: [&str; 5] = [
    r#"name = "Demo: SugarCrepe++ odd one out (image)"
kind = "odd_one_out"
dataset = "demo-triplets"
annotators = "all"
seed = 2024
"#,
    r#"name = "Demo: SugarCrepe++ odd one out (text only)"
kind = "odd_one_out_text"
dataset = "demo-triplets"
annotators = "all"
seed = 2024
"#,
    r#"name = "Demo: SugarCrepe++ triplet check"
kind = "triplet_check"
dataset = "demo-triplets"
annotators = "all"
seed = 2024
"#,
    r#"name = "Demo: SugarCrepe A/B/Tie"
kind = "ab_tie"
dataset = "demo-ab-pairs"
annotators = "all"
seed = 2024
"#,
    r#"name = "Demo: ranking generated images"
kind = "ranking"
dataset = "demo-rankings"
annotators = "all"
seed = 2024
"#,
];

pub const DEMO_STUDY_SPEC: &str = r#"name = "Demo: BiVLC Step 3 (four images)"
kind = "four_image"
dataset = "demo"
annotators = "all"
seed = 2024
"#;

/// Creates the demo studies unless they exist: Step 3 first (the one the
/// annotator's list starts with), then the protocol studies.
pub async fn seed_demo_study(db: &AnyPool) -> anyhow::Result<()> {
    for spec in std::iter::once(DEMO_STUDY_SPEC).chain(DEMO_PROTOCOL_SPECS) {
        let study = create::parse_spec(&REGISTRY, spec, 0)?;
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT id FROM studies WHERE name = $1").bind(&study.name).fetch_optional(db).await?;
        if exists.is_none() {
            create::create_study(db, &REGISTRY, &study, spec).await?;
        }
    }
    Ok(())
}

/// On an empty database: demo accounts with fresh random passwords,
/// returned so the caller can print them once.
pub async fn seed_demo_accounts(db: &AnyPool) -> anyhow::Result<Vec<(String, Role, String)>> {
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
    // Its participants are users too: after the accounts, which need none before them.
    crate::cli::demo_crowd::seed_demo_crowd(db, DEMO_DATASET).await?;
    Ok(created)
}
