//! A triplet check study in a dataset export: one row per triplet with what
//! the experts settled (`study-<id>-triplets.csv`): the final verdict, the
//! final P2 (corrected or as imported), the tags, and who settled it how.
use crate::domain::ids::StudyId;
use crate::studies::hooks::io_err;
use crate::domain::resolution::ItemState;
use crate::error::ServiceError;
use super::split;
use crate::studies::{answer_texts, outcomes::study_outcomes};
use sqlx::AnyPool;
use std::collections::HashMap;
use std::path::Path;

pub const COLUMNS: [&str; 16] = [
    "study",
    "instance",
    "key",
    "type",
    "subtype",
    "caption",
    "paraphrase",
    "negative_caption",
    "status",
    "final_value",
    "verdict",
    "tag",
    "final_p2",
    "p2_corrected",
    "settled_by",
    "answers",
];

type Instance = (i64, String, String, Option<String>, String);

/// Writes the file into `out` and returns its name.
pub async fn write(db: &AnyPool, study_id: StudyId, out: &Path) -> Result<String, ServiceError> {
    let (meta, outcomes) = study_outcomes(db, crate::kinds::KINDS, study_id).await?;
    let answers = answer_texts::answers(db, study_id).await?;
    let items = outcomes.iter().map(|o| (o.instance_id, &o.state));
    let texts = answer_texts::final_texts(db, &meta, items, &answers).await?;
    let study = study_id.to_string();
    let (instances, adjudicators) = instances_and_adjudicators(db, study_id).await?;
    let name = format!("study-{study_id}-triplets.csv");
    let path = out.join(&name);
    let csv_err = |e: csv::Error| io_err("writing", &path, e);
    let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
    w.write_record(COLUMNS).map_err(csv_err)?;
    for o in &outcomes {
        let Some((_, key, caption, p2, negative)) = instances.get(&o.instance_id) else { continue };
        let p2 = p2.clone().unwrap_or_default();
        let (status, settled_by) = status_of(&o.state, adjudicators.get(&o.instance_id));
        let value = o.final_value().unwrap_or_default();
        let (verdict, tag) = match split(value) {
            Some((valid, tag)) => (if valid { "valid" } else { "not_valid" }, tag.unwrap_or_default()),
            None => ("", ""),
        };
        let corrected = texts.get(&o.instance_id);
        let final_p2 = match (verdict, corrected) {
            ("valid", Some(t)) => t.clone(),
            ("valid", None) => p2.clone(),
            _ => String::new(),
        };
        let given: Vec<serde_json::Value> = answers
            .get(&o.instance_id)
            .into_iter()
            .flatten()
            .map(|a| serde_json::json!({ "annotator": a.annotator, "value": a.value, "text": a.text }))
            .collect();
        let given = serde_json::to_string(&given).unwrap_or_default();
        let (instance, corrected) = (o.instance_id.to_string(), corrected.is_some().to_string());
        w.write_record([
            study.as_str(),
            &instance,
            key,
            o.category.neg_type.as_str(),
            o.category.subtype.as_str(),
            caption,
            &p2,
            negative,
            status,
            value,
            verdict,
            tag,
            &final_p2,
            &corrected,
            &settled_by,
            &given,
        ])
        .map_err(csv_err)?;
    }
    w.flush().map_err(|e| io_err("writing", &path, e))?;
    Ok(name)
}

/// The study's triplets by instance id, and who adjudicated each settled one.
async fn instances_and_adjudicators(
    db: &AnyPool,
    study_id: StudyId,
) -> Result<(HashMap<i64, Instance>, HashMap<i64, String>), ServiceError> {
    let instances: HashMap<i64, Instance> = sqlx::query_as(
        "SELECT i.id, i.key, i.caption, i.paraphrase, i.negative_caption FROM study_items si
         JOIN instances i ON i.id = si.instance_id WHERE si.study_id = $1",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|r: Instance| (r.0, r))
    .collect();
    let adjudicators: HashMap<i64, String> = sqlx::query_as(
        "SELECT a.instance_id, u.username FROM adjudications a JOIN users u ON u.id = a.user_id WHERE a.study_id = $1",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    Ok((instances, adjudicators))
}

/// The item's status column and how it was settled ("adjudication by NAME"
/// when a researcher decided it).
fn status_of(state: &ItemState, adjudicator: Option<&String>) -> (&'static str, String) {
    match state {
        ItemState::Final { by, .. } => {
            let by = serde_json::to_value(by).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let by = match adjudicator {
                Some(who) if by == "adjudication" => format!("adjudication by {who}"),
                _ => by,
            };
            ("final", by)
        }
        ItemState::Disputed { .. } => ("disputed", String::new()),
        ItemState::Pending { .. } => ("open", String::new()),
    }
}
