//! The human rows of the comparison: each annotator's answers on an
//! instance scored with the same Winoground definitions as models. Every
//! study of a kind that measures people (the human baseline) gets its own row
//! (a pilot never hides the main run), and when several have complete answers
//! a pooled row joins them. Only complete (annotator, instance) pairs count:
//! every question of the kind answered.
use crate::api_types::HumanRow;
use crate::domain::category::Category;
use crate::domain::ids::DatasetId;
use crate::domain::ids::StudyId;
use crate::domain::ids::UserId;
use crate::domain::metrics::{Aggregator, Outcome, Report};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::rows::from_row;
use sqlx::AnyPool;
use std::collections::{BTreeMap, BTreeSet};

/// An annotator's answers on an instance, by query.
type Answers = Vec<Option<String>>;

/// The names of the kinds that measure people, as a JSON list for `json_each`.
pub fn measurement_kinds_json() -> String {
    serde_json::to_string(&SurveyKind::measurements().map(SurveyKind::name).collect::<Vec<_>>()).unwrap_or_default()
}

/// One answer of a baseline study, as read.
struct AnswerRow {
    user_id: UserId,
    instance_id: i64,
    query: i64,
    value: String,
    neg_type: String,
    subtype: String,
}
from_row!(AnswerRow { user_id, instance_id, query, value, neg_type, subtype });

/// One annotator's complete answers on one instance.
struct Complete {
    user: i64,
    instance: i64,
    category: Category,
    outcome: Outcome,
}

/// The human rows for a dataset: one per baseline study (all of the
/// dataset's, or those in `only`), then "Human (all)" when two or more have
/// complete pairs. `rounded` turns a report into what the API shows.
pub async fn human_rows(
    db: &AnyPool,
    dataset_id: DatasetId,
    only: &[i64],
    rounded: fn(Report) -> Report,
) -> Result<Vec<HumanRow>, ServiceError> {
    let studies: Vec<(i64, String, String)> = sqlx::query_as(crate::store::statements::STUDIES_OF_KINDS.on(db))
        .bind(dataset_id)
        .bind(measurement_kinds_json())
        .fetch_all(db)
        .await?;
    for id in only {
        if !studies.iter().any(|(s, _, _)| s == id) {
            return Err(ServiceError::Invalid(format!(
                "baseline={id}: not a human-baseline study of this dataset (its baseline studies: {})",
                studies.iter().map(|(s, n, _)| format!("{s} {n:?}")).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let mut rows = Vec::new();
    let mut pooled: Vec<Complete> = Vec::new();
    let mut with_answers = 0;
    for (id, name, kind) in studies.into_iter().filter(|(s, _, _)| only.is_empty() || only.contains(s)) {
        let kind =
            SurveyKind::parse(&kind).ok_or_else(|| ServiceError::Internal(format!("study {id}: kind {kind:?}")))?;
        let complete = complete_pairs(db, id, kind).await?;
        with_answers += usize::from(!complete.is_empty());
        rows.push(row(format!("Human: {name}"), Some(StudyId::new(id)), &complete, rounded));
        pooled.extend(complete);
    }
    if with_answers >= 2 {
        rows.push(row("Human (all)".into(), None, &pooled, rounded));
    }
    Ok(rows)
}

fn row(label: String, study_id: Option<StudyId>, pairs: &[Complete], rounded: fn(Report) -> Report) -> HumanRow {
    let mut agg = Aggregator::new();
    for p in pairs {
        agg.add(p.category, p.outcome);
    }
    HumanRow {
        label,
        study_id,
        people: pairs.iter().map(|p| p.user).collect::<BTreeSet<_>>().len(),
        instances: pairs.iter().map(|p| p.instance).collect::<BTreeSet<_>>().len(),
        report: (!pairs.is_empty()).then(|| rounded(agg.report())),
    }
}

async fn complete_pairs(db: &AnyPool, study: i64, kind: SurveyKind) -> Result<Vec<Complete>, ServiceError> {
    let (Some(outcome), questions) = (kind.outcome_fn(), kind.question_count()) else { return Ok(Vec::new()) };
    let rows: Vec<AnswerRow> = sqlx::query_as(
        "SELECT a.user_id, a.instance_id, t.query, a.value, i.neg_type, i.subtype
         FROM counted_answers a JOIN tasks t ON t.id = a.task_id JOIN instances i ON i.id = a.instance_id
         WHERE a.study_id = $1",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    // (annotator, instance) -> the instance's category and the answers by query.
    let mut per: BTreeMap<(i64, i64), (Category, Answers)> = BTreeMap::new();
    for r in rows {
        let category = Category::parse(&r.neg_type, &r.subtype)
            .map_err(|e| ServiceError::internal(format!("instance {}", r.instance_id), e))?;
        let entry = per.entry((r.user_id.get(), r.instance_id)).or_insert_with(|| (category, vec![None; questions]));
        if let Some(slot) = entry.1.get_mut(r.query as usize) {
            *slot = Some(r.value);
        }
    }
    Ok(per
        .into_iter()
        .filter_map(|((user, instance), (category, answers))| {
            let outcome = outcome(&answers.iter().map(Option::as_deref).collect::<Vec<_>>())?;
            Some(Complete { user, instance, category, outcome })
        })
        .collect())
}
