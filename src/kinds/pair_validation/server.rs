//! HNC's pair validation on the server: its report (the validated share
//! per caption type and the validators' kappa, with the writing study's
//! figures beside it) and, in a dataset export, the validated pairs
//! (`export.rs`).
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
// HNC validates what its writing study wrote (the kind's source): the
// report shows that study's figures beside its own.
use crate::kinds::caption_writing::server::{render_writing, writing};
use super::stats::{pair_validation_stats, PairValidationStats, ValidatedPair};
use crate::kinds::caption_writing::stats::WritingStats;
use crate::studies::hooks::{Fut, Server, Statistic, Stats};
use crate::studies::report_text::{kappa_lines, line, pct};
use crate::studies::outcomes::study_outcomes;
use serde::Serialize;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::path::Path;

pub const SERVER: Server = Server {
    report: Some(report),
    export: Some(export),
    from_source: Some(super::written_pairs::from_source),
    keep_out: Some(super::written_pairs::keep_out),
};

fn report(db: &AnyPool, study_id: StudyId) -> Fut<'_, (usize, Box<dyn Stats>)> {
    Box::pin(async move {
        let (n, stats) = pair_validation(db, study_id).await?;
        Ok((n, Box::new(stats) as Box<dyn Stats>))
    })
}

/// The validated pairs, as instances `hardneg import pairs` reads back.
fn export<'a>(db: &'a AnyPool, study_id: StudyId, out: &'a Path) -> Fut<'a, Vec<String>> {
    Box::pin(super::export::write(db, study_id, out))
}

/// A validation study's statistics and its writing study's.
#[derive(Debug, Clone, Serialize)]
pub struct PairValidationReport {
    #[serde(flatten)]
    pub validation: PairValidationStats,
    /// The writing study the pairs came from.
    pub writing: Option<WritingStats>,
}

/// A validation study's statistics and how many answers they rest on.
async fn pair_validation(db: &AnyPool, study_id: StudyId) -> Result<(usize, PairValidationReport), ServiceError> {
    let (meta, outcomes) = study_outcomes(db, crate::kinds::KINDS, study_id).await?;
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT a.instance_id, u.username, a.value FROM counted_answers a JOIN users u ON u.id = a.user_id
         WHERE a.study_id = $1 ORDER BY a.instance_id, a.answered_at, a.arrival, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let types: HashMap<i64, String> = sqlx::query_as(
        "SELECT i.id, coalesce(i.caption_type, '') FROM study_items si JOIN instances i ON i.id = si.instance_id
         WHERE si.study_id = $1",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let mut answers: HashMap<i64, Vec<(&str, &str)>> = HashMap::new();
    for (instance, who, value) in &rows {
        answers.entry(*instance).or_default().push((who, value));
    }
    let pairs: Vec<ValidatedPair<'_>> = outcomes
        .iter()
        .map(|o| ValidatedPair {
            caption_type: types.get(&o.instance_id).map_or("", String::as_str),
            final_value: o.final_value(),
            answers: answers.remove(&o.instance_id).unwrap_or_default(),
        })
        .collect();
    let writing = match meta.source_study_id {
        Some(source) => Some(writing(db, source).await?.1),
        None => None,
    };
    Ok((rows.len(), PairValidationReport { validation: pair_validation_stats(&pairs), writing }))
}

impl Statistic for PairValidationReport {
    const NAME: &'static str = "pair_validation";

    fn render(&self) -> String {
        render_validation(self)
    }
}

/// A validation study's statistics as plain-text tables (CLI, export card).
fn render_validation(r: &PairValidationReport) -> String {
    let st = &r.validation;
    let mut heads: Vec<String> = st.rows.first().map(|r| r.values.keys().cloned().collect()).unwrap_or_default();
    heads.push("valid %".into());
    let mut out = line("type", ["pairs".into(), "settled".into()], heads.into_iter(), 15) + "\n";
    for row in &st.rows {
        let label = row.caption_type.as_deref().unwrap_or("all");
        let cells = row.values.values().map(usize::to_string).chain([pct(row.valid_share)]);
        out += &(line(label, [row.pairs.to_string(), row.settled.to_string()], cells, 15) + "\n");
    }
    out.push_str(&kappa_lines(&st.kappa, st.mean_kappa, "", "pairs", "of the validators"));
    if let Some(w) = &r.writing {
        out.push_str("written in the source study:\n");
        out.push_str(&render_writing(w));
    }
    out
}
