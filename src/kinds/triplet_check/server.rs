//! The triplet check on the server: its report (final verdicts per subset,
//! error tags and the experts' kappa on the verdict) and, in a dataset
//! export, its settled triplets (`export.rs`).
use crate::domain::ids::StudyId;
use super::stats::{validation_stats, CheckedItem, ValidationStats};
use crate::error::ServiceError;
use crate::studies::hooks::{Fut, Server, Statistic, Stats};
use crate::studies::report_text::{kappa_lines, pct};
use crate::studies::{answer_texts, outcomes::study_outcomes};
use sqlx::AnyPool;
use std::path::Path;

pub const SERVER: Server = Server { report: Some(report), export: Some(export), ..Server::NONE };

fn report(db: &AnyPool, study_id: StudyId) -> Fut<'_, (usize, Box<dyn Stats>)> {
    Box::pin(async move {
        let (n, stats) = validation(db, study_id).await?;
        Ok((n, Box::new(stats) as Box<dyn Stats>))
    })
}

/// Expert checks settle each triplet: their final verdicts and P2s.
fn export<'a>(db: &'a AnyPool, study_id: StudyId, out: &'a Path) -> Fut<'a, Vec<String>> {
    Box::pin(async move { Ok(vec![super::export::write(db, study_id, out).await?]) })
}

/// The statistics and how many answers they rest on.
async fn validation(db: &AnyPool, study_id: StudyId) -> Result<(usize, ValidationStats), ServiceError> {
    let (_, outcomes) = study_outcomes(db, crate::kinds::KINDS, study_id).await?;
    let answers = answer_texts::answers(db, study_id).await?;
    let items: Vec<CheckedItem<'_>> = outcomes
        .iter()
        .map(|o| CheckedItem {
            category: o.category,
            final_value: o.final_value(),
            answers: answers
                .get(&o.instance_id)
                .map(|a| a.iter().map(|a| (a.annotator.as_str(), a.value.as_str())).collect())
                .unwrap_or_default(),
        })
        .collect();
    let n = items.iter().map(|i| i.answers.len()).sum();
    Ok((n, validation_stats(&items)))
}

impl Statistic for ValidationStats {
    const NAME: &'static str = "validation";

    fn render(&self) -> String {
        render(self)
    }
}

/// The statistics as plain-text tables (CLI, export card).
fn render(st: &ValidationStats) -> String {
    let mut out = format!(
        "{:<14} {:>6} {:>8} {:>6} {:>10} {:>10} {:>8}\n",
        "subset", "items", "settled", "valid", "corrected", "not valid", "valid %"
    );
    for r in &st.rows {
        let subset = r.subset.map_or("all".to_string(), |c| c.to_string());
        out.push_str(&format!(
            "{subset:<14} {:>6} {:>8} {:>6} {:>10} {:>10} {:>8}\n",
            r.items,
            r.settled,
            r.valid,
            r.corrected,
            r.not_valid,
            pct(r.valid_share)
        ));
    }
    out.push_str(&format!("{:<20} {:>8} {:>8}\n", "error tag", "settled", "answers"));
    for t in &st.tags {
        out.push_str(&format!("{:<20} {:>8} {:>8}\n", t.tag, t.settled, t.answers));
    }
    out.push_str(&kappa_lines(&st.kappa, st.mean_kappa, " on the verdict", "items", "on the verdict"));
    out
}

