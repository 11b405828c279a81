//! Creating and reading studies.
use super::db::now_secs;
use super::error::ServiceError;
use super::state::{AppState, StudyMeta};
use crate::api_types::StudySummary;
use crate::domain::assignment::{Annotators, AssignmentRule};
use crate::domain::resolution::ResolveRule;
use crate::domain::study::{Mapping, Study, StudySpec};
use crate::domain::survey::SurveyKind;
use anyhow::Context;
use sqlx::SqlitePool;
use std::sync::Arc;

/// Parses a TOML spec (errors name the field) into a typed study.
pub fn parse_spec(text: &str, default_seed: u64) -> anyhow::Result<Study> {
    let spec: StudySpec = toml::from_str(text).map_err(|e| anyhow::anyhow!("invalid study spec: {e}"))?;
    Ok(spec.parse(default_seed)?)
}

/// Creates the study over every instance of its dataset. Returns its id.
pub async fn create_study(db: &SqlitePool, study: &Study, spec_text: &str) -> anyhow::Result<i64> {
    let mut tx = db.begin_with("BEGIN IMMEDIATE").await?;
    let dataset_id: i64 = sqlx::query_scalar("SELECT id FROM datasets WHERE name = ?")
        .bind(&study.dataset)
        .fetch_optional(&mut *tx)
        .await?
        .with_context(|| format!("field `dataset`: no dataset named {:?}", study.dataset))?;
    if let Annotators::Named(names) = &study.annotators {
        for name in names {
            let role: Option<String> = sqlx::query_scalar("SELECT role FROM users WHERE username = ?")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
            match role.as_deref() {
                Some("annotator") => {}
                Some(other) => anyhow::bail!("field `annotators`: {name:?} is a {other}, not an annotator"),
                None => anyhow::bail!("field `annotators`: no user named {name:?}"),
            }
        }
    }
    // Step 4 items are Step 3's survivors, read before this transaction
    // takes the write lock (the pipeline reads through the pool).
    let source = match &study.source {
        None => None,
        Some(name) => {
            let (sid, sds): (i64, i64) = sqlx::query_as("SELECT id, dataset_id FROM studies WHERE name = ?")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?
                .with_context(|| format!("field `source`: no study named {name:?}"))?;
            anyhow::ensure!(
                sds == dataset_id,
                "field `source`: study {name:?} is on another dataset than {:?}",
                study.dataset
            );
            Some(sid)
        }
    };
    let survivors = match source {
        Some(sid) => {
            // Step 4 checks Step 3's survivors; the human baseline samples the final ones.
            let want: &[SurveyKind] = match study.kind {
                SurveyKind::Ambiguity => &[SurveyKind::FourImage],
                _ => &[SurveyKind::Ambiguity, SurveyKind::FourImage],
            };
            let mut items =
                super::pipeline::survivors(db, sid, want).await.map_err(|e| anyhow::anyhow!("field `source`: {e}"))?;
            if let Some(n) = study.sample {
                crate::domain::rng::shuffle(&mut items, crate::domain::rng::mix(&[study.seed, 0x5341_4d50]));
                items.truncate(n);
                items.sort();
            }
            Some(items)
        }
        None => None,
    };
    let annotators = serde_json::to_string(&study.annotators)?;
    let rule = serde_json::to_string(&study.rule)?;
    let id = sqlx::query(
        "INSERT INTO studies (name, kind, dataset_id, instructions, annotators, rule, seed, spec, spec_hash, created_at,
                              source_study_id, mapping, resolve, primary_user)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&study.name)
    .bind(study.kind.as_str())
    .bind(dataset_id)
    .bind(&study.instructions)
    .bind(annotators)
    .bind(rule)
    .bind(study.seed as i64)
    .bind(spec_text)
    .bind(super::images::sha256_hex(spec_text.as_bytes()))
    .bind(now_secs())
    .bind(source)
    .bind(study.mapping.as_str())
    .bind(study.resolve.as_str())
    .bind(&study.primary)
    .execute(&mut *tx)
    .await
    .map_err(|e| match e {
        sqlx::Error::Database(d) if d.is_unique_violation() => {
            anyhow::anyhow!("field `name`: a study named {:?} already exists", study.name)
        }
        e => e.into(),
    })?
    .last_insert_rowid();
    let items = match survivors {
        None => sqlx::query(
            "INSERT INTO study_items (study_id, instance_id) SELECT ?, id FROM instances WHERE dataset_id = ?",
        )
        .bind(id)
        .bind(dataset_id)
        .execute(&mut *tx)
        .await?
        .rows_affected(),
        Some(list) => {
            for chunk in list.chunks(500) {
                let mut q = sqlx::QueryBuilder::new("INSERT INTO study_items (study_id, instance_id, chosen_image) ");
                q.push_values(chunk, |mut row, (instance, image)| {
                    row.push_bind(id).push_bind(instance).push_bind(image);
                });
                q.build().execute(&mut *tx).await?;
            }
            list.len() as u64
        }
    };
    anyhow::ensure!(items > 0, "field `dataset`: no instances to annotate in {:?}", study.dataset);
    tx.commit().await?;
    Ok(id)
}

