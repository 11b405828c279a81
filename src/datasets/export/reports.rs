//! The studies of reporting kinds (odd-one-out) in a dataset export: per
//! study, every answer with the item it was given on (`<study>-answers.csv`)
//! and the kind's statistics (`<study>-report.json`), listed in the card,
//! and the files the kind's server part adds (a triplet check its settled
//! triplets, `<study>-triplets.csv`).
use super::sink::io_err;
use crate::domain::ids::{DatasetId, StudyId};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::kinds::REGISTRY;
use crate::studies::report::study_report;
use sqlx::AnyPool;
use std::io::Write;
use std::path::Path;

pub const ANSWER_COLUMNS: [&str; 16] = [
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
    "question",
    "negative_b",
    "source_a",
    "source_b",
];

/// One counted answer with its item: kind, instance, key, type, subtype,
/// caption, paraphrase, negative, annotator, option, value, query, negative
/// b and the sources of a and b (the study is the file's).
type AnswerRow = (
    String,
    i64,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// How a third party scores a measuring kind's answers (the human
/// baseline): said in the card, beside its answers.
fn scoring_note(kind: SurveyKind) -> String {
    format!(
        "scored per instance from one person's answers to its questions ({}), as `GET /api/v1/compare` \
         does; a question is right when its value is the kind's correct one",
        kind.question_names().join(", ")
    )
}

/// Writes the files of every reporting study on the dataset into `out`;
/// returns their names and appends a section to the card.
pub async fn write_reports(db: &AnyPool, dataset_id: DatasetId, out: &Path) -> Result<Vec<String>, ServiceError> {
    let studies: Vec<(StudyId, String, i64, String, String)> =
        sqlx::query_as("SELECT id, kind, seed, resolve, spec_hash FROM studies WHERE dataset_id = $1 ORDER BY id")
            .bind(dataset_id)
            .fetch_all(db)
            .await?;
    let mut files = Vec::new();
    let mut card = String::new();
    for (id, kind, seed, resolve, spec_hash) in studies {
        // Reporting kinds, and those that measure people (the human baseline, scored in the compare view).
        let Some(kind) = SurveyKind::parse(&kind).filter(|k| k.report().is_some() || k.outcome_fn().is_some()) else {
            continue;
        };
        // The kind's own files (a triplet check's settled triplets, HNC's validated pairs).
        if let Some(export) = REGISTRY.server(kind).and_then(|s| s.export) {
            files.extend(export(db, id, out).await?);
        }
        let (answers, json) = (format!("study-{id}-answers.csv"), format!("study-{id}-report.json"));
        let rows: Vec<AnswerRow> = sqlx::query_as(
            "SELECT s.kind, i.id, i.key, i.neg_type, i.subtype, i.caption, i.paraphrase, i.negative_caption,
                    u.username, a.option_id, a.value, t.query, i.negative_b, i.source_a, i.source_b
             FROM counted_answers a JOIN studies s ON s.id = a.study_id JOIN instances i ON i.id = a.instance_id
             JOIN users u ON u.id = a.user_id JOIN tasks t ON t.id = a.task_id
             WHERE a.study_id = $1 ORDER BY a.instance_id, a.answered_at, a.arrival, a.task_id",
        )
        .bind(id)
        .fetch_all(db)
        .await?;
        let path = out.join(&answers);
        let csv_err = |e: csv::Error| io_err("writing", &path, e);
        let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
        w.write_record(ANSWER_COLUMNS).map_err(csv_err)?;
        let names = kind.question_names();
        // The study's id, as in the file's name and the other answers files.
        let study = id.to_string();
        for r in rows {
            let question = usize::try_from(r.11).ok().and_then(|q| names.get(q)).cloned().unwrap_or_default();
            let instance = r.1.to_string();
            let opt = |v: Option<String>| v.unwrap_or_default();
            let (p2, b, sa, sb) = (opt(r.6), opt(r.12), opt(r.13), opt(r.14));
            let cells = [
                &study, &r.0, &instance, &r.2, &r.3, &r.4, &r.5, &p2, &r.7, &r.8, &r.9, &r.10, &question, &b, &sa, &sb,
            ];
            w.write_record(cells).map_err(csv_err)?;
        }
        w.flush().map_err(|e| io_err("writing", &path, e))?;
        if kind.report().is_none() {
            card.push_str(&format!(
                "\n`{answers}`: kind `{kind}`, seed {seed}, spec SHA-256 `{spec_hash}`; {}\n",
                scoring_note(kind)
            ));
            files.push(answers);
            continue;
        }
        let report = study_report(db, &REGISTRY, id).await?;
        let path = out.join(&json);
        let body = report.to_json(true)?;
        std::fs::write(&path, body).map_err(|e| io_err("writing", &path, e))?;
        // Kinds whose statistics count every answer settle no disagreement (audit AW:
        // the card said "resolved by adjudication" for them).
        let settled = if kind.spec().adjudicated {
            format!("disagreements resolved by `{resolve}`")
        } else {
            "every answer counted (no item is settled)".to_string()
        };
        card.push_str(&format!(
            "\n`{answers}`, `{json}`: kind `{kind}`, seed {seed}, {settled}, spec SHA-256 `{spec_hash}`\n\n```\n{}```\n",
            report.render()
        ));
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

#[cfg(test)]
mod tests {
    use crate::cli::demo_seed::{seed_demo_accounts, seed_demo_triplets, DEMO_PROTOCOL_SPECS, DEMO_TRIPLETS};
    use crate::domain::ids::DatasetId;
    use crate::kinds::REGISTRY;
    use crate::studies::create;

    /// A report's file that cannot be written is an internal error that
    /// names the file and keeps the file system's error as its source.
    #[tokio::test]
    async fn a_report_file_that_cannot_be_written_keeps_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
        let images = crate::store::images::ImageStore::new(dir.path().join("images"));
        seed_demo_triplets(&db, &images).await.unwrap();
        seed_demo_accounts(&db).await.unwrap();
        let spec = DEMO_PROTOCOL_SPECS[0];
        assert!(spec.contains("kind = \"odd_one_out\""), "a reporting kind: {spec}");
        let study =
            create::create_study(&db, &REGISTRY, &create::parse_spec(&REGISTRY, spec, 0).unwrap(), spec).await.unwrap();
        let dataset: i64 = sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
            .bind(DEMO_TRIPLETS)
            .fetch_one(&db)
            .await
            .unwrap();

        let out = dir.path().join("no such folder");
        let e = super::write_reports(&db, DatasetId::new(dataset), &out).await.unwrap_err();
        let cause = std::error::Error::source(&e).expect("the file system's error as the source");
        assert!(cause.to_string().contains("No such file"), "{cause}");
        let file = out.join(format!("study-{}-answers.csv", study.get()));
        assert_eq!(e.to_string(), format!("internal error: writing {}", file.display()));
    }
}
