//! Bonuses (docs/prolific.md, "Bonuses"): an amount per participant from
//! the researcher's CSV (`id,amount`, the id a PROLIFIC_PID or a
//! submission id) or one amount for every approved submission. Each is
//! stored per round before anything is sent; set up in batches of at most
//! 200 (the set-up's id stored), then paid once: a `pay` whose answer was
//! lost is read back before it could ever be sent again.
use super::actions::Remote;
use super::outbox::{crash_point, enqueue};
use crate::domain::ids::StudyId;
use crate::domain::prolific::decide::BONUS_SETUP_MAX;
use crate::domain::prolific::money::{cents, parse_money};
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;
use std::collections::{HashMap, HashSet};

/// The most one bonus may be (a guard against "30" meant as 0.30).
pub const MAX_BONUS_CENTS: u64 = 10_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BonusPlan {
    pub round: String,
    /// (submission id, cents) in the CSV's order.
    pub bonuses: Vec<(String, u64)>,
    pub total_cents: u64,
    /// The bonuses the round did not hold yet: what this run sets up and
    /// pays (a dry run: would).
    pub new: Vec<(String, u64)>,
    /// Outbox rows written now.
    pub written: usize,
}

/// Where the amounts come from.
pub enum Source<'a> {
    Csv(&'a str),
    /// This amount for every approved (or awaiting review and approved by hardneg) submission.
    EachApproved(u64),
}

/// The bonuses of a CSV, checked whole: every id known, amounts of money,
/// no id twice. Errors name the line.
pub async fn read(db: &AnyPool, study: StudyId, source: Source<'_>) -> Result<Vec<(String, u64)>, ServiceError> {
    let subs: Vec<(String, String, String)> =
        sqlx::query_as("SELECT submission_id, participant_id, status FROM prolific_submissions WHERE study_id = $1")
            .bind(study)
            .fetch_all(db)
            .await?;
    match source {
        Source::EachApproved(c) if c > MAX_BONUS_CENTS => Err(ServiceError::Invalid(format!(
            "each: {} is over the most one bonus may be ({}); amounts are money, not cents",
            cents(c),
            cents(MAX_BONUS_CENTS)
        ))),
        Source::EachApproved(c) => Ok(subs
            .into_iter()
            .filter(|(_, _, s)| s == "APPROVED" || s == "PARTIALLY APPROVED")
            .map(|(id, _, _)| (id, c))
            .collect()),
        Source::Csv(text) => {
            // A row whose participant id no sync has read yet ('') is nobody's:
            // a blank id must never reach it.
            let by_pid: HashMap<String, &str> = subs
                .iter()
                .filter(|(_, p, _)| !p.is_empty())
                .map(|(s, p, _)| (p.to_ascii_lowercase(), s.as_str()))
                .collect();
            let by_sub: HashMap<String, &str> =
                subs.iter().map(|(s, _, _)| (s.to_ascii_lowercase(), s.as_str())).collect();
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            let mut problems = Vec::new();
            // Excel's "CSV UTF-8" starts with a byte order mark.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            for (i, line) in text.lines().enumerate() {
                let n = i + 1;
                let line = line.trim();
                if line.is_empty() || (n == 1 && line.to_ascii_lowercase().contains("amount")) {
                    continue;
                }
                let Some((id, amount)) = line.split_once(',') else {
                    problems.push(format!("line {n}: expected `id,amount`"));
                    continue;
                };
                let id = id.trim();
                // Prolific's ids are lower-case hex; in capitals they are the same id (docs/crowd.md).
                let lower = id.to_ascii_lowercase();
                let sub = match by_sub.get(lower.as_str()) {
                    Some(s) => Some(*s),
                    None => by_pid.get(lower.as_str()).copied(),
                };
                let Some(sub) = sub else {
                    problems.push(format!(
                        "line {n}: {id:?} is no submission or participant of this study on Prolific (sync first)"
                    ));
                    continue;
                };
                // A rejection says the answers could not be used: a bonus for
                // them is a list made before it (an audit paid one).
                if subs.iter().any(|(s, _, status)| s == sub && status == "REJECTED") {
                    problems.push(format!("line {n}: {id}'s submission is REJECTED on Prolific: no bonus for it"));
                    continue;
                }
                match parse_money(amount) {
                    Ok(c) if c > MAX_BONUS_CENTS => problems.push(format!(
                        "line {n}: {} is over the most one bonus may be ({}); amounts are money, not cents",
                        cents(c),
                        cents(MAX_BONUS_CENTS)
                    )),
                    Ok(c) if seen.insert(sub.to_string()) => out.push((sub.to_string(), c)),
                    Ok(_) => problems.push(format!("line {n}: {id} has a bonus on an earlier line")),
                    Err(e) => problems.push(format!("line {n}: {e}")),
                }
            }
            if !problems.is_empty() {
                return Err(ServiceError::Invalid(format!("the bonus CSV is refused:\n{}", problems.join("\n"))));
            }
            Ok(out)
        }
    }
}