type StudyRow = (i64, String, String, String, String, String, String, i64, String, String, Option<String>, Option<i64>);

pub async fn study_meta(state: &AppState, id: i64) -> Result<Arc<StudyMeta>, ServiceError> {
    if let Some(meta) = state.studies.get(id) {
        return Ok(meta);
    }
    Ok(state.studies.insert(load_study_meta(&state.db, id).await?))
}

pub async fn load_study_meta(db: &SqlitePool, id: i64) -> Result<StudyMeta, ServiceError> {
    let row: Option<StudyRow> = sqlx::query_as(
        "SELECT s.id, s.name, s.kind, d.name, s.instructions, s.annotators, s.rule, s.seed,
                s.mapping, s.resolve, s.primary_user, s.source_study_id
         FROM studies s JOIN datasets d ON d.id = s.dataset_id WHERE s.id = ?",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    let (id, name, kind, dataset, instructions, annotators, rule, seed, mapping, resolve, primary, source_study_id) =
        row.ok_or_else(|| ServiceError::NotFound(format!("no study {id}")))?;
    let bad = |what: &str| ServiceError::Internal(format!("study {id} has a corrupt {what}"));
    let meta = StudyMeta {
        id,
        name,
        kind: SurveyKind::parse(&kind).ok_or_else(|| bad("kind"))?,
        dataset,
        instructions,
        annotators: serde_json::from_str::<Annotators>(&annotators).map_err(|_| bad("annotator list"))?,
        rule: serde_json::from_str::<AssignmentRule>(&rule).map_err(|_| bad("rule"))?,
        seed: seed as u64,
        mapping: Mapping::parse(&mapping).ok_or_else(|| bad("agreement mapping"))?,
        resolve: ResolveRule::parse(&resolve).ok_or_else(|| bad("resolve rule"))?,
        primary,
        source_study_id,
    };
    Ok(meta)
}

/// Every study, with the caller's progress where the caller takes part.
pub async fn list_studies(
    state: &AppState,
    user_id: i64,
) -> Result<Vec<(Arc<StudyMeta>, Option<(i64, i64)>)>, ServiceError> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM studies ORDER BY id").fetch_all(&state.db).await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let meta = study_meta(state, id).await?;
        let progress: Option<(i64, i64)> =
            sqlx::query_as("SELECT done, total FROM participations WHERE study_id = ? AND user_id = ?")
                .bind(id)
                .bind(user_id)
                .fetch_optional(&state.db)
                .await?;
        out.push((meta, progress));
    }
    Ok(out)
}

pub async fn study_item_count(db: &SqlitePool, study_id: i64) -> Result<i64, ServiceError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM study_items WHERE study_id = ?").bind(study_id).fetch_one(db).await?)
}

pub fn summary(meta: &StudyMeta, progress: Option<(i64, i64)>) -> StudySummary {
    StudySummary {
        id: meta.id,
        name: meta.name.clone(),
        kind: meta.kind.as_str().to_string(),
        dataset: meta.dataset.clone(),
        instructions: meta.instructions.clone(),
        progress: progress.map(|(done, total)| crate::api_types::Progress { done, total }),
    }
}
