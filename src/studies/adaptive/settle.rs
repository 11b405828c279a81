//! What adaptive overlap's decisions mean for the rest of hardneg: the
//! reliabilities decisions read, the settled values (a stop rule's stop is
//! what gets settled) and the per-item report.
use super::settings;
use crate::domain::adaptive::{fit_point, AdaptiveItem, AdaptiveReport, Reason, Reliability};
use crate::domain::ids::StudyId;
use crate::domain::resolution::{ItemState, Posterior, PosteriorModel, ResolvedBy};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::studies::aggregate::class_of;
use sqlx::AnyPool;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Each person's earned reliability (`domain::adaptive::reliability`) over
/// the study's counted answers and its gold answers, fitted at
/// [`fit_point`]: on the first that many of the study's answers in vote
/// order (answered_at, arrival, task id), so every server and every restart
/// fits the same answers and decides alike. Remembered per study in this
/// process, and fitted again once the count reaches the next point or a
/// place ends (its answers stop counting).
///
/// Counting reads the study's answer index (about 1 ms at 40k answers on
/// SQLite, docs/performance.md): exact on every call, as a fit point that
/// depended on when this process last counted would not be reproducible.
pub(super) async fn reliability(db: &AnyPool, meta: &StudyMeta) -> Result<Arc<Reliability>, ServiceError> {
    let (answers, ended): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM answers WHERE study_id = $1),
                (SELECT count(*) FROM leases WHERE study_id = $2 AND state NOT IN ('active', 'completed'))",
    )
    .bind(meta.id)
    .bind(meta.id)
    .fetch_one(db)
    .await?;
    let point = fit_point(answers.max(0) as u64) as i64;
    let cached = FITS.lock().ok().and_then(|f| {
        f.iter().find(|e| e.study == meta.id && e.point == point && e.ended == ended).map(|e| Arc::clone(&e.fit))
    });
    if let Some(fit) = cached {
        return Ok(fit);
    }
    let fit = Arc::new(fit_at(db, meta.id, meta.kind, point).await?);
    if let Ok(mut f) = FITS.lock() {
        f.retain(|e| e.study != meta.id);
        f.push(Fitted { study: meta.id, point, ended, fit: Arc::clone(&fit) });
    }
    Ok(fit)
}

/// The fit on the study's first `point` answers in vote order, of those
/// that count now (checks give the gold part).
async fn fit_at(db: &AnyPool, study: StudyId, kind: SurveyKind, point: i64) -> Result<Reliability, ServiceError> {
    let first: HashSet<i64> = sqlx::query_scalar(
        "SELECT task_id FROM answers WHERE study_id = $1 ORDER BY answered_at, arrival, task_id LIMIT $2",
    )
    .bind(study)
    .bind(point)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let rows: Vec<(i64, i64, i64, String)> =
        sqlx::query_as("SELECT task_id, instance_id, user_id, value FROM counted_answers WHERE study_id = $1")
            .bind(study)
            .fetch_all(db)
            .await?;
    let answers: Vec<(u64, u64, usize)> = rows
        .iter()
        .filter(|r| first.contains(&r.0))
        .filter_map(|(_, i, u, v)| Some((*i as u64, *u as u64, class_of(kind, v)?)))
        .collect();
    let gold: Vec<(i64, i64, String, String)> = sqlx::query_as(
        "SELECT a.task_id, a.user_id, t.check_answer, a.value FROM answers a JOIN tasks t ON t.id = a.task_id
         WHERE a.study_id = $1 AND t.check_kind = 'gold' AND t.check_answer IS NOT NULL",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    let gold: Vec<(u64, usize, usize)> = gold
        .iter()
        .filter(|g| first.contains(&g.0))
        .filter_map(|(_, u, truth, v)| Some((*u as u64, class_of(kind, truth)?, class_of(kind, v)?)))
        .collect();
    // Seconds of CPU on a large study: off the request threads.
    let k = kind.values().len();
    tokio::task::spawn_blocking(move || Reliability::fit(&answers, &gold, k))
        .await
        .map_err(|e| ServiceError::internal("fitting the study's reliabilities", e))
}

/// The fit of each study this process decides on.
static FITS: Mutex<Vec<Fitted>> = Mutex::new(Vec::new());

/// A study's fit: its fit point and the places ended when it was made.
struct Fitted {
    study: StudyId,
    point: i64,
    ended: i64,
    fit: Arc<Reliability>,
}

/// An item the stop rule settled (`agreed`, `confident`) takes the value it
/// stopped on, whatever `resolve` says (an adjudication still overrides),
/// with the posterior it stopped at under the earned reliabilities. Items
/// left at `max` are not touched: `resolve` settles them. Returns the items
/// the rule settled: a model `resolve` leaves them alone and settles only
/// the items left at `max`. `outcomes` yields each item's id, state and
/// posterior slot.
pub async fn settle<'a>(
    db: &AnyPool,
    study: StudyId,
    outcomes: impl Iterator<Item = (i64, &'a mut ItemState, &'a mut Option<Posterior>)>,
) -> Result<HashSet<i64>, ServiceError> {
    let stopped: HashMap<i64, (String, Option<f64>)> = sqlx::query_as(
        "SELECT instance_id, value, posterior FROM adaptive_items
         WHERE study_id = $1 AND state = 'stopped' AND reason <> 'max'",
    )
    .bind(study)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|(i, v, p): (i64, String, Option<f64>)| (i, (v, p)))
    .collect();
    let mut settled = HashSet::new();
    for (id, state, slot) in outcomes {
        let Some((value, posterior)) = stopped.get(&id) else { continue };
        let same = matches!(&*state, ItemState::Final { value: v, .. } if v == value);
        match &*state {
            ItemState::Final { by: ResolvedBy::Adjudication, .. } | ItemState::Pending { .. } => {}
            ItemState::Final { by: ResolvedBy::Unanimous | ResolvedBy::Single, .. } if same => {
                settled.insert(id);
            }
            _ => {
                *state = ItemState::Final { value: value.clone(), by: ResolvedBy::Adaptive };
                settled.insert(id);
            }
        }
        if settled.contains(&id) {
            *slot = posterior.map(|value| Posterior { value, model: PosteriorModel::EarnedReliability });
        }
    }
    Ok(settled)
}

