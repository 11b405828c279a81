//! `hardneg prolific status` and the research page's Prolific panel:
//! Prolific's counts beside hardneg's funnel, the three mismatch lists
//! with what to do, the budget, places hardneg would add, the open outbox.
use super::outbox::{lines, OutboxLine};
use crate::domain::ids::StudyId;
use crate::domain::prolific::money::{cents, places_needed, Budget};
use crate::domain::prolific::status::{mismatch, Mismatch, SubmissionStatus};
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyPool;
use std::collections::HashMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MismatchLine {
    pub kind: Mismatch,
    /// The participant's number in hardneg, when it arrived.
    pub participant: Option<i64>,
    pub submission: Option<String>,
    pub prolific_status: Option<String>,
    pub hardneg_status: Option<String>,
    pub advice: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProlificStatus {
    pub study_id: StudyId,
    pub prolific_id: Option<String>,
    pub internal_name: String,
    pub status: Option<String>,
    pub places: i64,
    pub reward_cents: i64,
    /// Prolific's submission counts by status, as last synced.
    pub counts: Value,
    pub synced_at: Option<i64>,
    /// hardneg's side: copies wanted, free, working, completed.
    pub hardneg_places: i64,
    pub hardneg_free: i64,
    pub hardneg_working: i64,
    pub hardneg_completed: i64,
    pub mismatches: Vec<MismatchLine>,
    pub budget: Budget,
    /// Places hardneg would add on Prolific for its missing copies.
    pub propose_more_places: Option<u64>,
    /// The new total that adds them (what `…/prolific/places` takes): over
    /// the places Prolific has handed out, which a late submission (one
    /// timed out that still finished) can take past the study's total.
    pub propose_total: Option<u64>,
    /// Why that total cannot be bought: it would commit more than the
    /// budget cap, so the items still wanting answers will not get them.
    #[serde(default)]
    pub over_cap: Option<String>,
    /// Bonuses planned, set up and paid, and the cents paid.
    pub bonuses: (i64, i64, i64, i64),
    /// Outbox rows not done (failed ones with Prolific's message).
    pub outbox: Vec<OutboxLine>,
}

pub async fn status(db: &AnyPool, study: StudyId) -> Result<ProlificStatus, ServiceError> {
    // The outbox first: a reader waiting for it to empty (a script, the
    // panel) then gets figures that include every send it saw finish.
    let outbox = lines(db, study, true).await?;
    type Row = (Option<String>, String, Option<String>, i64, i64, Option<String>, Option<i64>);
    let row: Option<Row> = sqlx::query_as(
        "SELECT prolific_id, internal_name, status, places, reward_cents, counts, synced_at FROM prolific_studies WHERE study_id = $1",
    )
    .bind(study)
    .fetch_optional(db)
    .await?;
    let (prolific_id, internal_name, status, places, reward_cents, counts, synced_at) = row.ok_or_else(|| {
        ServiceError::NotFound(format!("study {study} is not on Prolific: `hardneg prolific publish {study}` first"))
    })?;
    let bundles = crate::crowd::bundles(db, study).await?;
    let hardneg_places: i64 = bundles.iter().map(|b| b.copies_wanted).sum();
    // An overdue place is free: the next arrival reclaims it. With every Prolific
    // place held by people who left (one who gave up and submitted without a
    // code), only the places proposed for it bring that arrival.
    let now = crate::store::clock::Clock::quiet_from_env().now();
    let overdue: i64 =
        sqlx::query_scalar("SELECT count(*) FROM leases WHERE study_id = $1 AND state = 'active' AND expires_at <= $2")
            .bind(study)
            .bind(now)
            .fetch_one(db)
            .await?;
    let hardneg_working: i64 = bundles.iter().map(|b| b.active).sum::<i64>() - overdue;
    let hardneg_completed: i64 = bundles.iter().map(|b| b.completed).sum();
    let hardneg_free = bundles.iter().map(|b| (b.copies_wanted - b.active - b.completed).max(0)).sum::<i64>() + overdue;

    // Number, Prolific submission, status, why screened out, arrival time.
    type Person = (i64, Option<String>, String, Option<String>, i64);
    let people: Vec<Person> = sqlx::query_as(&format!(
        "SELECT p.number, {}, {}, p.screened_out_reason, p.arrived_at FROM participants p
         LEFT JOIN leases l ON l.user_id = p.user_id WHERE p.study_id = $1 ORDER BY p.number",
        super::SUBMISSION_OF_P,
        crate::crowd::STATUS_SQL
    ))
    .bind(study)
    .fetch_all(db)
    .await?;
    // Arrived within the time limit and still before the comprehension check
    // (as an arrival counts them, `crowd::arrive`): an overdue one has left.
    let since = now - i64::from(crate::studies::link::link_of_study(db, study).await?.settings.time_limit_minutes) * 60;
    let recent: std::collections::HashSet<i64> =
        people.iter().filter(|p| p.2 == "arriving" && p.4 > since).map(|p| p.0).collect();
    // Screened out by the comprehension check: asked to return, never to submit.
    let people: Vec<(i64, Option<String>, String)> = people
        .into_iter()
        .map(|(n, session, st, why, _)| match (st.as_str(), why.as_deref()) {
            ("screened_out", Some("comprehension")) => (n, session, "screened_out_by_comprehension".to_string()),
            _ => (n, session, st),
        })
        .collect();
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT submission_id, status, return_requested FROM prolific_submissions WHERE study_id = $1 ORDER BY submission_id",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    // One whose return Prolific asked for already (the full code's action) needs nothing more.
    let asked_back: std::collections::HashSet<&str> = rows.iter().filter(|r| r.2 != 0).map(|r| r.0.as_str()).collect();
    let subs: Vec<(String, String)> = rows.iter().map(|r| (r.0.clone(), r.1.clone())).collect();
    // A returned finisher paid with a bonus (one planned counts: it is on
    // its way) was settled as the advice says; listing it still invites a
    // second payment (an audit).
    let bonused: std::collections::HashSet<String> = sqlx::query_scalar(
        "SELECT DISTINCT submission_id FROM prolific_bonuses WHERE study_id = $1 AND state IN ('planned', 'set_up', 'paid')",
    )
    .bind(study)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let settled = |m: &MismatchLine| {
        let sub = m.submission.as_deref();
        match m.kind {
            Mismatch::NeverArrived => sub.is_some_and(|s| asked_back.contains(s)),
            Mismatch::CompletedThenReturned => sub.is_some_and(|s| bonused.contains(s)),
            _ => false,
        }
    };
    let mismatches = mismatches(&people, &subs, synced_at.is_some()).into_iter().filter(|m| !settled(m)).collect();
    let arrived: std::collections::HashSet<&str> = people.iter().filter_map(|p| p.1.as_deref()).collect();
    let taking = subs.iter().filter(|(_, s)| SubmissionStatus::parse(s).takes_place()).count() as i64;
    // A stopped study hands out none of its places: a copy freed after the stop needs a bought one.
    let recruiting = !matches!(status.as_deref(), Some("COMPLETED" | "AWAITING REVIEW"));
    let open = if recruiting { (places - taking).max(0) as u64 } else { 0 };
    // Those who hold a place on Prolific and have not opened the join link
    // yet will fill free copies; so will those who opened it within the time
    // limit and are still before the comprehension check (no lease yet: an
    // audit saw places bought for them, and everyone arriving on those told
    // the study is full). One there longer has left, as an overdue lease has.
    let holding =
        |st: &str| matches!(SubmissionStatus::parse(st), SubmissionStatus::Reserved | SubmissionStatus::Active);
    let not_arrived = subs.iter().filter(|(sub, st)| holding(st) && !arrived.contains(sub.as_str())).count();
    let synced: std::collections::HashMap<&str, &str> = subs.iter().map(|(s, st)| (s.as_str(), st.as_str())).collect();
    let at_the_check = people
        .iter()
        .filter(|(n, sub, _)| {
            recent.contains(n) && sub.as_deref().is_some_and(|s| synced.get(s).is_none_or(|st| holding(st)))
        })
        .count();
    let on_their_way = (not_arrived + at_the_check) as u64;
    let budget = super::budget::budget(db, study).await?;
    let more = places_needed(hardneg_free.max(0) as u64, open + on_their_way);
    let propose_total = more.map(|n| places.max(taking).max(0) as u64 + n);
    let over_cap = match propose_total {
        Some(total) => over_cap(db, study, total).await?,
        None => None,
    };
    Ok(ProlificStatus {
        study_id: study,
        prolific_id,
        internal_name,
        status,
        places,
        reward_cents,
        counts: counts.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or(Value::Null),
        synced_at,
        hardneg_places,
        hardneg_free,
        hardneg_working,
        hardneg_completed,
        mismatches,
        budget,
        propose_more_places: more,
        propose_total,
        over_cap,
        bonuses: super::bonus::summary(db, study).await?,
        outbox,
    })
}

/// The words `increase_places` would refuse `total` with, when the cap
/// stands in its way: the study cannot finish within its budget.
pub(super) async fn over_cap(db: &AnyPool, study: StudyId, total: u64) -> Result<Option<String>, ServiceError> {
    let terms = super::budget::Terms::read(db, study).await?;
    over_cap_on(&mut *db.acquire().await?, &terms, study, total).await
}

/// [`over_cap`] read on `conn` (the raise's own write transaction).
pub(super) async fn over_cap_on(
    conn: &mut sqlx::AnyConnection,
    terms: &super::budget::Terms,
    study: StudyId,
    total: u64,
) -> Result<Option<String>, ServiceError> {
    let (b, more) = super::budget::raising_places(conn, terms, study, total as i64).await?;
    Ok((!b.allows(more)).then(|| {
        format!(
            "{total} places would commit {} of a budget cap of {}",
            cents(b.committed.saturating_add(more)),
            cents(b.cap.unwrap_or(0))
        )
    }))
}

/// Where hardneg's participants and Prolific's submissions disagree: each
/// participant against its submission (once synced), then each submission
/// whose participant never arrived.
fn mismatches(people: &[(i64, Option<String>, String)], subs: &[(String, String)], synced: bool) -> Vec<MismatchLine> {
    let by_sub: HashMap<&str, &str> = subs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut mismatches = Vec::new();
    for (number, session, st) in people {
        let p = session.as_deref().and_then(|s| by_sub.get(s)).map(|s| SubmissionStatus::parse(s));
        if p.is_none() && !synced {
            continue;
        }
        if let Some(kind) = mismatch(p, Some(st.as_str())) {
            mismatches.push(MismatchLine {
                kind,
                participant: Some(*number),
                submission: session.clone(),
                prolific_status: p.map(|s| s.as_str().to_string()),
                hardneg_status: Some(st.clone()),
                advice: kind.advice().to_string(),
            });
        }
    }
    let arrived: std::collections::HashSet<&str> = people.iter().filter_map(|p| p.1.as_deref()).collect();
    for (sub, st) in subs {
        if arrived.contains(sub.as_str()) {
            continue;
        }
        if let Some(kind) = mismatch(Some(SubmissionStatus::parse(st)), None) {
            mismatches.push(MismatchLine {
                kind,
                participant: None,
                submission: Some(sub.clone()),
                prolific_status: Some(st.clone()),
                hardneg_status: None,
                advice: kind.advice().to_string(),
            });
        }
    }
    mismatches
}
