//! A pair validation study in a dataset export (HNC): the pairs its
//! validators settled `valid`, and only those, as new instances in the
//! shape `hardneg import pairs` reads (`image, type, id, caption,
//! negative_caption`), once as CSV (`study-<id>-validated-pairs.csv`) and
//! once as JSON Lines (`…jsonl`). `image` is the path under `images/`
//! where the export put the pair's image, so the export directory is the
//! `--images` directory of a re-import (docs/export.md).
use crate::domain::ids::StudyId;
use crate::studies::hooks::io_err;
use crate::domain::export::ImageRef;
use crate::error::ServiceError;
use super::VALID;
use crate::studies::outcomes::study_outcomes;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// The columns `hardneg import pairs` reads first, then provenance it ignores.
pub const COLUMNS: [&str; 7] = ["image", "type", "id", "caption", "negative_caption", "study", "instance"];

type Pair = (i64, String, String, String, Option<String>, String, String, i64);

/// Writes both files into `out`; returns their names.
pub async fn write(db: &AnyPool, study_id: StudyId, out: &Path) -> Result<Vec<String>, ServiceError> {
    let (_, outcomes) = study_outcomes(db, crate::kinds::KINDS, study_id).await?;
    let study = study_id.to_string();
    let pairs: HashMap<i64, Pair> = sqlx::query_as(
        "SELECT i.id, i.key, i.caption, i.negative_caption, i.caption_type, m.hash, m.mime, m.bytes
         FROM study_items si JOIN instances i ON i.id = si.instance_id JOIN images m ON m.hash = i.positive_image
         WHERE si.study_id = $1",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|p: Pair| (p.0, p))
    .collect();
    let (csv_name, jsonl_name) =
        (format!("study-{study_id}-validated-pairs.csv"), format!("study-{study_id}-validated-pairs.jsonl"));
    let csv_path = out.join(&csv_name);
    let csv_err = |e: csv::Error| io_err("writing", &csv_path, e);
    let mut csv_out = csv::Writer::from_path(&csv_path).map_err(csv_err)?;
    csv_out.write_record(COLUMNS).map_err(csv_err)?;
    let jsonl_path = out.join(&jsonl_name);
    let mut jsonl = Vec::new();
    let mut valid: Vec<&Pair> =
        outcomes.iter().filter(|o| o.final_value() == Some(VALID)).filter_map(|o| pairs.get(&o.instance_id)).collect();
    valid.sort_by_key(|p| p.0);
    for (id, key, caption, negative, caption_type, hash, mime, bytes) in valid {
        let image = ImageRef { hash: hash.clone(), mime: mime.clone(), bytes: *bytes as u64 }.path();
        let caption_type = caption_type.clone().unwrap_or_default();
        let instance = id.to_string();
        let row = [image.as_str(), &caption_type, key, caption, negative, &study, &instance];
        csv_out.write_record(row).map_err(csv_err)?;
        let object: serde_json::Map<String, serde_json::Value> =
            COLUMNS.iter().zip(row).map(|(c, v)| (c.to_string(), serde_json::Value::from(v))).collect();
        serde_json::to_writer(&mut jsonl, &object).map_err(|e| io_err("writing", &jsonl_path, e))?;
        jsonl.push(b'\n');
    }
    csv_out.flush().map_err(|e| io_err("writing", &csv_path, e))?;
    let mut f = std::fs::File::create(&jsonl_path).map_err(|e| io_err("creating", &jsonl_path, e))?;
    f.write_all(&jsonl).map_err(|e| io_err("writing", &jsonl_path, e))?;
    Ok(vec![csv_name, jsonl_name])
}