/// The adaptive rows as stored (`GET /api/v1/studies/{id}/adaptive` fills
/// in the settled values: `studies::adaptive_report`): per item how many
/// answers it took, why it stopped and what the stop rule stopped on, and
/// answers spent against a fixed overlap of `max`. Enough for the
/// dashboard's savings, without settling the study.
pub async fn report(db: &AnyPool, kinds: &[SurveyKind], study: StudyId) -> Result<AdaptiveReport, ServiceError> {
    crate::studies::meta::load_study_meta(db, kinds, study).await?;
    let a = settings(db, study).await?.ok_or_else(|| {
        ServiceError::NotFound(format!("study {study} has a fixed overlap, not [assignment.adaptive]"))
    })?;
    type Row = (i64, i64, i64, Option<String>, Option<String>, Option<f64>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT a.instance_id, a.wanted, coalesce(c.n, 0), a.reason, a.value, a.posterior
         FROM adaptive_items a
         LEFT JOIN (SELECT instance_id, count(*) AS n FROM counted_answers WHERE study_id = $1 GROUP BY instance_id) c
           ON c.instance_id = a.instance_id
         WHERE a.study_id = $2 ORDER BY a.instance_id",
    )
    .bind(study)
    .bind(study)
    .fetch_all(db)
    .await?;
    let items = rows
        .into_iter()
        .map(|(instance_id, wanted, answers, reason, value, posterior)| {
            let reason = reason.as_deref().and_then(Reason::parse);
            // At `max` the rule chose nothing: `resolve` settles the item.
            let stop = value.zip(posterior).filter(|_| matches!(reason, Some(Reason::Agreed | Reason::Confident)));
            AdaptiveItem { instance_id, answers, wanted, reason, stop, ..AdaptiveItem::default() }
        })
        .collect::<Vec<_>>();
    let per_person: Vec<i64> = if matches!(a.stop, crate::domain::adaptive::Stop::Posterior { .. }) {
        sqlx::query_scalar("SELECT count(*) FROM counted_answers WHERE study_id = $1 GROUP BY user_id")
            .bind(study)
            .fetch_all(db)
            .await?
    } else {
        Vec::new()
    };
    // Account studies cannot have gold items; a link study's are in its settings.
    let gold = match crate::studies::link::link_of_study(db, study).await {
        Ok(link) => Some(link.settings.checks.gold.len()),
        Err(ServiceError::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    let warning = crate::domain::adaptive::calibration_warning(&a, items.len(), &per_person, gold);
    Ok(AdaptiveReport { calibration_warning: warning, ..AdaptiveReport::new(study, a, items) })
}

#[cfg(test)]
#[path = "settle_tests.rs"]
mod tests;
