//! Each remote action: how it is sent, what its answer changes in hardneg,
//! and how it is read back when its answer was lost. Approvals go out in
//! bulk (at most 1,000 ids a call); everything else one row at a time.
use super::client::Client;
use super::outbox::{advance, crash_point, delay_for, reread_after, Row};
use super::readback::{find_draft, read_back, Found};
pub use super::remote::{bonus_csv, Remote};
use crate::domain::ids::StudyId;
use crate::domain::prolific::decide::BULK_APPROVE_MAX;
use crate::domain::prolific::outbox::{event_for_status, OutboxEvent, OutboxState};
use crate::domain::prolific::status::{decision_fate, group_split, DecisionFate, SubmissionStatus};
use crate::error::ServiceError;
use serde_json::{json, Value};

pub async fn prolific_id(db: &sqlx::AnyPool, study: StudyId) -> Result<Option<String>, ServiceError> {
    Ok(sqlx::query_scalar::<_, Option<String>>("SELECT prolific_id FROM prolific_studies WHERE study_id = $1")
        .bind(study)
        .fetch_optional(db)
        .await?
        .flatten())
}

/// How long a row that waits on something else waits before it is looked
/// at again: the longer it has waited, the longer (`HARDNEG_PROLIFIC_WAIT_MS`
/// at most, default 30 s).
fn wait_ms(r: &Row) -> i64 {
    let cap = std::env::var("HARDNEG_PROLIFIC_WAIT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000);
    crate::domain::prolific::backoff::waiting_ms(super::client::now_ms() - r.created_at, cap) as i64
}

/// A submission's status as last synced.
async fn synced_status(
    db: &sqlx::AnyPool,
    study: StudyId,
    submission: &str,
) -> Result<Option<SubmissionStatus>, ServiceError> {
    let s: Option<String> =
        sqlx::query_scalar("SELECT status FROM prolific_submissions WHERE study_id = $1 AND submission_id = $2")
            .bind(study)
            .bind(submission)
            .fetch_optional(db)
            .await?;
    Ok(s.map(|s| SubmissionStatus::parse(&s)))
}

/// Each participant's submission status as last synced (an approved one
/// wins where a participant has several).
async fn participant_statuses(
    db: &sqlx::AnyPool,
    study: StudyId,
) -> Result<std::collections::HashMap<String, SubmissionStatus>, ServiceError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT participant_id, status FROM prolific_submissions WHERE study_id = $1")
            .bind(study)
            .fetch_all(db)
            .await?;
    let mut out = std::collections::HashMap::new();
    for (pid, status) in rows {
        let status = SubmissionStatus::parse(&status);
        let kept = out.entry(pid).or_insert(status);
        if status.paid() {
            *kept = status;
        }
    }
    Ok(out)
}

/// Processes due rows: pending approvals in bulk, the rest one by one.
pub async fn process(client: &Client, rows: Vec<Row>) -> Result<(), ServiceError> {
    let db = client.db();
    let mut approvals: Vec<Row> = Vec::new();
    for r in rows {
        // An approval or rejection waits for its submission, and ends where it cannot apply.
        if r.state == OutboxState::Pending {
            if let Some(sub) = r.remote.submission() {
                let status = synced_status(db, r.study, sub).await?;
                let word = status.map_or("not synced yet", SubmissionStatus::as_str);
                let (event, wait, why) = match decision_fate(matches!(r.remote, Remote::Approve { .. }), status) {
                    DecisionFate::Send => (None, 0, String::new()),
                    DecisionFate::Wait => {
                        (Some(OutboxEvent::Wait), wait_ms(&r), format!("the submission is {word}: waiting"))
                    }
                    DecisionFate::Applied => {
                        (Some(OutboxEvent::ReadBackApplied), 0, format!("already {word} on Prolific"))
                    }
                    DecisionFate::Moot => (
                        Some(OutboxEvent::Moot),
                        0,
                        format!("the submission is {word} on Prolific: this can no longer apply"),
                    ),
                };
                if let Some(event) = event {
                    advance(db, &r, event, wait, None, Some(&why)).await?;
                    continue;
                }
            }
        }
        // Finishers join the block group once their approvals have settled, and only the approved.
        if let (OutboxState::Pending, Remote::GroupAdd { group_id, participants }) = (r.state, &r.remote) {
            let statuses = participant_statuses(db, r.study).await?;
            let finishers: Vec<_> = participants.iter().map(|p| (p.clone(), statuses.get(p).copied())).collect();
            let split = group_split(&finishers);
            if split.approved.is_empty() {
                let (event, wait, why) = match split.waiting.is_empty() {
                    true => (OutboxEvent::Moot, 0, "none of them was approved on Prolific: nobody to add"),
                    false => (OutboxEvent::Wait, wait_ms(&r), "waiting for the finishers' approvals"),
                };
                advance(db, &r, event, wait, None, Some(why)).await?;
                continue;
            }
            if !split.waiting.is_empty() {
                // Those still open wait in a row of their own (its key names them: written once).
                let key = format!(
                    "group_add:{group_id}:{}",
                    crate::store::images::sha256_hex(split.waiting.join(",").as_bytes())
                );
                let rest = Remote::GroupAdd { group_id: group_id.clone(), participants: split.waiting };
                super::outbox::enqueue(db, r.study, &key, &rest).await?;
            }
            let remote = Remote::GroupAdd { group_id: group_id.clone(), participants: split.approved };
            one(client, Row { remote, ..r.clone() }).await?;
            continue;
        }
        if r.state == OutboxState::Pending && matches!(r.remote, Remote::Approve { .. }) {
            approvals.push(r);
        } else {
            one(client, r).await?;
        }
    }
    let mut by_study: std::collections::BTreeMap<i64, Vec<Row>> = Default::default();
    for r in approvals {
        by_study.entry(r.study.get()).or_default().push(r);
    }
    for (_, rows) in by_study {
        for chunk in rows.chunks(BULK_APPROVE_MAX) {
            bulk_approve(client, chunk).await?;
        }
    }
    Ok(())
}

