//! The approve list (docs/crowd.md, "Approving on Prolific"): one row per
//! participant with its flags, the estimated accuracy Dawid–Skene gives it,
//! and a suggested decision; and discarding a flagged participant's copy.
use super::link_of_study;
use crate::domain::crowd::flags::{suggest, Decision, Flag, Submission};
use crate::domain::crowd::lease::{LeaseEvent, LeaseState};
use crate::domain::ids::{ParticipantId, StudyId};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApproveRow {
    /// PROLIFIC_PID (personal data: the list is for the researcher only).
    pub platform_id: String,
    pub participant: i64,
    pub username: String,
    /// None for a participant screened out before it got a bundle.
    pub bundle: Option<i64>,
    /// The lease state, or `screened_out` / `full_after_comprehension` / `arriving` before a lease.
    pub status: String,
    pub answers: usize,
    pub median_secs_per_item: Option<f64>,
    pub gold_accuracy: Option<f64>,
    pub checks_failed: usize,
    pub comprehension_attempts: i64,
    /// Dawid–Skene's estimated accuracy over the study's answers (none for fewer than 2 answers).
    pub ds_accuracy: Option<f64>,
    pub agreement: Option<f64>,
    pub flags: Vec<Flag>,
    pub decision: Decision,
    pub reason: String,
    /// Why the place ended before the bundle was done: `uninformative`
    /// (adaptive overlap found the answers carry no information).
    #[serde(default)]
    pub ended: Option<String>,
}

pub const CSV_HEADER: [&str; 14] = [
    "platform_id",
    "participant",
    "bundle",
    "status",
    "answers",
    "median_s_per_item",
    "gold_accuracy",
    "checks_failed",
    "comprehension_attempts",
    "ds_accuracy",
    "flags",
    "decision",
    "reason",
    "ended",
];

impl ApproveRow {
    pub fn csv_cells(&self) -> [String; 14] {
        let opt = |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
        [
            self.platform_id.clone(),
            self.participant.to_string(),
            self.bundle.map(|b| b.to_string()).unwrap_or_default(),
            self.status.clone(),
            self.answers.to_string(),
            opt(self.median_secs_per_item, 1),
            opt(self.gold_accuracy, 3),
            self.checks_failed.to_string(),
            self.comprehension_attempts.to_string(),
            opt(self.ds_accuracy, 3),
            self.flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(";"),
            self.decision.as_str().to_string(),
            self.reason.clone(),
            self.ended.clone().unwrap_or_default(),
        ]
    }
}

/// The list as CSV, in participant order.
pub fn to_csv(rows: &[ApproveRow]) -> Result<Vec<u8>, ServiceError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let internal = |e: csv::Error| ServiceError::internal("writing the approve list", e);
    w.write_record(CSV_HEADER).map_err(internal)?;
    for r in rows {
        w.write_record(r.csv_cells()).map_err(internal)?;
    }
    w.into_inner().map_err(|e| ServiceError::internal("writing the approve list", e.into_error()))
}

