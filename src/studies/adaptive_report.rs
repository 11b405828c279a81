//! An adaptive study's report as everyone reads it: each item's settled
//! value and posterior (the same as the rows files, the funnel and the
//! research page, however the item was settled), and the stops that the
//! final crowd model doubts. The stored rows (`studies::adaptive::report`)
//! say only why each item stopped.
use crate::domain::adaptive::{AdaptiveReport, Doubtful, LeftOut, Reason, DOUBT_POSTERIOR};
use crate::domain::aggregate::Model;
use crate::domain::ids::StudyId;
use crate::domain::resolution::{ItemState, PosteriorModel, ResolvedBy};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::studies::aggregate::{class_of, fit_cached};
use crate::studies::outcomes::{study_outcomes, ItemOutcome};
use sqlx::AnyPool;
use std::collections::HashMap;

/// `GET /api/v1/studies/{id}/adaptive` and the research page.
pub async fn report(db: &AnyPool, kinds: &[SurveyKind], study: StudyId) -> Result<AdaptiveReport, ServiceError> {
    let raw = crate::studies::adaptive::report(db, kinds, study).await?;
    let (meta, outcomes) = study_outcomes(db, kinds, study).await?;
    settled_report(db, raw, &meta, &outcomes).await
}

/// Fills `raw`'s items with their settled outcomes and lists the doubtful stops.
pub async fn settled_report(
    db: &AnyPool,
    mut raw: AdaptiveReport,
    meta: &StudyMeta,
    outcomes: &[ItemOutcome],
) -> Result<AdaptiveReport, ServiceError> {
    let by_id: HashMap<i64, &ItemOutcome> = outcomes.iter().map(|o| (o.instance_id, o)).collect();
    for item in &mut raw.items {
        let Some(o) = by_id.get(&item.instance_id) else { continue };
        if let ItemState::Final { value, by } = &o.state {
            item.value = Some(value.clone());
            item.resolved_by = Some(*by);
            item.posterior = o.posterior.map(|p| p.value);
            item.posterior_model = o.posterior.map(|p| p.model);
        }
    }
    raw.doubtful = doubtful(db, meta, &raw, &by_id).await?;
    let (places, answers): (i64, i64) = sqlx::query_as(
        "SELECT CAST(count(DISTINCT user_id) AS BIGINT), CAST(count(*) AS BIGINT) FROM counted_answers
         WHERE study_id = $1 AND user_id IN
           (SELECT user_id FROM leases WHERE study_id = $1 AND ended_why = 'uninformative')",
    )
    .bind(meta.id)
    .fetch_one(db)
    .await?;
    raw.ended_uninformative = LeftOut { places, answers };
    Ok(raw)
}

/// Items its stop rule settled (and nobody adjudicated) whose value the
/// final crowd model, fitted on every counted answer but those of places
/// ended as carrying no information, puts below another
/// value held at [`DOUBT_POSTERIOR`] or more. The model is the study's
/// `resolve` model, Dawid–Skene when `resolve` names none.
async fn doubtful(
    db: &AnyPool,
    meta: &StudyMeta,
    report: &AdaptiveReport,
    outcomes: &HashMap<i64, &ItemOutcome>,
) -> Result<Vec<Doubtful>, ServiceError> {
    let stops: Vec<(i64, &str)> = report
        .items
        .iter()
        .filter(|i| matches!(i.reason, Some(Reason::Agreed | Reason::Confident)))
        .filter_map(|i| match &outcomes.get(&i.instance_id)?.state {
            ItemState::Final { value, by } if *by != ResolvedBy::Adjudication => Some((i.instance_id, value.as_str())),
            _ => None,
        })
        .collect();
    if stops.is_empty() {
        return Ok(vec![]);
    }
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT instance_id, user_id, value FROM counted_answers WHERE study_id = $1 ORDER BY instance_id, user_id",
    )
    .bind(meta.id)
    .fetch_all(db)
    .await?;
    // Without the people who weigh nothing, as the model that settles items at `max`.
    let weightless = crate::studies::adaptive::ended_uninformative(db, meta.id).await?;
    let answers: Vec<(u64, u64, usize)> = rows
        .iter()
        .filter(|(_, u, _)| !weightless.contains(u))
        .filter_map(|(i, u, v)| Some((*i as u64, *u as u64, class_of(meta.kind, v)?)))
        .collect();
    let mut gold: Vec<(u64, usize)> =
        sqlx::query_as("SELECT instance_id, value FROM adjudications WHERE study_id = $1")
            .bind(meta.id)
            .fetch_all(db)
            .await?
            .into_iter()
            .filter_map(|(i, v): (i64, String)| Some((i as u64, class_of(meta.kind, &v)?)))
            .collect();
    let answered: std::collections::HashSet<u64> = answers.iter().map(|a| a.0).collect();
    gold.retain(|g| answered.contains(&g.0));
    gold.sort_unstable();
    let model = meta.resolve.model().unwrap_or(Model::DawidSkene);
    let fitted = match fit_cached(model, &answers, meta.kind.values().len(), &gold, meta.seed) {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!(study = %meta.id, "no crowd model to weigh the stops against yet: {e}");
            return Ok(vec![]);
        }
    };
    let values = meta.kind.values();
    Ok(stops
        .into_iter()
        .filter_map(|(id, value)| {
            let p = fitted.item(id as u64)?;
            (values[p.label] != value && p.posterior >= DOUBT_POSTERIOR).then(|| Doubtful {
                instance_id: id,
                rule_value: value.to_string(),
                model: PosteriorModel::from(model),
                model_value: values[p.label].to_string(),
                model_posterior: p.posterior,
            })
        })
        .collect())
}
