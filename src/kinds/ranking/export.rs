//! A ranking study in a dataset export: every imported model's score of each
//! image of its prompts (`study-<id>-scores.csv`), so the report's Spearman's
//! ρ and Kendall's τ can be redone from the export with the answers file
//! (its `value` is the people's order of the same slots).
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::studies::hooks::io_err;
use sqlx::AnyPool;
use std::path::Path;

pub const COLUMNS: [&str; 6] = ["instance", "key", "slot", "image", "model", "score"];

/// Writes the file into `out` and returns its name.
pub async fn write(db: &AnyPool, study_id: StudyId, out: &Path) -> Result<String, ServiceError> {
    let rows: Vec<(i64, String, i64, Option<String>, String, f64)> = sqlx::query_as(
        "SELECT s.instance_id, i.key, s.slot, c.image, s.model, s.score FROM image_scores s
         JOIN instances i ON i.id = s.instance_id
         LEFT JOIN candidates c ON c.instance_id = s.instance_id AND c.slot = s.slot
         WHERE s.instance_id IN (SELECT instance_id FROM study_items WHERE study_id = $1)
         ORDER BY s.instance_id, s.model, s.slot",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let name = format!("study-{study_id}-scores.csv");
    let path = out.join(&name);
    let csv_err = |e: csv::Error| io_err("writing", &path, e);
    let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
    w.write_record(COLUMNS).map_err(csv_err)?;
    for (instance, key, slot, image, model, score) in rows {
        // + 0.0 makes -0 plain 0: PostgreSQL keeps the sign, SQLite does not, and the files must match.
        let score = (score + 0.0).to_string();
        let cells = [instance.to_string(), key, slot.to_string(), image.unwrap_or_default(), model, score];
        w.write_record(&cells).map_err(csv_err)?;
    }
    w.flush().map_err(|e| io_err("writing", &path, e))?;
    Ok(name)
}
