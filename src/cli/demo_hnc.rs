//! The HNC demo (`serve --demo`): drawn images to write caption pairs for
//! (dataset `demo-hnc`), a writing study with the demo vocabulary in its
//! warning mode, pairs written by annotator2 (one skipped, one with a word
//! outside the vocabulary), the validation study built from them (dataset
//! `demo-hnc-pairs`; "all" leaves its writer, annotator2, out), and
//! annotator1's validations of half the pairs, so both kinds show answers
//! and statistics; annotator1 is left to write and to validate the rest.
//! Idempotent.
use crate::datasets::import::pairs::insert_pair;
use crate::demo::hnc::{generate, vocabulary};
use crate::domain::ids::StudyId;
use crate::domain::pairs::PairRow;
use crate::kinds::REGISTRY;
use crate::store::dataset_rows::{insert_dataset, insert_images};
use crate::store::db::now_secs;
use crate::store::images::ImageStore;
use crate::studies::create;
use sqlx::AnyPool;

pub const DEMO_HNC: &str = "demo-hnc";
pub const DEMO_HNC_PAIRS: &str = "demo-hnc-pairs";
pub const WRITING: &str = "Demo: HNC caption writing";
pub const VALIDATION: &str = "Demo: HNC pair validation";
/// Three per caption type.
pub const DEMO_HNC_COUNT: usize = 9;
const WRITER: &str = "annotator2";
/// Validators are another group than writers (HNC).
const VALIDATOR: &str = "annotator1";
/// The pairs the validator has judged; the rest are left to try.
const VALIDATED: usize = 4;

/// One answer to store: the item, the value, the texts by field.
type Given<'a> = (i64, String, Vec<(&'a str, String)>);

pub fn writing_spec() -> String {
    let words: Vec<String> = vocabulary().iter().map(|w| format!("{w:?}")).collect();
    format!(
        "name = {WRITING:?}\nkind = \"caption_writing\"\ndataset = {DEMO_HNC:?}\nannotators = \"all\"\nseed = 2024\n\
         vocabulary = [{}]\nvocabulary_strict = false\n",
        words.join(", ")
    )
}

pub fn validation_spec() -> String {
    format!(
        "name = {VALIDATION:?}\nkind = \"pair_validation\"\ndataset = {DEMO_HNC_PAIRS:?}\nsource = {WRITING:?}\n\
         annotators = \"all\"\nseed = 2024\n"
    )
}

async fn study_id(db: &AnyPool, name: &str) -> anyhow::Result<Option<StudyId>> {
    Ok(sqlx::query_scalar("SELECT id FROM studies WHERE name = $1").bind(name).fetch_optional(db).await?)
}