fn claimed(r: &Row) -> Row {
    Row { state: OutboxState::Sending, attempts: r.attempts + 1, ..r.clone() }
}

/// Claims, sends and records one bulk approval of `rows`.
async fn bulk_approve(client: &Client, rows: &[Row]) -> Result<(), ServiceError> {
    let db = client.db();
    let mut mine = Vec::new();
    for r in rows {
        if advance(db, r, OutboxEvent::Claim, 0, None, None).await? {
            mine.push(claimed(r));
        }
    }
    let ids: Vec<&str> = mine.iter().filter_map(|r| r.remote.submission()).collect();
    if ids.is_empty() {
        return Ok(());
    }
    let body = json!({ "submission_ids": ids });
    let message = "bulk approval accepted: confirmed by a read-back";
    let sent = client.call("POST", "/api/v1/submissions/bulk-approve/", Some(&body), Some(mine[0].id)).await;
    crash_point("sent", Some("approve"));
    let (status, message, retry_after) = match &sent {
        Ok(reply) => (
            Some(reply.status),
            Some(if reply.ok() { message.to_string() } else { reply.message() }),
            reply.retry_after_ms,
        ),
        Err(e) => (None, Some(e.to_string()), None),
    };
    let event = event_for_status(status);
    let mut tx = crate::store::db::begin_write(db).await?;
    for r in &mine {
        let (event, delay) = match event {
            // Prolific approves in bulk later: the answer says "in progress", a read-back confirms each.
            OutboxEvent::Answered => (OutboxEvent::Lost, delay_for(r.attempts, None) + 1_000),
            // One active submission refuses the whole call: each is read back and sent again alone if need be.
            OutboxEvent::Refused if mine.len() > 1 => (OutboxEvent::Lost, delay_for(r.attempts, None)),
            OutboxEvent::Throttled | OutboxEvent::Lost => (event, delay_for(r.attempts, retry_after)),
            e => (e, 0),
        };
        advance(&mut *tx, r, event, delay, status, message.as_deref()).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// A pending row sent, or an unconfirmed row read back.
async fn one(client: &Client, r: Row) -> Result<(), ServiceError> {
    let db = client.db();
    let pid = prolific_id(db, r.study).await?;
    if r.state == OutboxState::Unconfirmed {
        // A draft whose answer was lost: found by its internal name, with the id Prolific gave it.
        let found = match &r.remote {
            Remote::CreateStudy { internal_name, body } => {
                match find_draft(client, internal_name, body["external_study_url"].as_str()).await {
                    Ok(found) => found,
                    Err(e) => {
                        // The read-back below looks again and says what it found.
                        tracing::warn!(study = %r.study, error = %e, "looking for a lost draft failed");
                        None
                    }
                }
            }
            _ => None,
        };
        let event = match (&found, read_back(client, &r, pid.as_deref()).await) {
            (Some(_), _) => OutboxEvent::ReadBackApplied,
            (None, Ok(Some(Found::Applied))) if !matches!(r.remote, Remote::CreateStudy { .. }) => {
                OutboxEvent::ReadBackApplied
            }
            (None, Ok(Some(Found::Moot))) => OutboxEvent::Moot,
            (None, Ok(Some(_))) => OutboxEvent::ReadBackAbsent,
            (None, Ok(None)) => OutboxEvent::Lost,
            (None, Err(e)) => {
                tracing::warn!(row = r.id, error = %e, "reading back an unconfirmed Prolific action");
                OutboxEvent::Lost
            }
        };
        let delay = if event == OutboxEvent::Lost { reread_after(&r) } else { 0 };
        let mut tx = crate::store::db::begin_write(db).await?;
        // Another sender moved the row meanwhile: its outcome stands, this one is dropped.
        // Said in words: "Lost" read as "not paid" would invite a second pay by hand.
        let said = match event {
            OutboxEvent::ReadBackApplied => "read back: applied at Prolific",
            OutboxEvent::ReadBackAbsent => "read back: not at Prolific, to be sent again",
            OutboxEvent::Moot => "read back: can no longer apply",
            _ => "read back: not known yet (read again later; never sent again meanwhile)",
        };
        if !advance(&mut *tx, &r, event, delay, None, Some(said)).await? {
            return Ok(());
        }
        if event == OutboxEvent::ReadBackApplied {
            applied(&mut tx, &r, found.map(|id| json!({ "id": id })).as_ref()).await?;
        }
        tx.commit().await?;
        return Ok(());
    }
    // A draft made before a crash is found by its internal name, never made twice.
    if let Remote::CreateStudy { internal_name, body } = &r.remote {
        if let Some(found) = find_draft(client, internal_name, body["external_study_url"].as_str()).await? {
            let mut tx = crate::store::db::begin_write(db).await?;
            if !advance(&mut *tx, &r, OutboxEvent::Claim, 0, None, None).await? {
                return Ok(());
            }
            applied(&mut tx, &r, Some(&json!({ "id": found }))).await?;
            let c = claimed(&r);
            advance(&mut *tx, &c, OutboxEvent::Answered, 0, None, Some("found the draft made before")).await?;
            tx.commit().await?;
            return Ok(());
        }
    }
    // A raise a larger one overtook, a transition the study is through: done, never sent.
    if let Some(note) = super::moot::moot(client, &r, pid.as_deref()).await? {
        let mut tx = crate::store::db::begin_write(db).await?;
        if advance(&mut *tx, &r, OutboxEvent::Claim, 0, None, None).await? {
            advance(&mut *tx, &claimed(&r), OutboxEvent::Answered, 0, None, Some(&note)).await?;
        }
        tx.commit().await?;
        return Ok(());
    }
    let grace = super::readback::bonus_grace_ms();
    let in_doubt = "waiting: another pay of the same amount to the same submission is not confirmed yet";
    if super::outbox::bonus_in_doubt(db, &r, grace).await? {
        advance(db, &r, OutboxEvent::Wait, wait_ms(&r), None, Some(in_doubt)).await?;
        return Ok(());
    }
    let Some(r) = super::readback::bonuses_before(client, &r).await? else {
        let note = "waiting: reading what the submissions were paid before paying";
        advance(db, &r, OutboxEvent::Wait, wait_ms(&r), None, Some(note)).await?;
        return Ok(());
    };
    let (method, path, body) = match r.remote.request(pid.as_deref()) {
        Ok(req) => req,
        Err(_) => {
            advance(db, &r, OutboxEvent::Wait, wait_ms(&r), None, Some("waiting for the study's draft")).await?;
            return Ok(());
        }
    };
    if !super::outbox::claim_to_send(db, &r, grace, wait_ms(&r), in_doubt).await? {
        return Ok(());
    }
    let r = claimed(&r);
    let sent = client.call(method, &path, body.as_ref(), Some(r.id)).await;
    crash_point("sent", Some(r.remote.kind()));
    let overtaken = super::readback::raise_overtaken(client, &r, pid.as_deref(), &sent).await;
    let mut tx = crate::store::db::begin_write(db).await?;
    match (&sent, overtaken) {
        (Ok(reply), Some(places)) => {
            let note = format!("refused ({}): a larger raise was applied first", reply.status);
            // Stored as the places Prolific has, read back.
            let has = Row { remote: Remote::SetPlaces { total: places as u64 }, ..r };
            if advance(&mut *tx, &has, OutboxEvent::Answered, 0, Some(reply.status), Some(&note)).await? {
                applied(&mut tx, &has, None).await?;
            }
        }
        (Ok(reply), None) => {
            let event = event_for_status(Some(reply.status));
            let delay = match event {
                OutboxEvent::Throttled | OutboxEvent::Lost => delay_for(r.attempts, reply.retry_after_ms),
                _ => 0,
            };
            let message = (!reply.ok()).then(|| reply.message());
            // An answer that came after this sender's claim ran out: another
            // sender read the row back and acted on it (a bonus set-up made
            // again and paid); applying this one too would pay twice.
            if !advance(&mut *tx, &r, event, delay, Some(reply.status), message.as_deref()).await? {
                tracing::warn!(row = r.id, "a Prolific answer came after its claim ran out; the row was moved on");
                return Ok(());
            }
            if event == OutboxEvent::Answered {
                applied(&mut tx, &r, Some(&reply.body)).await?;
            }
        }
        (Err(e), _) => {
            advance(&mut *tx, &r, OutboxEvent::Lost, delay_for(r.attempts, None), None, Some(&e.to_string())).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// What a confirmed action changes in hardneg, in the transaction that marks it done.
async fn applied(tx: &mut sqlx::AnyConnection, r: &Row, answer: Option<&Value>) -> Result<(), ServiceError> {
    let answer_id = answer.and_then(|a| a.get("id")).and_then(Value::as_str).map(str::to_string);
    match &r.remote {
        Remote::CreateStudy { .. } => {
            let id = answer_id.or_else(|| r.remote_id.clone());
            let id = id.ok_or_else(|| ServiceError::Internal("Prolific's new study has no id".into()))?;
            sqlx::query("UPDATE prolific_studies SET prolific_id = $1, status = 'UNPUBLISHED' WHERE study_id = $2")
                .bind(&id)
                .bind(r.study)
                .execute(&mut *tx)
                .await?;
            set_remote_id(&mut *tx, r.id, &id).await?;
        }
        Remote::SetPlaces { total } => {
            sqlx::query("UPDATE prolific_studies SET places = $1 WHERE study_id = $2 AND places < $3")
                .bind(*total as i64)
                .bind(r.study)
                .bind(*total as i64)
                .execute(&mut *tx)
                .await?;
        }
        Remote::BonusSetup { round, bonuses } => {
            // The lost answer of a set-up leaves an unpaid set-up at Prolific: harmless, never paid.
            let Some(bulk) = answer_id else {
                return Err(ServiceError::Internal("a confirmed bonus set-up without its id".into()));
            };
            set_remote_id(&mut *tx, r.id, &bulk).await?;
            for (sub, _) in bonuses {
                sqlx::query(
                    "UPDATE prolific_bonuses SET state = 'set_up', bulk_id = $1
                     WHERE study_id = $2 AND submission_id = $3 AND round = $4 AND state = 'planned'",
                )
                .bind(&bulk)
                .bind(r.study)
                .bind(sub)
                .bind(round)
                .execute(&mut *tx)
                .await?;
            }
            let (round, bonuses) = (round.clone(), bonuses.clone());
            let pay = Remote::BonusPay { bulk_id: bulk.clone(), round, bonuses, seen_before: None };
            super::outbox::enqueue(&mut *tx, r.study, &format!("bonus_pay:{bulk}"), &pay).await?;
        }
        Remote::BonusPay { bulk_id, round, .. } => {
            sqlx::query(
                "UPDATE prolific_bonuses SET state = 'paid' WHERE study_id = $1 AND bulk_id = $2 AND round = $3",
            )
            .bind(r.study)
            .bind(bulk_id)
            .bind(round)
            .execute(&mut *tx)
            .await?;
        }
        // What the read-back saw, before the next sync does: a group add waits on it.
        Remote::Approve { submission } | Remote::Reject { submission, .. } => {
            let approved = matches!(r.remote, Remote::Approve { .. });
            sqlx::query(
                "UPDATE prolific_submissions SET status = $1 WHERE study_id = $2 AND submission_id = $3
                   AND status NOT IN ('APPROVED', 'PARTIALLY APPROVED', 'REJECTED')",
            )
            .bind(if approved { "APPROVED" } else { "REJECTED" })
            .bind(r.study)
            .bind(submission)
            .execute(&mut *tx)
            .await?;
        }
        Remote::Transition { .. } | Remote::RequestReturn { .. } | Remote::GroupAdd { .. } => {}
    }
    Ok(())
}

async fn set_remote_id(tx: &mut sqlx::AnyConnection, row: i64, id: &str) -> Result<(), ServiceError> {
    sqlx::query("UPDATE prolific_outbox SET remote_id = $1 WHERE id = $2").bind(id).bind(row).execute(&mut *tx).await?;
    Ok(())
}
