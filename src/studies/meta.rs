//! Reading studies: a study's settings (cached, they never change), what
//! one study item shows, the list with each caller's progress, and the
//! summaries the API sends.
use crate::accounts::SessionUser;
use crate::api_types::StudySummary;
use crate::domain::assignment::{Annotators, AssignmentRule};
use crate::domain::ids::UserId;
use crate::domain::ids::{InstanceId, StudyId};
use crate::domain::resolution::ResolveRule;
use crate::domain::study::Mapping;
use crate::domain::survey::{ItemData, SurveyKind};
use crate::error::ServiceError;
use crate::state::{AppState, StudyMeta};
use crate::store::rows::from_row;
use sqlx::AnyPool;
use std::sync::Arc;

/// A `studies` row as stored; [`load_study_meta`] parses it.
struct StudyRow {
    id: StudyId,
    name: String,
    kind: String,
    dataset: String,
    instructions: String,
    annotators: String,
    rule: String,
    seed: i64,
    mapping: String,
    resolve: String,
    primary_user: Option<String>,
    source_study_id: Option<StudyId>,
    adaptive: Option<String>,
    link: Option<String>,
}
#[rustfmt::skip]
from_row!(StudyRow {
    id, name, kind, dataset, instructions, annotators, rule, seed, mapping, resolve, primary_user, source_study_id,
    adaptive, link
});

pub async fn study_meta(state: &AppState, id: StudyId) -> Result<Arc<StudyMeta>, ServiceError> {
    if let Some(meta) = state.studies.get(id) {
        return Ok(meta);
    }
    Ok(state.studies.insert(load_study_meta(&state.db, state.kinds, id).await?))
}

/// Reads a study's row; its stored kind name is looked up in `kinds` (the
/// registered kinds, handed down: this layer is below `kinds`).
pub async fn load_study_meta(db: &AnyPool, kinds: &[SurveyKind], id: StudyId) -> Result<StudyMeta, ServiceError> {
    let row: Option<StudyRow> = sqlx::query_as(
        "SELECT s.id, s.name, s.kind, d.name AS dataset, s.instructions, s.annotators, s.rule, s.seed,
                s.mapping, s.resolve, s.primary_user, s.source_study_id, a.settings AS adaptive, sl.settings AS link
         FROM studies s JOIN datasets d ON d.id = s.dataset_id
         LEFT JOIN adaptive_studies a ON a.study_id = s.id
         LEFT JOIN study_links sl ON sl.study_id = s.id WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    let StudyRow {
        id,
        name,
        kind,
        dataset,
        instructions,
        annotators,
        rule,
        seed,
        mapping,
        resolve,
        primary_user: primary,
        source_study_id,
        adaptive,
        link,
    } = row.ok_or_else(|| ServiceError::NotFound(format!("no study {id}")))?;
    let bad = |what: &str| ServiceError::Internal(format!("study {id} has a corrupt {what}"));
    let corrupt =
        |what: &str, e: serde_json::Error| ServiceError::internal(format!("study {id} has a corrupt {what}"), e);
    let meta = StudyMeta {
        id,
        name,
        kind: SurveyKind::parse_in(kinds, &kind).ok_or_else(|| bad("kind"))?,
        dataset,
        instructions,
        annotators: serde_json::from_str::<Annotators>(&annotators).map_err(|e| corrupt("annotator list", e))?,
        rule: serde_json::from_str::<AssignmentRule>(&rule).map_err(|e| corrupt("rule", e))?,
        seed: seed as u64,
        mapping: Mapping::parse(&mapping).ok_or_else(|| bad("agreement mapping"))?,
        resolve: ResolveRule::parse(&resolve).ok_or_else(|| bad("resolve rule"))?,
        primary,
        source_study_id,
        adaptive: adaptive.map(|t| parse_adaptive(id, &t)).transpose()?,
        practice_items: match link {
            Some(text) => serde_json::from_str::<crate::domain::crowd::spec::LinkSettings>(&text)
                .map_err(|e| corrupt("link settings", e))?
                .practice
                .len(),
            None => 0,
        },
    };
    Ok(meta)
}

/// A study's adaptive overlap settings as stored (JSON).
pub(crate) fn parse_adaptive(study: StudyId, text: &str) -> Result<crate::domain::adaptive::Adaptive, ServiceError> {
    serde_json::from_str(text)
        .map_err(|e| ServiceError::internal(format!("study {study} has corrupt adaptive settings"), e))
}

/// Every study, with the caller's progress where the caller takes part.
pub async fn list_studies(
    state: &AppState,
    user_id: UserId,
) -> Result<Vec<(Arc<StudyMeta>, Option<(i64, i64)>)>, ServiceError> {
    let ids: Vec<StudyId> = sqlx::query_scalar("SELECT id FROM studies ORDER BY id").fetch_all(&state.db).await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let meta = study_meta(state, id).await?;
        let progress: Option<(i64, i64)> =
            sqlx::query_as("SELECT done, total FROM participations WHERE study_id = $1 AND user_id = $2")
                .bind(id)
                .bind(user_id)
                .fetch_optional(&state.db)
                .await?;
        out.push((meta, progress));
    }
    Ok(out)
}

