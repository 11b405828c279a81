//! Adaptive-overlap studies in a dataset export: per study every item, None
//! and still-open ones included (the rows files hold only survivors), with
//! how many answers it took, why it stopped, the stop rule's value and
//! posterior, and how it was settled (`study-<id>-adaptive.csv`).
use super::sink::io_err;
use crate::domain::ids::{DatasetId, StudyId};
use crate::error::ServiceError;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::path::Path;

pub const COLUMNS: [&str; 13] = [
    "study",
    "instance_id",
    "instance_key",
    "votes",
    "answers",
    "reason",
    "stop_value",
    "stop_posterior",
    "settled_value",
    "resolved_by",
    "settled_posterior",
    "settled_posterior_model",
    "doubtful",
];

/// Writes one file per adaptive study of the dataset into `out`; their names.
pub async fn write(db: &AnyPool, dataset_id: DatasetId, out: &Path) -> Result<Vec<String>, ServiceError> {
    let studies: Vec<StudyId> = sqlx::query_scalar(
        "SELECT s.id FROM studies s JOIN adaptive_studies a ON a.study_id = s.id WHERE s.dataset_id = $1 ORDER BY s.id",
    )
    .bind(dataset_id)
    .fetch_all(db)
    .await?;
    let mut files = Vec::new();
    for id in studies {
        let raw = crate::studies::adaptive::report(db, crate::kinds::KINDS, id).await?;
        let (meta, outcomes, votes) =
            crate::studies::outcomes::study_outcomes_and_votes(db, crate::kinds::KINDS, id).await?;
        // The same settled values and doubts as the endpoint and the rows files.
        let report = crate::studies::adaptive_report::settled_report(db, raw, &meta, &outcomes).await?;
        let doubtful: std::collections::HashSet<i64> = report.doubtful.iter().map(|d| d.instance_id).collect();
        let outcomes: HashMap<i64, usize> = outcomes.iter().enumerate().map(|(x, o)| (o.instance_id, x)).collect();
        let keys: HashMap<i64, String> = sqlx::query_as(
            "SELECT i.id, i.key FROM study_items si JOIN instances i ON i.id = si.instance_id WHERE si.study_id = $1",
        )
        .bind(id)
        .fetch_all(db)
        .await?
        .into_iter()
        .collect();
        let name = format!("study-{id}-adaptive.csv");
        let path = out.join(&name);
        let csv_err = |e: csv::Error| ServiceError::internal(path.display().to_string(), e);
        let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
        w.write_record(COLUMNS).map_err(csv_err)?;
        // The study's id, as in the file's name and the other answers files.
        let study = id.to_string();
        let number = |p: Option<f64>| p.map(|p| format!("{p:.6}")).unwrap_or_default();
        for item in &report.items {
            let at = outcomes.get(&item.instance_id).copied();
            let given: Vec<String> =
                at.map(|x| votes.of(x).map(|(who, v)| format!("{who}:{v}")).collect()).unwrap_or_default();
            let by = item.resolved_by.map_or("", crate::domain::export::resolved_by_str);
            let (stop_value, stop_posterior) = match &item.stop {
                Some((v, p)) => (v.as_str(), Some(*p)),
                None => ("", None),
            };
            w.write_record([
                study.as_str(),
                &item.instance_id.to_string(),
                keys.get(&item.instance_id).map_or("", String::as_str),
                &given.join(";"),
                &item.answers.to_string(),
                item.reason.map_or("", |r| r.as_str()),
                stop_value,
                &number(stop_posterior),
                item.value.as_deref().unwrap_or_default(),
                by,
                &number(item.posterior),
                item.posterior_model.map_or("", |m| m.as_str()),
                if doubtful.contains(&item.instance_id) { "yes" } else { "" },
            ])
            .map_err(csv_err)?;
        }
        w.flush().map_err(|e| io_err("writing", &path, e))?;
        files.push(name);
    }
    Ok(files)
}
