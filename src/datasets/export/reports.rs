//! The studies of reporting kinds (odd-one-out) in a dataset export: per
//! study, every answer with the item it was given on (`<study>-answers.csv`)
//! and the kind's statistics (`<study>-report.json`), listed in the card,
//! and the files the kind's server part adds (a triplet check its settled
//! triplets, `<study>-triplets.csv`).
use super::sink::io_err;
use crate::domain::ids::{DatasetId, StudyId};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::kinds::report::study_report;
use sqlx::AnyPool;
use std::io::Write;
use std::path::Path;

pub const ANSWER_COLUMNS: [&str; 12] = [
    "study",
    "kind",
    "instance",
    "key",
    "type",
    "subtype",
    "caption",
    "paraphrase",
    "negative_caption",
    "annotator",
    "option",
    "value",
];

type AnswerRow = (String, String, i64, String, String, String, String, Option<String>, String, String, String, String);

/// Writes the files of every reporting study on the dataset into `out`;
/// returns their names and appends a section to the card.
pub async fn write_reports(db: &AnyPool, dataset_id: DatasetId, out: &Path) -> Result<Vec<String>, ServiceError> {
    let studies: Vec<(StudyId, String)> =
        sqlx::query_as("SELECT id, kind FROM studies WHERE dataset_id = $1 ORDER BY id")
            .bind(dataset_id)
            .fetch_all(db)
            .await?;
    let mut files = Vec::new();
    let mut card = String::new();
    for (id, kind) in studies {
        let Some(kind) = SurveyKind::parse(&kind).filter(|k| k.report().is_some()) else {
            continue;
        };
        // The kind's own files (a triplet check's settled triplets, HNC's validated pairs).
        if let Some(export) = crate::kinds::server(kind).and_then(|s| s.export) {
            files.extend(export(db, id, out).await?);
        }
        let report = study_report(db, id).await?;
        let (answers, json) = (format!("study-{id}-answers.csv"), format!("study-{id}-report.json"));
        let rows: Vec<AnswerRow> = sqlx::query_as(
            "SELECT s.name, s.kind, i.id, i.key, i.neg_type, i.subtype, i.caption, i.paraphrase, i.negative_caption,
                    u.username, a.option_id, a.value
             FROM counted_answers a JOIN studies s ON s.id = a.study_id JOIN instances i ON i.id = a.instance_id
             JOIN users u ON u.id = a.user_id WHERE a.study_id = $1 ORDER BY a.instance_id, a.answered_at, a.task_id",
        )
        .bind(id)
        .fetch_all(db)
        .await?;
        let path = out.join(&answers);
        let mut w =
            csv::Writer::from_path(&path).map_err(|e| ServiceError::Internal(format!("{}: {e}", path.display())))?;
        let csv_err = |e: csv::Error| ServiceError::Internal(format!("{}: {e}", path.display()));
        w.write_record(ANSWER_COLUMNS).map_err(csv_err)?;
        for r in rows {
            let (instance, p2) = (r.2.to_string(), r.7.unwrap_or_default());
            w.write_record([&r.0, &r.1, &instance, &r.3, &r.4, &r.5, &r.6, &p2, &r.8, &r.9, &r.10, &r.11])
                .map_err(csv_err)?;
        }
        w.flush().map_err(|e| io_err("writing", &path, e))?;
        let path = out.join(&json);
        let body = report.to_json(true)?;
        std::fs::write(&path, body).map_err(|e| io_err("writing", &path, e))?;
        card.push_str(&format!("\n`{answers}`, `{json}`:\n\n```\n{}```\n", report.render()));
        files.extend([answers, json]);
    }
    if !card.is_empty() {
        let path = out.join("README.md");
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).map_err(|e| io_err("opening", &path, e))?;
        let section =
            format!("\n## Protocol studies\n\nAnswers and statistics of the studies that report them.\n{card}");
        f.write_all(section.as_bytes()).map_err(|e| io_err("writing", &path, e))?;
    }
    Ok(files)
}