/// The study's items with their subsets, in instance order: what the
/// assignment rules plan over.
/// The later study built from `study_id`'s outcomes (a Step 4, a human
/// baseline), if any: once there is one, the outcomes are final.
pub(crate) async fn built_into<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    db: E,
    study_id: StudyId,
) -> Result<Option<String>, ServiceError> {
    Ok(sqlx::query_scalar("SELECT name FROM studies WHERE source_study_id = $1 ORDER BY id LIMIT 1")
        .bind(study_id)
        .fetch_optional(db)
        .await?)
}

pub async fn study_items<'c>(
    db: impl sqlx::AnyExecutor<'c> + crate::store::dialect::Backend,
    study_id: StudyId,
) -> Result<Vec<crate::domain::assignment::StudyItem>, ServiceError> {
    let rows: Vec<ItemRow> = crate::store::pages::all_rows(
        db,
        "SELECT json_group_array(json_array(id, neg_type, subtype)) FROM (
           SELECT s.instance_id AS id, i.neg_type, i.subtype FROM study_items s JOIN instances i ON i.id = s.instance_id
           WHERE s.study_id = $1 ORDER BY s.instance_id) AS r",
        study_id.get(),
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// An item as a page gives it, `[id, neg_type, subtype]`, parsed without
/// keeping its strings (a 300k-item study: no 600k small allocations).
pub(crate) struct ItemRow(pub crate::domain::assignment::StudyItem);

impl<'de> serde::Deserialize<'de> for ItemRow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::store::pages::Text;
        let (id, t, s): (i64, Text<'de>, Text<'de>) = serde::Deserialize::deserialize(d)?;
        let subset = crate::domain::category::Category::parse(&t.0, &s.0)
            .map_err(|e| serde::de::Error::custom(format!("instance {id}: {e}")))?;
        Ok(ItemRow(crate::domain::assignment::StudyItem { id, subset }))
    }
}

impl crate::store::pages::KeyFirst for ItemRow {
    fn key(&self) -> i64 {
        self.0.id
    }
}

/// The study's instance ids, ascending.
pub async fn study_item_ids(db: &AnyPool, study_id: StudyId) -> Result<Vec<i64>, ServiceError> {
    let rows: Vec<(i64,)> = crate::store::pages::all_rows(
        db,
        "SELECT json_group_array(json_array(instance_id)) FROM (
           SELECT instance_id FROM study_items WHERE study_id = $1 ORDER BY instance_id) AS r",
        study_id.get(),
    )
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

pub async fn study_item_count(db: &AnyPool, study_id: StudyId) -> Result<i64, ServiceError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM study_items WHERE study_id = $1").bind(study_id).fetch_one(db).await?)
}

pub fn summary(meta: &StudyMeta, progress: Option<(i64, i64)>) -> StudySummary {
    StudySummary {
        id: meta.id,
        name: meta.name.clone(),
        kind: meta.kind,
        dataset: meta.dataset.clone(),
        instructions: meta.instructions.clone(),
        progress: progress.map(|(done, total)| crate::api_types::Progress { done, total }),
    }
}

/// Annotators see the studies that admit them; researchers and admins see all.
pub async fn visible_studies(state: &AppState, user: &SessionUser) -> Result<Vec<StudySummary>, ServiceError> {
    if user.role.is_participant() {
        return Err(ServiceError::Forbidden("participants see only their own study, at /take/{study}".into()));
    }
    let all = list_studies(state, user.id).await?;
    Ok(all
        .into_iter()
        .filter(|(meta, _)| user.role.may_research() || meta.annotators.admits(&user.username))
        .map(|(meta, progress)| summary(&meta, progress))
        .collect())
}

/// What the kind's descriptor says it reads of one study item.
pub(crate) async fn load_item(
    db: &sqlx::AnyPool,
    kind: SurveyKind,
    study_id: StudyId,
    instance_id: InstanceId,
    query: u8,
) -> Result<ItemData, ServiceError> {
    let needs = kind.spec().needs;
    type Row = (String, String, Option<String>, Option<String>, Option<String>, Option<String>);
    let (caption, negative_caption, positive_image, paraphrase, negative_b, caption_type): Row = sqlx::query_as(
        "SELECT caption, negative_caption, positive_image, paraphrase, negative_b, caption_type FROM instances WHERE id = $1",
    )
    .bind(instance_id)
    .fetch_one(db)
    .await?;
    let candidate_images: Vec<String> = if needs.candidates.is_some() {
        sqlx::query_scalar("SELECT image FROM candidates WHERE instance_id = $1 ORDER BY slot")
            .bind(instance_id)
            .fetch_all(db)
            .await?
    } else {
        Vec::new()
    };
    let chosen_image: Option<String> = if needs.chosen_image {
        sqlx::query_scalar("SELECT chosen_image FROM study_items WHERE study_id = $1 AND instance_id = $2")
            .bind(study_id)
            .bind(instance_id)
            .fetch_optional(db)
            .await?
            .flatten()
    } else {
        None
    };
    let positive_image = positive_image.filter(|_| needs.positive_image);
    let paraphrase = paraphrase.filter(|_| needs.paraphrase);
    let negative_b = negative_b.filter(|_| needs.negative_b);
    Ok(ItemData {
        caption,
        negative_caption,
        positive_image,
        candidate_images,
        chosen_image,
        paraphrase,
        negative_b,
        caption_type,
        query,
    })
}
