//! Adaptive overlap in the shell: the settings and per-item rows made at
//! creation, the decision after each answer (pure `domain::adaptive`, taken
//! under the writer's gate in one `BEGIN IMMEDIATE`, so however many answers
//! and arrivals come at once an item's round is decided once and never asks
//! past `max`), account annotators' claims; what outcomes and the API read
//! is in [`settle`].
use crate::accounts::SessionUser;
use crate::api_types::Progress;
use crate::domain::adaptive::{pick_annotator, Adaptive, Decision, Reliability};
use crate::domain::ids::{InstanceId, StudyId, UserId};
use crate::domain::rng::{mix, shuffle};
use crate::error::ServiceError;
use crate::state::{AppState, StudyMeta};
use sqlx::{AnyConnection, AnyPool};
use std::collections::HashMap;

mod settle;
mod stranded;
mod uninformative;
pub use settle::{report, settle};
pub use uninformative::ended_uninformative;

/// At creation, inside its transaction: the settings and every item at `min`.
pub async fn create(tx: &mut AnyConnection, study: StudyId, a: &Adaptive) -> Result<(), ServiceError> {
    sqlx::query("INSERT INTO adaptive_studies (study_id, settings) VALUES ($1, $2)")
        .bind(study)
        .bind(serde_json::to_string(a)?)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO adaptive_items (study_id, instance_id, wanted, state)
         SELECT study_id, instance_id, $1, 'collecting' FROM study_items WHERE study_id = $2",
    )
    .bind(a.min as i64)
    .bind(study)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The study's adaptive settings; None for a fixed overlap.
pub async fn settings(db: impl sqlx::AnyExecutor<'_>, study: StudyId) -> Result<Option<Adaptive>, ServiceError> {
    let text: Option<String> = sqlx::query_scalar("SELECT settings FROM adaptive_studies WHERE study_id = $1")
        .bind(study)
        .fetch_optional(db)
        .await?;
    text.map(|t| crate::studies::meta::parse_adaptive(study, &t)).transpose()
}