/// A round's bonuses are what it first stored: one given again at another
/// amount is refused (it would be reported, never paid), naming a few.
fn changed_amounts(round: &str, bonuses: &[(String, u64)], stored: &HashMap<String, i64>) -> Result<(), ServiceError> {
    let changed: Vec<String> = bonuses
        .iter()
        .filter_map(|(sub, c)| {
            let held = *stored.get(sub)?;
            (held != *c as i64).then(|| format!("{sub} holds {} (not {})", cents(held.max(0) as u64), cents(*c)))
        })
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    Err(ServiceError::Invalid(format!(
        "round {round:?} already holds other amounts for {} submission(s) ({}{}): a round's bonuses are never \
         changed; pay a difference in a new round",
        changed.len(),
        changed.iter().take(3).cloned().collect::<Vec<_>>().join("; "),
        if changed.len() > 3 { "; …" } else { "" }
    )))
}

/// The round's bonuses stored already, and those it would add, refused
/// when an amount changed or the new ones do not fit in what the budget cap
/// leaves (only what the round adds counts: its stored bonuses are
/// committed already), with Prolific's fee and tax on top.
async fn fits(
    conn: &mut sqlx::AnyConnection,
    terms: &super::budget::Terms,
    study: StudyId,
    round: &str,
    bonuses: &[(String, u64)],
) -> Result<(HashMap<String, i64>, Vec<(String, u64)>), ServiceError> {
    let stored: HashMap<String, i64> = sqlx::query_as::<_, (String, i64)>(
        "SELECT submission_id, amount_cents FROM prolific_bonuses WHERE study_id = $1 AND round = $2",
    )
    .bind(study)
    .bind(round)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .collect();
    changed_amounts(round, bonuses, &stored)?;
    let new: Vec<(String, u64)> = bonuses.iter().filter(|b| !stored.contains_key(&b.0)).cloned().collect();
    let new_cents: u64 = new.iter().map(|b| b.1).sum();
    let (budget, fee) = super::budget::budget_and_fee_on(conn, terms, study).await?;
    let more = crate::domain::prolific::money::with_fee(new_cents, fee);
    if !budget.allows(more) {
        return Err(ServiceError::Invalid(format!(
            "bonuses of {} ({} with Prolific's fee and tax) would commit {} of a budget cap of {}",
            cents(new_cents),
            cents(more),
            cents(budget.committed.saturating_add(more)),
            cents(budget.cap.unwrap_or(0))
        )));
    }
    Ok((stored, new))
}

