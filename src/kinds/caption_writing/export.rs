//! A caption-writing study in a dataset export (HNC): every counted answer
//! with the pair it wrote (or its skip, the value `skip:<reason>`), and the
//! caption type it was asked for (`study-<id>-written.csv`), so the written pairs are in
//! the export before any validation study has read them (docs/export.md).
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::studies::hooks::io_err;
use sqlx::AnyPool;
use std::path::Path;

pub const COLUMNS: [&str; 8] = ["study", "instance", "key", "caption_type", "annotator", "value", "positive", "negative"];

type Row = (i64, String, Option<String>, String, String, Option<String>, Option<String>);

/// Writes the file into `out`; returns its name.
pub async fn write(db: &AnyPool, study_id: StudyId, out: &Path) -> Result<Vec<String>, ServiceError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.id, i.key, i.caption_type, u.username, a.value, p.text, n.text
         FROM counted_answers a JOIN instances i ON i.id = a.instance_id JOIN users u ON u.id = a.user_id
         LEFT JOIN answer_texts p ON p.task_id = a.task_id AND p.field = 'positive'
         LEFT JOIN answer_texts n ON n.task_id = a.task_id AND n.field = 'negative'
         WHERE a.study_id = $1 ORDER BY a.instance_id, a.answered_at, a.arrival, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let name = format!("study-{study_id}-written.csv");
    let path = out.join(&name);
    let csv_err = |e: csv::Error| io_err("writing", &path, e);
    let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
    w.write_record(COLUMNS).map_err(csv_err)?;
    let study = study_id.to_string();
    for (instance, key, caption_type, annotator, value, positive, negative) in rows {
        let text = |t: Option<String>| t.unwrap_or_default();
        let instance = instance.to_string();
        let cells = [
            study.as_str(),
            &instance,
            &key,
            &text(caption_type),
            &annotator,
            &value,
            &text(positive),
            &text(negative),
        ];
        w.write_record(cells).map_err(csv_err)?;
    }
    w.flush().map_err(|e| io_err("writing", &path, e))?;
    Ok(vec![name])
}