/// Seconds from lease to end of every finished bundle (completed, extra or discarded).
pub(crate) async fn finished_bundle_secs(db: &AnyPool, study: StudyId) -> Result<Vec<f64>, ServiceError> {
    let rows: Vec<i64> = sqlx::query_scalar(
        "SELECT ended_at - leased_at FROM leases
         WHERE study_id = $1 AND state IN ('completed', 'extra', 'discarded') AND ended_at IS NOT NULL",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|s| s as f64).collect())
}

/// The length the study's `[prolific]` table advertises (`estimated_minutes`), in seconds.
async fn advertised_secs(db: &AnyPool, study: StudyId) -> Result<Option<f64>, ServiceError> {
    let spec: Option<String> =
        sqlx::query_scalar("SELECT spec FROM studies WHERE id = $1").bind(study).fetch_optional(db).await?;
    let Some(spec) = spec else { return Ok(None) };
    let parsed = crate::studies::create::parse_spec(&crate::kinds::REGISTRY, &spec, 0)?;
    Ok(parsed.prolific.map(|p| p.estimated_minutes * 60.0))
}

/// `leases.ended_why` of a place adaptive overlap ended (`studies::adaptive`).
pub const ENDED_UNINFORMATIVE: &str = "uninformative";

fn submission(status: &str) -> Submission {
    match status {
        "completed" | "extra" | "discarded" | "screened_out" => Submission::Finished,
        "timed_out" => Submission::Unfinished,
        "returned" => Submission::Returned,
        _ => Submission::Working,
    }
}

/// Every participant of the link study, by number.
pub async fn approve_list(db: &AnyPool, kinds: &[SurveyKind], study: StudyId) -> Result<Vec<ApproveRow>, ServiceError> {
    let link = link_of_study(db, study).await?;
    let meta = crate::studies::meta::load_study_meta(db, kinds, study).await?;
    type Row = (i64, i64, String, String, i64, Option<i64>, Option<i64>, Option<String>, String, Option<String>);
    let people: Vec<Row> = sqlx::query_as(&format!(
        "SELECT p.user_id, p.number, u.username, p.platform_pid, p.comprehension_attempts, p.screened_out_at, l.bundle,
                l.state, {}, l.ended_why
         FROM participants p JOIN users u ON u.id = p.user_id LEFT JOIN leases l ON l.user_id = p.user_id
         WHERE p.study_id = $1 ORDER BY p.number",
        super::STATUS_SQL
    ))
    .bind(study)
    .fetch_all(db)
    .await?;
    let orders = meta.kind.values().is_empty();
    let scores = super::scores::scores(db, study, link.settings.quality, meta.seed, orders).await?;
    let median_bundle = crate::domain::crowd::flags::median(&mut finished_bundle_secs(db, study).await?);
    let length = crate::domain::crowd::flags::study_length(median_bundle, advertised_secs(db, study).await?);
    Ok(people
        .into_iter()
        .map(|(user, number, username, pid, attempts, screened_at, bundle, state, status, ended)| {
            let f = scores.flags.get(&(user as u64));
            let (checks_failed, fl) = f.map(|f| (f.checks_failed, f.flags.clone())).unwrap_or_default();
            let (decision, reason) = match (&state, screened_at) {
                // Prolific: one who fails the comprehension check is asked to return, never rejected.
                (None, Some(_)) => (Decision::None, "screened out by the comprehension check".to_string()),
                (None, None) if status == super::FULL_AFTER_COMPREHENSION => {
                    (Decision::None, "told the study was full after the comprehension check".to_string())
                }
                // Holds no place yet: nothing to approve, and not working on a bundle either.
                (None, None) => (Decision::Wait, "not through the comprehension check yet".to_string()),
                // Paid as promised: the study ended their place, not they.
                _ if ended.as_deref() == Some(ENDED_UNINFORMATIVE) && status == "completed" => {
                    let n = f.map_or(0, |f| f.answers);
                    (Decision::Approve, format!("place ended early: adaptive overlap found the answers carry no information ({n} kept and exported, counted toward no settled value); approve, as promised"))
                }
                _ => suggest(submission(&status), checks_failed, &fl, length),
            };
            ApproveRow {
                platform_id: pid,
                participant: number,
                username,
                bundle,
                status,
                answers: f.map_or(0, |f| f.answers),
                median_secs_per_item: f.and_then(|f| f.median_secs_per_item),
                gold_accuracy: f.and_then(|f| f.gold_accuracy),
                checks_failed,
                comprehension_attempts: attempts,
                ds_accuracy: scores.ds.get(&(user as u64)).copied(),
                agreement: f.and_then(|f| f.agreement),
                flags: fl,
                decision,
                reason,
                ended,
            }
        })
        .collect())
}

/// Discards participant `number`'s finished copy: its answers stay stored,
/// marked by the lease state `discarded`, no longer count, and the place
/// goes back to the pool for a new participant. Returns the new state.
pub async fn discard(db: &AnyPool, study: StudyId, number: ParticipantId) -> Result<LeaseState, ServiceError> {
    link_of_study(db, study).await?;
    let mut tx = crate::store::db::begin_write(db).await?;
    if let Some(name) = outcomes_built_on(&mut tx, study).await? {
        return Err(ServiceError::Invalid(format!(
            "study {name:?} was built from this study's outcomes; discarding participant {number}'s copy now \
             would change them under it (its answers stay counted)"
        )));
    }
    let next = match discard_in(&mut tx, study, number).await? {
        Discard::NoBundle => {
            return Err(ServiceError::NotFound(format!("study {study} has no participant {number} with a bundle")))
        }
        Discard::Left(current) => {
            return Err(ServiceError::Invalid(format!(
                "participant {number} is {current}: only a finished copy (completed or extra) can be discarded"
            )))
        }
        Discard::Done(next) => next,
    };
    crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    tx.commit().await?;
    Ok(next)
}

/// The later study built on `study`'s outcomes, where `study` is a
/// curation step (a Step 4 on a Step 3): they are final then, as for an
/// adjudication, so no copy is discarded (a refit would move items the
/// later study already showed; an audit's export lost 8 of 49 rows and
/// paired a Step 4 verdict with an image Step 4 never showed). A study that
/// its successor reads as it goes (HNC's written captions) stays open.
pub async fn outcomes_built_on(tx: &mut sqlx::AnyConnection, study: StudyId) -> Result<Option<String>, ServiceError> {
    let Some(name) = crate::studies::meta::built_into(&mut *tx, study).await? else { return Ok(None) };
    let kind: String =
        sqlx::query_scalar("SELECT kind FROM studies WHERE id = $1").bind(study).fetch_one(&mut *tx).await?;
    let curation =
        crate::domain::survey::SurveyKind::parse_in(crate::kinds::KINDS, &kind).is_some_and(|k| k.curation().is_some());
    Ok(curation.then_some(name))
}

/// What [`discard_in`] found and did.
pub enum Discard {
    /// The participant holds no bundle.
    NoBundle,
    /// A finished copy, now in this state.
    Done(LeaseState),
    /// A copy in this state, which is not finished: left as it is.
    Left(String),
}

/// In a write transaction: discards participant `number`'s copy where it
/// is finished (completed or extra) and leaves it as it is otherwise. The
/// caller reopens what the discard lost (`studies::reopen::reopen_lost`)
/// before it commits.
pub async fn discard_in(
    tx: &mut sqlx::AnyConnection,
    study: StudyId,
    number: ParticipantId,
) -> Result<Discard, ServiceError> {
    let row: Option<(i64, String)> = sqlx::query_as(
        "SELECT l.id, l.state FROM participants p JOIN leases l ON l.user_id = p.user_id
         WHERE p.study_id = $1 AND p.number = $2",
    )
    .bind(study)
    .bind(number)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((lease, current)) = row else { return Ok(Discard::NoBundle) };
    let Some(next) = LeaseState::parse(&current).and_then(|s| s.after(LeaseEvent::Discarded)) else {
        return Ok(Discard::Left(current));
    };
    sqlx::query("UPDATE leases SET state = $1 WHERE id = $2").bind(next.as_str()).bind(lease).execute(&mut *tx).await?;
    Ok(Discard::Done(next))
}