pub async fn seed_demo_hnc(db: &AnyPool, images: &ImageStore) -> anyhow::Result<()> {
    if study_id(db, VALIDATION).await?.is_some() {
        return Ok(());
    }
    let user = |name: &'static str| {
        sqlx::query_scalar::<_, i64>("SELECT id FROM users WHERE username = $1").bind(name).fetch_optional(db)
    };
    let (Some(writer), Some(validator)) = (user(WRITER).await?, user(VALIDATOR).await?) else { return Ok(()) };
    let items = tokio::task::spawn_blocking(|| generate(DEMO_HNC_COUNT, 2024)).await?;
    let writing = match study_id(db, WRITING).await? {
        Some(id) => id,
        None => {
            let stored = items.iter().map(|t| images.put(&t.png)).collect::<anyhow::Result<Vec<_>>>()?;
            let mut tx = crate::store::db::begin_write(db).await?;
            let dataset_id = insert_dataset(&mut tx, DEMO_HNC, "none").await?;
            for (item, img) in items.iter().zip(&stored) {
                insert_images(&mut tx, std::slice::from_ref(img)).await?;
                let row =
                    PairRow { image: String::new(), caption_type: item.caption_type.into(), id: None, pair: None };
                insert_pair(&mut tx, dataset_id, &item.key, &row, &img.hash).await?;
            }
            tx.commit().await?;
            let spec = writing_spec();
            create::create_study(db, &REGISTRY, &create::parse_spec(&REGISTRY, &spec, 0)?, &spec).await?
        }
    };
    // The writer: the known pair, except a skip on the first image and a
    // word outside the vocabulary ("shiny") in the last positive.
    let keys: Vec<(i64, String)> = sqlx::query_as(
        "SELECT i.id, i.key FROM study_items si JOIN instances i ON i.id = si.instance_id WHERE si.study_id = $1 ORDER BY i.key",
    )
    .bind(writing)
    .fetch_all(db)
    .await?;
    let written: Vec<Given> = keys
        .iter()
        .zip(&items)
        .enumerate()
        .map(|(i, ((id, _), item))| match i {
            0 => (*id, "skip:type_does_not_apply".to_string(), Vec::new()),
            _ => {
                let positive = match i == items.len() - 1 {
                    true => item.positive.replacen("A ", "A shiny ", 1),
                    false => item.positive.clone(),
                };
                (*id, "written".to_string(), vec![("positive", positive), ("negative", item.negative.clone())])
            }
        })
        .collect();
    answer_as(db, writing, writer, &written, &[]).await?;
    let spec = validation_spec();
    let validation = create::create_study(db, &REGISTRY, &create::parse_spec(&REGISTRY, &spec, 0)?, &spec).await?;
    // The validator: the first pairs valid but one whose negative it judges wrong.
    let pairs: Vec<i64> =
        sqlx::query_scalar("SELECT instance_id FROM study_items WHERE study_id = $1 ORDER BY instance_id")
            .bind(validation)
            .fetch_all(db)
            .await?;
    let (done, open) = pairs.split_at(VALIDATED.min(pairs.len()));
    let judged: Vec<Given> = done
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, if i == 1 { "negative_wrong" } else { "valid" }.to_string(), Vec::new()))
        .collect();
    answer_as(db, validation, validator, &judged, open).await
}

/// Stores one person's answers to a study's items, as the answer writer
/// would have: participation, done tasks, answers and their texts; then
/// the `open` items as tasks still to do.
async fn answer_as(db: &AnyPool, study: StudyId, user: i64, answers: &[Given<'_>], open: &[i64]) -> anyhow::Result<()> {
    let mut tx = crate::store::db::begin_write(db).await?;
    let n = answers.len() as i64;
    sqlx::query("INSERT INTO participations (study_id, user_id, total, done) VALUES ($1, $2, $3, $4)")
        .bind(study)
        .bind(user)
        .bind(n + open.len() as i64)
        .bind(n)
        .execute(&mut *tx)
        .await?;
    for (i, instance) in open.iter().enumerate() {
        sqlx::query(
            "INSERT INTO tasks (study_id, user_id, instance_id, position, seed, done) VALUES ($1, $2, $3, $4, 0, 0)",
        )
        .bind(study)
        .bind(user)
        .bind(instance)
        .bind(n + i as i64)
        .execute(&mut *tx)
        .await?;
    }
    let now = now_secs();
    for (position, (instance, value, texts)) in answers.iter().enumerate() {
        let task = sqlx::query_scalar::<_, i64>(
            "INSERT INTO tasks (study_id, user_id, instance_id, position, seed, done) VALUES ($1, $2, $3, $4, 0, 1) RETURNING id",
        )
        .bind(study)
        .bind(user)
        .bind(instance)
        .bind(position as i64)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at)
             VALUES ($1, $2, $3, $4, $5, $6, '[0]', 4000, $7)",
        )
        .bind(task)
        .bind(study)
        .bind(user)
        .bind(instance)
        .bind(value)
        .bind(value)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        for (field, text) in texts {
            sqlx::query("INSERT INTO answer_texts (task_id, field, text) VALUES ($1, $2, $3)")
                .bind(task)
                .bind(field)
                .bind(text)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}