/// Stores the round's bonuses and writes their set-ups (nothing in a dry
/// run). The same round again adds nothing: a bonus is per submission and round.
pub async fn plan(
    db: &AnyPool,
    study: StudyId,
    round: &str,
    bonuses: Vec<(String, u64)>,
    dry_run: bool,
) -> Result<BonusPlan, ServiceError> {
    if round.trim().is_empty() {
        return Err(ServiceError::Invalid("a bonus round needs a name".into()));
    }
    let total_cents = bonuses.iter().map(|b| b.1).sum();
    let terms = super::budget::Terms::read(db, study).await?;
    if dry_run {
        let (_, new) = fits(&mut *db.acquire().await?, &terms, study, round, &bonuses).await?;
        return Ok(BonusPlan { round: round.into(), bonuses, total_cents, new, written: 0 });
    }
    // Checked against the cap and stored in one write transaction: two
    // rounds (or a round and a raise of the places) at once must not each
    // fit in what the cap left.
    let mut tx = crate::store::db::begin_write(db).await?;
    let (stored, _) = fits(&mut tx, &terms, study, round, &bonuses).await?;
    let mut fresh = Vec::new();
    for (sub, c) in &bonuses {
        let inserted = sqlx::query(
            "INSERT INTO prolific_bonuses (study_id, submission_id, round, amount_cents, state) VALUES ($1, $2, $3, $4, 'planned')
             ON CONFLICT (study_id, submission_id, round) DO NOTHING",
        )
        .bind(study)
        .bind(sub)
        .bind(round)
        .bind(*c as i64)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 1 {
            fresh.push((sub.clone(), *c));
        } else if !stored.contains_key(sub) {
            // Stored meanwhile by another run of the round (two at once): same amounts, or nothing.
            let held: i64 = sqlx::query_scalar(
                "SELECT amount_cents FROM prolific_bonuses WHERE study_id = $1 AND submission_id = $2 AND round = $3",
            )
            .bind(study)
            .bind(sub)
            .bind(round)
            .fetch_one(&mut *tx)
            .await?;
            changed_amounts(round, &[(sub.clone(), *c)], &HashMap::from([(sub.clone(), held)]))?;
        }
    }
    let mut written = 0;
    for (i, chunk) in fresh.chunks(BONUS_SETUP_MAX).enumerate() {
        let key = format!("bonus_setup:{study}:{round}:{i}:{}", chunk[0].0);
        let remote = Remote::BonusSetup { round: round.to_string(), bonuses: chunk.to_vec() };
        written += usize::from(enqueue(&mut *tx, study, &key, &remote).await?);
    }
    tx.commit().await?;
    if written > 0 {
        crash_point("outbox_written", None);
    }
    Ok(BonusPlan { round: round.into(), bonuses, total_cents, new: fresh, written })
}

/// The study's bonuses by state: (planned, set up, paid) counts and paid cents.
pub async fn summary(db: &AnyPool, study: StudyId) -> Result<(i64, i64, i64, i64), ServiceError> {
    Ok(sqlx::query_as(
        "SELECT count(*) FILTER (WHERE state = 'planned'), count(*) FILTER (WHERE state = 'set_up'),
                count(*) FILTER (WHERE state = 'paid'), CAST(coalesce(sum(amount_cents) FILTER (WHERE state = 'paid'), 0) AS BIGINT)
         FROM prolific_bonuses WHERE study_id = $1",
    )
    .bind(study)
    .fetch_one(db)
    .await?)
}

/// A round's open set-ups and pays, each with when it may be sent next
/// (ms): what `prolific bonus` waits on (another round's rows are not its).
pub async fn open_rows_of_round(
    db: &AnyPool,
    study: StudyId,
    round: &str,
) -> Result<Vec<(super::outbox::OutboxLine, i64)>, ServiceError> {
    type Open = (i64, String, String, i64, Option<i64>, Option<String>, String, i64);
    let rows: Vec<Open> = sqlx::query_as(
        "SELECT id, action, state, attempts, last_status, last_error, payload, not_before FROM prolific_outbox
         WHERE study_id = $1 AND state <> 'done' AND action IN ('bonus_setup', 'bonus_pay') ORDER BY id",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|r| match serde_json::from_str::<Remote>(&r.6) {
            Ok(Remote::BonusSetup { round: of, .. } | Remote::BonusPay { round: of, .. }) => of == round,
            _ => false,
        })
        .map(|(id, action, state, attempts, last_status, last_error, _, not_before)| {
            (super::outbox::OutboxLine { id, action, state, attempts, last_status, last_error }, not_before)
        })
        .collect())
}
