//! What adaptive overlap's decisions mean for the rest of hardneg: the
//! reliabilities decisions read, the settled values (a stop rule's stop is
//! what gets settled) and the per-item report.
use super::settings;
use crate::domain::adaptive::{AdaptiveItem, AdaptiveReport, Reason, Reliability};
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
/// the study's counted answers and its gold answers. Refitted once the
/// answers have grown by a tenth since the last fit, so the answer path
/// does not refit the whole study on every answer. Remembered per study id
/// in this process: servers sharing a PostgreSQL database each keep their
/// own (docs/deploy.md, "More than one server").
///
/// Counting a study's answers reads every one of them (10 ms at 40k
/// answers on SQLite), so it is not done on every call: each call is one
/// answer more than the last count, and the study is counted again once
/// this process has seen a fortieth more (answers stored by another
/// server, or not counted, are found then).
pub(super) async fn reliability(db: &AnyPool, meta: &StudyMeta) -> Result<Arc<Reliability>, ServiceError> {
    if let Some(fit) = FITS.lock().ok().and_then(|mut f| f.iter_mut().find(|e| e.study == meta.id)?.uncounted()) {
        return Ok(fit);
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM counted_answers WHERE study_id = $1")
        .bind(meta.id)
        .fetch_one(db)
        .await?;
    if let Some(fit) = FITS.lock().ok().and_then(|mut f| f.iter_mut().find(|e| e.study == meta.id)?.counted(count)) {
        return Ok(fit);
    }
    let rows: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT instance_id, user_id, value FROM counted_answers WHERE study_id = $1")
            .bind(meta.id)
            .fetch_all(db)
            .await?;
    let answers: Vec<(u64, u64, usize)> =
        rows.iter().filter_map(|(i, u, v)| Some((*i as u64, *u as u64, class_of(meta.kind, v)?))).collect();
    let gold: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT a.user_id, t.check_answer, a.value FROM answers a JOIN tasks t ON t.id = a.task_id
         WHERE a.study_id = $1 AND t.check_kind = 'gold' AND t.check_answer IS NOT NULL",
    )
    .bind(meta.id)
    .fetch_all(db)
    .await?;
    let gold: Vec<(u64, usize, usize)> = gold
        .iter()
        .filter_map(|(u, truth, v)| Some((*u as u64, class_of(meta.kind, truth)?, class_of(meta.kind, v)?)))
        .collect();
    // Seconds of CPU on a large study: off the request threads.
    let k = meta.kind.values().len();
    let fit = tokio::task::spawn_blocking(move || Reliability::fit(&answers, &gold, k))
        .await
        .map_err(|e| ServiceError::internal("fitting the study's reliabilities", e))?;
    let fit = Arc::new(fit);
    if let Ok(mut f) = FITS.lock() {
        f.retain(|e| e.study != meta.id);
        f.push(Fitted { study: meta.id, fitted_at: count, counted: count, since: 0, fit: Arc::clone(&fit) });
    }
    Ok(fit)
}

/// The fit of each study this process decides on.
static FITS: Mutex<Vec<Fitted>> = Mutex::new(Vec::new());

/// A study's fit: the answers counted when it was made and at the last
/// count, and the calls (answers) since that count.
struct Fitted {
    study: StudyId,
    fitted_at: i64,
    counted: i64,
    since: i64,
    fit: Arc<Reliability>,
}

impl Fitted {
    /// The fit, while neither a count nor a refit is due; one call more.
    fn uncounted(&mut self) -> Option<Arc<Reliability>> {
        self.since += 1;
        let recount = self.since * 40 >= self.counted.max(1);
        (!recount && self.fresh(self.counted + self.since)).then(|| Arc::clone(&self.fit))
    }

    /// The fit, if `count` answers leave it fresh.
    fn counted(&mut self, count: i64) -> Option<Arc<Reliability>> {
        (self.counted, self.since) = (count, 0);
        self.fresh(count).then(|| Arc::clone(&self.fit))
    }

    /// Fewer than a tenth more answers than it was fitted on (and not fewer).
    fn fresh(&self, answers: i64) -> bool {
        answers >= self.fitted_at && (answers - self.fitted_at) * 10 < self.fitted_at.max(1)
    }
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
    let warning = crate::domain::adaptive::calibration_warning(&a, items.len(), &per_person);
    Ok(AdaptiveReport { calibration_warning: warning, ..AdaptiveReport::new(study, a, items) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(at: i64) -> Fitted {
        Fitted {
            study: StudyId::new(1),
            fitted_at: at,
            counted: at,
            since: 0,
            fit: Arc::new(Reliability::uninformed(5)),
        }
    }

    #[test]
    fn a_fit_of_400_answers_is_counted_again_every_10_answers_and_refitted_at_440() {
        let mut f = fitted(400);
        let served = (0..9).filter(|_| f.uncounted().is_some()).count();
        assert_eq!(served, 9, "nine answers without a count");
        assert!(f.uncounted().is_none(), "the tenth counts the study again");
        assert!(f.counted(410).is_some(), "410 answers: still fresh");
        assert_eq!(f.since, 0);
        assert!(f.counted(439).is_some());
        assert!(f.counted(440).is_none(), "a tenth more: refitted");
        assert!(f.counted(399).is_none(), "fewer answers (a discarded participant): refitted");
    }

    #[test]
    fn answers_seen_without_a_count_still_make_a_refit_due() {
        // Small studies are counted on every answer; past 40, every fortieth.
        let mut small = fitted(20);
        assert!(small.uncounted().is_none());
        let mut f = fitted(2_000);
        let served = (0..60).take_while(|_| f.uncounted().is_some()).count();
        assert_eq!(served, 49, "a count is due at a fortieth more (50 answers)");
        let mut g = fitted(100);
        g.counted = 4_000; // counted since, by another server's answers too
        assert!(g.uncounted().is_none(), "4,001 answers against a fit on 100: refitted");
    }
}