/// HOOK on the answer path (`studies::tasks::answer`, after a new answer is
/// durable): decides the item's round once all its wanted answers are in,
/// and ends the place of `user` (who answered) once the study's reliability
/// model recognises them as carrying no information ([`uninformative`]).
/// The answer is stored whatever happens here, so a failed decision (e.g.
/// the database busy past its timeout) is retried with backoff and, if it
/// still fails, left to [`sweep`]: at the study's next answer and at every
/// start-up. Never an error to the participant, whose answer counts.
pub async fn after_answer(
    state: &AppState,
    study: StudyId,
    instance: InstanceId,
    user: UserId,
) -> Result<(), ServiceError> {
    // The settings come with the cached study: no query on a fixed overlap.
    let meta = crate::studies::meta::study_meta(state, study).await?;
    let Some(a) = meta.adaptive else {
        return Ok(());
    };
    let sweep_too = UNDECIDED.lock().map(|mut s| s.remove(&study)).unwrap_or(false);
    let mut wait = RETRY_FIRST_WAIT;
    for attempt in 1..=DECISION_ATTEMPTS {
        match decide(state, study, &a, Some((instance.get(), user.get())), sweep_too).await {
            Ok(_) => return Ok(()),
            Err(e) if attempt < DECISION_ATTEMPTS => {
                tracing::warn!(%study, %instance, attempt, "adaptive decision failed, retrying: {}", e.chain());
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
            Err(e) => {
                tracing::error!(
                    %study,
                    %instance,
                    "adaptive decision failed; the next answer or start-up sweeps: {}",
                    e.chain()
                );
                if let Ok(mut s) = UNDECIDED.lock() {
                    s.insert(study);
                }
            }
        }
    }
    Ok(())
}

/// Tries per decision, and the wait before the second (doubling after).
const DECISION_ATTEMPTS: u32 = 4;
const RETRY_FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Studies whose last decision failed: their next answer sweeps.
static UNDECIDED: std::sync::Mutex<std::collections::BTreeSet<StudyId>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Decides every item of the study whose round is complete but undecided
/// (its decision failed after the answer was stored); how many were due.
pub async fn sweep(state: &AppState, study: StudyId) -> Result<usize, ServiceError> {
    match settings(&state.db, study).await? {
        Some(a) => decide(state, study, &a, None, true).await,
        None => Ok(0),
    }
}

/// The rounds complete but undecided ($1, $2: the study). A `waiting` item
/// (its next round asked, its follow-up bundle not made yet) is due too when
/// a replacement copy of a lost place brought the answer the round wanted.
const DUE: &str = "FROM adaptive_items a
     JOIN (SELECT instance_id, count(*) AS n FROM counted_answers WHERE study_id = $1 GROUP BY instance_id) c
       ON c.instance_id = a.instance_id
     WHERE a.study_id = $2 AND a.state IN ('collecting', 'waiting') AND c.n >= a.wanted";

/// Whether any of the study's rounds is complete but undecided: what a
/// periodic sweep asks first, so that a study with nothing left undecided
/// costs one count, not a reliability fit, every interval.
async fn anything_due(state: &AppState, study: StudyId) -> Result<bool, ServiceError> {
    let due: i64 =
        sqlx::query_scalar(&format!("SELECT count(*) {DUE}")).bind(study).bind(study).fetch_one(&state.db).await?;
    Ok(due > 0 || stranded::any(&state.db, study).await?)
}

/// Sweeps every adaptive study (at start-up every one; `only_due`, the
/// periodic sweeps, only those with a round left undecided); errors are
/// logged, not fatal.
pub async fn sweep_all(state: &AppState, only_due: bool) {
    let studies: Vec<StudyId> =
        match sqlx::query_scalar("SELECT study_id FROM adaptive_studies").fetch_all(&state.db).await {
            Ok(s) => s,
            Err(e) => return tracing::error!("listing adaptive studies to sweep: {e}"),
        };
    for study in studies {
        let swept = async {
            if only_due && !anything_due(state, study).await? {
                return Ok(0);
            }
            sweep(state, study).await
        };
        match swept.await {
            Ok(0) => {}
            Ok(n) => tracing::info!(%study, n, "decided adaptive items left undecided by an earlier run"),
            Err(e) => tracing::error!(%study, "sweeping adaptive items: {}", e.chain()),
        }
    }
}

/// One decision transaction: `answered`'s item's round (and its answerer's
/// place) and, with `sweep`, every complete round still undecided.
/// Idempotent ([`decide_round`] reads the item's state), so a retry after a
/// failure cannot ask twice.
async fn decide(
    state: &AppState,
    study: StudyId,
    a: &Adaptive,
    answered: Option<(i64, i64)>,
    sweep: bool,
) -> Result<usize, ServiceError> {
    let instance = answered.map(|x| x.0);
    let meta = crate::studies::meta::study_meta(state, study).await?;
    // Reliabilities are fitted outside the gate: the fit reads the whole study.
    let reliability = settle::reliability(&state.db, &meta).await?;
    let _one_at_a_time = state.writer.exclusive().await;
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    let mut items: Vec<i64> = instance.into_iter().collect();
    if sweep {
        let due: Vec<i64> = sqlx::query_scalar(&format!("SELECT a.instance_id {DUE}"))
            .bind(study)
            .bind(study)
            .fetch_all(&mut *tx)
            .await?;
        items.extend(due);
    }
    let link = match crate::studies::link::link_of_study(&mut *tx, study).await {
        Ok(_) => true,
        Err(ServiceError::NotFound(_)) => false,
        Err(e) => return Err(e),
    };
    for &item in &items {
        decide_round(&mut tx, &meta, a, &reliability, item, link).await?;
    }
    let now = state.crowd.clock.now();
    if let Some((_, user)) = answered.filter(|&(_, u)| link && a.ends_place(u as u64, &reliability)) {
        if uninformative::end_place(&mut tx, study, user, now).await? {
            tracing::info!(%study, user, "ended the place of a participant whose answers carry no information");
        }
    }
    if link && sweep {
        stranded::release(&mut tx, study).await?;
    }
    if link {
        // Also when nothing was decided: the last participant at work may
        // have just finished, freeing the smaller last bundle of follow-ups.
        crate::studies::link::followup::bundle_waiting(&mut tx, study, meta.seed, meta.kind, now).await?;
    }
    tx.commit().await?;
    Ok(items.len() - usize::from(instance.is_some()))
}

/// Decides an item's round if all its wanted answers are in: stopped, or
/// one more wanted (a link study's item then waits for a follow-up bundle).
async fn decide_round(
    tx: &mut AnyConnection,
    meta: &StudyMeta,
    a: &Adaptive,
    reliability: &Reliability,
    instance: i64,
    link: bool,
) -> Result<(), ServiceError> {
    let study = meta.id;
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT wanted, state FROM adaptive_items WHERE study_id = $1 AND instance_id = $2")
            .bind(study)
            .bind(instance)
            .fetch_optional(&mut *tx)
            .await?;
    // Waiting too: an answer from the replacement of a lost place may fill
    // the round before its follow-up bundle is made, which then is not.
    let Some((wanted, _)) = row.filter(|(_, s)| s == "collecting" || s == "waiting") else {
        return Ok(());
    };
    let given: Vec<(i64, String)> = sqlx::query_as(
        "SELECT user_id, value FROM counted_answers WHERE study_id = $1 AND instance_id = $2 ORDER BY answered_at, arrival, task_id",
    )
    .bind(study)
    .bind(instance)
    .fetch_all(&mut *tx)
    .await?;
    if (given.len() as i64) < wanted {
        return Ok(());
    }
    let mut answers = Vec::with_capacity(given.len());
    for (user, value) in &given {
        let class = crate::studies::aggregate::class_of(meta.kind, value)
            .ok_or_else(|| ServiceError::Internal(format!("stored value {value:?} is not a value of {}", meta.kind)))?;
        answers.push((*user as u64, class));
    }
    match a.decide(instance as u64, &answers, reliability) {
        Decision::Stop { reason, label, posterior } => {
            sqlx::query(
                "UPDATE adaptive_items SET state = 'stopped', reason = $1, answers = $2, value = $3, posterior = $4
                 WHERE study_id = $5 AND instance_id = $6",
            )
            .bind(reason.as_str())
            .bind(given.len() as i64)
            .bind(meta.kind.values()[label])
            .bind(posterior)
            .bind(study)
            .bind(instance)
            .execute(&mut *tx)
            .await?;
        }
        Decision::More => {
            sqlx::query(
                "UPDATE adaptive_items SET wanted = wanted + 1, state = $1 WHERE study_id = $2 AND instance_id = $3",
            )
            .bind(if link { "waiting" } else { "collecting" })
            .bind(study)
            .bind(instance)
            .execute(&mut *tx)
            .await?;
            if !link {
                offer(tx, meta, a, reliability, instance).await?;
            }
        }
    }
    Ok(())
}

/// Account studies: gives an item's next answer to a started annotator who
/// has not had it (and still gets items); with none, it waits for the next
/// one to start.
async fn offer(
    tx: &mut AnyConnection,
    meta: &StudyMeta,
    a: &Adaptive,
    reliability: &Reliability,
    instance: i64,
) -> Result<(), ServiceError> {
    let mut started: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT p.user_id, p.total - p.done FROM participations p WHERE p.study_id = $1 ORDER BY p.user_id",
    )
    .bind(meta.id)
    .fetch_all(&mut *tx)
    .await?;
    started.retain(|&(u, _)| !a.ends_place(u as u64, reliability));
    let had_it: Vec<i64> = sqlx::query_scalar("SELECT user_id FROM tasks WHERE study_id = $1 AND instance_id = $2")
        .bind(meta.id)
        .bind(instance)
        .fetch_all(&mut *tx)
        .await?;
    if let Some(user) = pick_annotator(&started, &had_it) {
        give(tx, meta, user, &[instance]).await?;
    }
    Ok(())
}

