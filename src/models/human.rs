//! The human baseline row of the comparison: each annotator's four answers
//! on an instance scored with the same Winoground definitions as models.
use crate::domain::category::Category;
use crate::domain::metrics::{Aggregator, Report};
use crate::domain::survey::human_baseline::outcome;
use crate::error::ServiceError;
use sqlx::SqlitePool;
use std::collections::BTreeMap;

/// Scores of the dataset's latest human-baseline study, over the instances
/// an annotator answered all four questions of (None before any).
type Answers = [Option<String>; 4];

pub async fn human_report(db: &SqlitePool, dataset_id: i64) -> Result<Option<Report>, ServiceError> {
    let study: Option<i64> =
        sqlx::query_scalar("SELECT max(id) FROM studies WHERE dataset_id = ? AND kind = 'human_baseline'")
            .bind(dataset_id)
            .fetch_one(db)
            .await?;
    let Some(study) = study else { return Ok(None) };
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
        let entry = per.entry((user, instance)).or_insert((category, Default::default()));
        if let Some(slot) = entry.1.get_mut(query as usize) {
            *slot = Some(value);
        }
    }
    let mut agg = Aggregator::new();
    let mut any = false;
    for (category, answers) in per.values() {
        if let Some(o) = outcome([0, 1, 2, 3].map(|q| answers[q].as_deref())) {
            agg.add(*category, o);
            any = true;
        }
    }
    Ok(any.then(|| agg.report()))
}
