//! The ranking kind on the server: its report, the annotators' agreement on
//! each prompt's order (Kendall's W) and each imported model's correlation
//! with the people's order (Spearman's ρ, Kendall's τ).
use crate::domain::ids::StudyId;
use super::read_order;
use super::stats::{ranking_stats, Prompt, RankingStats};
use crate::error::ServiceError;
use crate::studies::hooks::{Fut, Server, Statistic, Stats};
use sqlx::AnyPool;
use std::collections::BTreeMap;

pub const SERVER: Server = Server { report: Some(report), export: Some(export), ..Server::NONE };

fn export<'a>(db: &'a AnyPool, study_id: StudyId, out: &'a std::path::Path) -> Fut<'a, Vec<String>> {
    Box::pin(async move { Ok(vec![super::export::write(db, study_id, out).await?]) })
}

fn report(db: &AnyPool, study_id: StudyId) -> Fut<'_, (usize, Box<dyn Stats>)> {
    Box::pin(async move {
        let (n, stats) = rankings(db, study_id).await?;
        Ok((n, Box::new(stats) as Box<dyn Stats>))
    })
}

/// Every prompt of the study with its counted orders (as every report: no
/// check item, no copy that counts nowhere) and the imported models' scores.
async fn rankings(db: &AnyPool, study_id: StudyId) -> Result<(usize, RankingStats), ServiceError> {
    let answers: Vec<(i64, String)> =
        sqlx::query_as("SELECT instance_id, value FROM counted_answers WHERE study_id = $1 ORDER BY instance_id, task_id")
            .bind(study_id)
            .fetch_all(db)
            .await?;
    let scores: Vec<(i64, String, f64)> = sqlx::query_as(
        "SELECT s.instance_id, s.model, s.score FROM image_scores s
         WHERE s.instance_id IN (SELECT instance_id FROM counted_answers WHERE study_id = $1) ORDER BY s.instance_id, s.model, s.slot",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let mut prompts: BTreeMap<i64, Prompt> = BTreeMap::new();
    let n = answers.len();
    for (id, value) in answers {
        let order = read_order(&value)
            .ok_or_else(|| ServiceError::Internal(format!("instance {id}: not a ranking: {value:?}")))?;
        prompts.entry(id).or_default().orders.push(order);
    }
    for (id, model, score) in scores {
        prompts.entry(id).or_default().scores.entry(model).or_default().push(score);
    }
    Ok((n, ranking_stats(&prompts.into_values().collect::<Vec<_>>())))
}

impl Statistic for RankingStats {
    const NAME: &'static str = "ranking";

    fn render(&self) -> String {
        let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        let mut out = format!(
            "{} prompts, {} rankings; Kendall's W {} (mean over {} prompts ranked twice or more)\n",
            self.prompts,
            self.rankings,
            show(self.kendalls_w),
            self.w_prompts
        );
        for m in &self.models {
            out.push_str(&format!(
                "{:<16} Spearman's rho {}  Kendall's tau {}  (mean over {} prompts)\n",
                m.model,
                show(m.spearman),
                show(m.kendall_tau),
                m.prompts
            ));
        }
        out
    }
}
