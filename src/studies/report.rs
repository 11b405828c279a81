//! The statistics of a study whose kind reports them (the kind's
//! `Role::Report`): computed from its answers by the pure `domain` functions.
use crate::domain::accuracy::{accuracy_by_subset, AccuracyRow, Judged};
use crate::domain::category::Category;
use crate::domain::survey::Report;
use crate::error::ServiceError;
use crate::studies::meta::load_study_meta;
use serde::Serialize;
use sqlx::SqlitePool;

#[derive(Debug, Clone, Serialize)]
pub struct StudyReport {
    pub study_id: i64,
    pub study: String,
    pub kind: String,
    pub answers: usize,
    #[serde(flatten)]
    pub body: ReportBody,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "statistic", rename_all = "snake_case")]
pub enum ReportBody {
    /// Human accuracy per subset, then overall (SugarCrepe++).
    Accuracy { setting: String, rows: Vec<AccuracyRow> },
}

/// Every answer of the study with its instance's category (the subset).
async fn answers_by_subset(db: &SqlitePool, study_id: i64) -> Result<Vec<(Category, i64, String)>, ServiceError> {
    let rows: Vec<(i64, String, String, i64, String)> = sqlx::query_as(
        "SELECT i.id, i.neg_type, i.subtype, a.user_id, a.value FROM answers a JOIN instances i ON i.id = a.instance_id
         WHERE a.study_id = ? ORDER BY a.instance_id, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(id, t, s, user, value)| {
            let c = Category::parse(&t, &s).map_err(|e| ServiceError::Internal(format!("instance {id}: {e}")))?;
            Ok((c, user, value))
        })
        .collect()
}

pub async fn study_report(db: &SqlitePool, study_id: i64) -> Result<StudyReport, ServiceError> {
    let meta = load_study_meta(db, study_id).await?;
    let Some(report) = meta.kind.report() else {
        let kinds: Vec<&str> = crate::domain::survey::SurveyKind::reports().map(|k| k.name()).collect();
        return Err(ServiceError::Invalid(format!(
            "study {:?} is a {} study, which reports no statistics (kinds that do: {})",
            meta.name,
            meta.kind,
            kinds.join(", ")
        )));
    };
    let answers = answers_by_subset(db, study_id).await?;
    let n = answers.len();
    let body = match report {
        Report::Accuracy { correct, setting } => {
            let judged: Vec<Judged> = answers
                .into_iter()
                .map(|(category, annotator, value)| Judged { category, annotator, correct: value == *correct })
                .collect();
            ReportBody::Accuracy { setting: setting.to_string(), rows: accuracy_by_subset(&judged) }
        }
    };
    Ok(StudyReport { study_id, study: meta.name, kind: meta.kind.name().to_string(), answers: n, body })
}

/// The report as a plain-text table (CLI, export card).
pub fn render(r: &StudyReport) -> String {
    let mut out = format!("{} ({}, {} answers)\n", r.study, r.kind, r.answers);
    match &r.body {
        ReportBody::Accuracy { setting, rows } => {
            out.push_str(&format!(
                "{:<14} {:>8} {:>8} {:>10} {:>8} {:>8}\n",
                "subset", "answers", "correct", "annotators", setting, "pooled"
            ));
            for row in rows {
                let subset = row.subset.map_or("all".to_string(), |c| c.to_string());
                out.push_str(&format!(
                    "{subset:<14} {:>8} {:>8} {:>10} {:>7.1}% {:>7.1}%\n",
                    row.answers,
                    row.correct,
                    row.annotators,
                    100.0 * row.accuracy,
                    100.0 * row.pooled
                ));
            }
        }
    }
    out
}
