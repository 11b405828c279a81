//! The human baseline row of the comparison: each annotator's four answers
//! on an instance scored with the same Winoground definitions as models.
use crate::domain::category::Category;
use crate::domain::metrics::{Aggregator, Report};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use sqlx::SqlitePool;
use std::collections::BTreeMap;

/// An annotator's answers on an instance, by query.
type Answers = Vec<Option<String>>;

/// The names of the kinds that measure people, as a JSON list for `json_each`.
pub fn measurement_kinds_json() -> String {
    serde_json::to_string(&SurveyKind::measurements().map(SurveyKind::name).collect::<Vec<_>>()).unwrap_or_default()
}

/// Scores of the dataset's latest study of a kind that measures people (the
/// human baseline), over the instances an annotator answered every question
/// of (None before any).
pub async fn human_report(db: &SqlitePool, dataset_id: i64) -> Result<Option<Report>, ServiceError> {
    let study: Option<(i64, String)> = sqlx::query_as(
        "SELECT id, kind FROM studies WHERE dataset_id = ? AND kind IN (SELECT value FROM json_each(?))
         ORDER BY id DESC LIMIT 1",
    )
    .bind(dataset_id)
    .bind(measurement_kinds_json())
    .fetch_optional(db)
    .await?;
    let Some((study, kind)) = study else { return Ok(None) };
    let kind =
        SurveyKind::parse(&kind).ok_or_else(|| ServiceError::Internal(format!("study {study}: kind {kind:?}")))?;
    let (Some(outcome), questions) = (kind.outcome_fn(), kind.question_count()) else { return Ok(None) };
    let rows: Vec<(i64, i64, i64, String, String, String)> = sqlx::query_as(
        "SELECT a.user_id, a.instance_id, t.query, a.value, i.neg_type, i.subtype
         FROM answers a JOIN tasks t ON t.id = a.task_id JOIN instances i ON i.id = a.instance_id
         WHERE a.study_id = ?",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    // (annotator, instance) -> the instance's category and the four answers by query.
    let mut per: BTreeMap<(i64, i64), (Category, Answers)> = BTreeMap::new();
    for (user, instance, query, value, t, s) in rows {
        let category = Category::parse(&t, &s).map_err(|e| ServiceError::Internal(e.to_string()))?;
        let entry = per.entry((user, instance)).or_insert_with(|| (category, vec![None; questions]));
        if let Some(slot) = entry.1.get_mut(query as usize) {
            *slot = Some(value);
        }
    }
    let mut agg = Aggregator::new();
    let mut any = false;
    for (category, answers) in per.values() {
        if let Some(o) = outcome(&answers.iter().map(Option::as_deref).collect::<Vec<_>>()) {
            agg.add(*category, o);
            any = true;
        }
    }
    Ok(any.then(|| agg.report()))
}