/// Appends `items` to an annotator's queue (after its last task) and its total.
async fn give(tx: &mut AnyConnection, meta: &StudyMeta, user: i64, items: &[i64]) -> Result<(), ServiceError> {
    let last: i64 =
        sqlx::query_scalar("SELECT coalesce(max(position), -1) FROM tasks WHERE study_id = $1 AND user_id = $2")
            .bind(meta.id)
            .bind(user)
            .fetch_one(&mut *tx)
            .await?;
    // Each annotator's own order (docs/study-spec.md, "Queue order"), fixed
    // per batch, so no two annotators work the same items in lockstep.
    let mut items = items.to_vec();
    items.sort_unstable();
    shuffle(&mut items, mix(&[meta.seed, user as u64, 0x5155_4555, (last + 1) as u64]));
    // One statement over a JSON list of (item, position, seed): the kind
    // asks one question per item (study validation checked).
    let rows: Vec<(i64, i64, i64)> = items
        .iter()
        .enumerate()
        .map(|(k, &item)| (item, last + 1 + k as i64, (mix(&[meta.seed, user as u64, item as u64]) >> 1) as i64))
        .collect();
    sqlx::query(crate::store::statements::APPEND_TASKS.on(&*tx))
        .bind(meta.id)
        .bind(user)
        .bind(serde_json::to_string(&rows)?)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE participations SET total = total + $1 WHERE study_id = $2 AND user_id = $3")
        .bind(items.len() as i64)
        .bind(meta.id)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Account studies' start: the caller joins (once) and claims every item
/// that still wants an answer it has not been given to anyone for, and that
/// the caller has not had. Called on every start, so an annotator who comes
/// back later picks up what waited for a newcomer. None: not adaptive.
pub async fn start(state: &AppState, user: &SessionUser, meta: &StudyMeta) -> Result<Option<Progress>, ServiceError> {
    let Some(a) = meta.adaptive else {
        return Ok(None);
    };
    // Fitted outside the gate (it reads the whole study); cached between refits.
    let ended = a.end_uninformative && settle::reliability(&state.db, meta).await?.uninformative(user.id.get() as u64);
    let _one_at_a_time = state.writer.exclusive().await;
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    sqlx::query(
        "INSERT INTO participations (study_id, user_id, total, done) VALUES ($1, $2, 0, 0) ON CONFLICT DO NOTHING",
    )
    .bind(meta.id)
    .bind(user.id)
    .execute(&mut *tx)
    .await?;
    let open: Vec<i64> = sqlx::query_scalar(
        "SELECT a.instance_id FROM adaptive_items a
         WHERE a.study_id = $1 AND a.state = 'collecting'
           AND a.wanted > (SELECT count(*) FROM tasks t WHERE t.study_id = a.study_id AND t.instance_id = a.instance_id)
           AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.study_id = a.study_id AND t.instance_id = a.instance_id
                             AND t.user_id = $2)
         ORDER BY a.instance_id",
    )
    .bind(meta.id)
    .bind(user.id)
    .fetch_all(&mut *tx)
    .await?;
    if !open.is_empty() && !ended {
        give(&mut tx, meta, user.id.get(), &open).await?;
    }
    let (done, total): (i64, i64) =
        sqlx::query_as("SELECT done, total FROM participations WHERE study_id = $1 AND user_id = $2")
            .bind(meta.id)
            .bind(user.id)
            .fetch_one(&mut *tx)
            .await?;
    tx.commit().await?;
    Ok(Some(Progress { done, total }))
}

/// For outcomes: the answers each item has been asked for so far (an item
/// stays pending until its last round is in and decided). None: not adaptive.
pub async fn wanted(db: &AnyPool, study: StudyId) -> Result<Option<HashMap<i64, usize>>, ServiceError> {
    if settings(db, study).await?.is_none() {
        return Ok(None);
    }
    let rows: Vec<(i64, i64)> = crate::store::pages::all_rows(
        db,
        "SELECT json_group_array(json_array(instance_id, wanted)) FROM (
           SELECT instance_id, wanted FROM adaptive_items WHERE study_id = $1) AS r",
        study.get(),
    )
    .await?;
    Ok(Some(rows.into_iter().map(|(i, w)| (i, w as usize)).collect()))
}
