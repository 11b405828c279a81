//! The durable outbox (docs/prolific.md, "Exactly once"): a remote action
//! is a `prolific_outbox` row, written with its idempotency key before
//! anything is sent; a sender claims it (committed) before sending, and it
//! is done only when Prolific's answer or a read-back confirms it. A row
//! whose answer was lost, or whose sender died, is read back before it may
//! be sent again (`domain::prolific::outbox` is the state machine).
use super::client::now_ms;
use super::remote::Remote;
use crate::domain::ids::StudyId;
use crate::domain::prolific::outbox::{OutboxEvent, OutboxState};
use crate::error::ServiceError;
use sqlx::AnyPool;

/// A claim outlasts one call (`HARDNEG_PROLIFIC_CLAIM_MS`, default the
/// call's time-out and a minute): a row still `sending` after it lost its sender.
fn claim_ms() -> i64 {
    std::env::var("HARDNEG_PROLIFIC_CLAIM_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(super::client::call_timeout().as_millis() as i64 + 60_000)
}

#[derive(Debug, Clone)]
pub struct Row {
    pub id: i64,
    pub study: StudyId,
    pub remote: Remote,
    pub state: OutboxState,
    pub attempts: i64,
    pub remote_id: Option<String>,
    /// When the row was last sent (ms), for a bonus pay's grace period.
    pub sent_at: Option<i64>,
    /// Prolific's last answer's status, if one came.
    pub last_status: Option<i64>,
    /// When the row was written (ms): how long it has waited.
    pub created_at: i64,
}

/// Writes `remote` for `study` unless a row with the same key exists
/// (then nothing changes: the first intent stands). Returns whether it was new.
pub async fn enqueue(
    db: impl sqlx::AnyExecutor<'_>,
    study: StudyId,
    key: &str,
    remote: &Remote,
) -> Result<bool, ServiceError> {
    let now = now_ms();
    let done = sqlx::query(
        "INSERT INTO prolific_outbox (study_id, action, idem_key, payload, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', $5, $6) ON CONFLICT (idem_key) DO NOTHING",
    )
    .bind(study)
    .bind(remote.kind())
    .bind(key)
    .bind(serde_json::to_string(remote)?)
    .bind(now)
    .bind(now)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Makes one `failed` row pending again, as [`retry_failed`] does: the
/// researcher asked for the same thing again (Publish pressed after a refusal).
pub async fn retry_failed_row(db: &AnyPool, key: &str) -> Result<bool, ServiceError> {
    let done = sqlx::query(
        "UPDATE prolific_outbox SET state = 'pending', attempts = 0, not_before = 0, last_error = NULL, updated_at = $1
         WHERE idem_key = $2 AND state = 'failed'",
    )
    .bind(now_ms())
    .bind(key)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Makes the study's `failed` rows pending again (`flush --retry-failed`):
/// Prolific refused each with a 4xx, so none was applied, and each is sent
/// as if new (a bonus pay refused for the workspace's balance, say). Not a
/// group add: the next `decide` asks again for those a failed one left out,
/// and a revived one would add people a later decision added already.
pub async fn retry_failed(db: &AnyPool, study: StudyId) -> Result<u64, ServiceError> {
    let done = sqlx::query(
        "UPDATE prolific_outbox SET state = 'pending', attempts = 0, not_before = 0, last_error = NULL, updated_at = $1
         WHERE study_id = $2 AND state = 'failed' AND action <> 'group_add'",
    )
    .bind(now_ms())
    .bind(study)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// A test-only hook (`HARDNEG_TEST_CRASH_AFTER`): the process aborts at
/// the named point, as a SIGKILL would stop it. `outbox_written` right
/// after a decision's rows are committed, before any is sent; `sent` (or
/// `sent:<action>`) after Prolific answered and before the answer is stored.
pub fn crash_point(point: &str, action: Option<&str>) {
    let Ok(want) = std::env::var("HARDNEG_TEST_CRASH_AFTER") else { return };
    let (name, only) = want.split_once(':').map_or((want.as_str(), None), |(n, a)| (n, Some(a)));
    if name == point && (only.is_none() || only == action) {
        eprintln!("HARDNEG_TEST_CRASH_AFTER={want}: aborting");
        std::process::abort();
    }
}

type RawRow = (i64, i64, String, String, i64, Option<String>, Option<i64>, Option<i64>, i64);

fn row(r: RawRow) -> Result<Row, ServiceError> {
    let (id, study, payload, state, attempts, remote_id, sent_at, last_status, created_at) = r;
    Ok(Row {
        id,
        study: StudyId::new(study),
        remote: serde_json::from_str(&payload)?,
        state: OutboxState::parse(&state).ok_or_else(|| ServiceError::Internal(format!("outbox state {state:?}")))?,
        attempts,
        remote_id,
        sent_at,
        last_status,
        created_at,
    })
}

const COLUMNS: &str = "id, study_id, payload, state, attempts, remote_id, sent_at, last_status, created_at";

/// Moves a row by `event` (checked against the state machine) and records
/// what happened; false when another sender moved it first. The row must
/// still be as `r` read it, in state and in sends (`attempts`): a decision
/// made on a read-back that a later send overtook (unconfirmed, sent again
/// by another worker, unconfirmed again) must not move the row, or a bonus
/// pay would be sent a second time without reading back the first.
pub async fn advance(
    db: impl sqlx::AnyExecutor<'_>,
    r: &Row,
    event: OutboxEvent,
    delay_ms: i64,
    status: Option<u16>,
    error: Option<&str>,
) -> Result<bool, ServiceError> {
    let next = r
        .state
        .after(event)
        .ok_or_else(|| ServiceError::Internal(format!("outbox row {}: {:?} after {:?}", r.id, event, r.state)))?;
    let now = now_ms();
    let claimed_until = if next == OutboxState::Sending { now + claim_ms() } else { 0 };
    let attempts = if event == OutboxEvent::Claim { r.attempts + 1 } else { r.attempts };
    let moved = sqlx::query(
        "UPDATE prolific_outbox SET state = $1, attempts = $2, not_before = $3, claimed_until = $4,
                last_status = coalesce($5, last_status), last_error = $6, updated_at = $7,
                sent_at = coalesce($8, sent_at)
         WHERE id = $9 AND state = $10 AND attempts = $11",
    )
    .bind(next.as_str())
    .bind(attempts)
    .bind(now + delay_ms)
    .bind(claimed_until)
    .bind(status.map(i64::from))
    .bind(error)
    .bind(now)
    .bind((event == OutboxEvent::Claim).then_some(now))
    .bind(r.id)
    .bind(r.state.as_str())
    .bind(r.attempts)
    .execute(db)
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// Rows whose sender died become unconfirmed (to be read back).
pub(super) async fn expire_claims(db: &AnyPool) -> Result<(), ServiceError> {
    sqlx::query(
        "UPDATE prolific_outbox SET state = 'unconfirmed', last_error = 'the sender stopped before the answer was stored'
         WHERE state = 'sending' AND claimed_until < $1",
    )
    .bind(now_ms())
    .execute(db)
    .await?;
    Ok(())
}

pub(super) async fn due(db: &AnyPool, study: Option<StudyId>) -> Result<Vec<Row>, ServiceError> {
    let rows: Vec<RawRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM prolific_outbox
         WHERE state IN ('pending', 'unconfirmed') AND not_before <= $1 AND ($2 < 0 OR study_id = $3)
         ORDER BY id LIMIT 5000"
    ))
    .bind(now_ms())
    .bind(study.map_or(-1, |s| s.get()))
    .bind(study.map_or(-1, |s| s.get()))
    .fetch_all(db)
    .await?;
    rows.into_iter().map(row).collect()
}

/// Whether another bonus pay of the study is in doubt that a read-back
/// could take for `r`'s: the same amount to one of the same submissions,
/// sent and not confirmed (`sending`, `unconfirmed`) or accepted less than
/// `grace_ms` ago (Prolific pays asynchronously). Prolific's
/// `bonus_payments` are bare amounts, so while such a pay is in doubt,
/// `r` waits (an audit had one lost pay read back as another's, and paid
/// twice).
pub(super) async fn bonus_in_doubt(
    db: impl sqlx::AnyExecutor<'_>,
    r: &Row,
    grace_ms: i64,
) -> Result<bool, ServiceError> {
    let Remote::BonusPay { bonuses: mine, .. } = &r.remote else { return Ok(false) };
    let rows: Vec<RawRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM prolific_outbox
         WHERE study_id = $1 AND id <> $2 AND action = 'bonus_pay'
           AND (state IN ('sending', 'unconfirmed') OR (state = 'done' AND sent_at > $3))"
    ))
    .bind(r.study)
    .bind(r.id)
    .bind(now_ms() - grace_ms)
    .fetch_all(db)
    .await?;
    for other in rows.into_iter().map(row) {
        if let Remote::BonusPay { bonuses, .. } = other?.remote {
            if bonuses.iter().any(|b| mine.contains(b)) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Claims `r` for sending; false when another sender moved it first. A
/// bonus pay is claimed only while no other pay it could be taken for is
/// in doubt, checked in the claim's own write transaction: two senders that
/// each checked before the other claimed would otherwise both send, and a
/// lost answer read back against a snapshot taken before the other's pay
/// would count that pay as this one. In doubt, the pay waits `wait_ms`,
/// noted `why`.
pub(super) async fn claim_to_send(
    db: &AnyPool,
    r: &Row,
    grace_ms: i64,
    wait_ms: i64,
    why: &str,
) -> Result<bool, ServiceError> {
    if !matches!(r.remote, Remote::BonusPay { .. }) {
        return advance(db, r, OutboxEvent::Claim, 0, None, None).await;
    }
    let mut tx = crate::store::db::begin_write(db).await?;
    let claimed = if bonus_in_doubt(&mut *tx, r, grace_ms).await? {
        advance(&mut *tx, r, OutboxEvent::Wait, wait_ms, None, Some(why)).await?;
        false
    } else {
        advance(&mut *tx, r, OutboxEvent::Claim, 0, None, None).await?
    };
    tx.commit().await?;
    Ok(claimed)
}

/// The earliest time (ms) an open row may be tried again, if any is open.
pub(super) async fn next_due(db: &AnyPool, study: Option<StudyId>) -> Result<Option<i64>, ServiceError> {
    let at: Option<i64> = sqlx::query_scalar(
        "SELECT min(CASE WHEN state = 'sending' THEN claimed_until ELSE not_before END) FROM prolific_outbox
         WHERE state IN ('pending', 'unconfirmed', 'sending') AND ($1 < 0 OR study_id = $2)",
    )
    .bind(study.map_or(-1, |s| s.get()))
    .bind(study.map_or(-1, |s| s.get()))
    .fetch_one(db)
    .await?;
    Ok(at)
}

/// Open rows (not done, not failed) of a study.
pub async fn open_rows(db: &AnyPool, study: StudyId) -> Result<i64, ServiceError> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM prolific_outbox WHERE study_id = $1 AND state IN ('pending', 'sending', 'unconfirmed')",
    )
    .bind(study)
    .fetch_one(db)
    .await?)
}

pub fn delay_for(attempts: i64, retry_after_ms: Option<u64>) -> i64 {
    super::client::backoff().delay_ms(attempts.max(1) as u32, rand::random::<f64>(), retry_after_ms) as i64
}

/// When to read an unconfirmed row back again, its effect not known yet
/// (a bonus pay in its grace period): later the longer ago it was sent.
pub fn reread_after(r: &Row) -> i64 {
    let since_sent = r.sent_at.map_or(0, |at| super::client::now_ms() - at);
    super::client::backoff().reread_ms(r.attempts.max(1) as u32, since_sent, rand::random::<f64>()) as i64
}

/// The outbox of a study for the status page: action, state, tries, Prolific's last word.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OutboxLine {
    pub id: i64,
    pub action: String,
    pub state: String,
    pub attempts: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
}

impl OutboxLine {
    /// The line as the command line prints it: "outbox row 6 transition failed after 1 try: …".
    pub fn sentence(&self) -> String {
        let state = if self.state == "failed" { "failed".to_string() } else { format!("is {}", self.state) };
        let tries = if self.attempts == 1 { "1 try".to_string() } else { format!("{} tries", self.attempts) };
        let why = self.last_error.as_deref().unwrap_or("no answer yet");
        format!("outbox row {} {} {state} after {tries}: {why}", self.id, self.action)
    }
}

type LineRow = (i64, String, String, i64, Option<i64>, Option<String>);

pub async fn lines(db: &AnyPool, study: StudyId, only_open: bool) -> Result<Vec<OutboxLine>, ServiceError> {
    let rows: Vec<LineRow> = sqlx::query_as(
        "SELECT id, action, state, attempts, last_status, last_error FROM prolific_outbox
         WHERE study_id = $1 AND ($2 = 0 OR state <> 'done') ORDER BY id",
    )
    .bind(study)
    .bind(i64::from(only_open))
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, action, state, attempts, last_status, last_error)| OutboxLine {
            id,
            action,
            state,
            attempts,
            last_status,
            last_error,
        })
        .collect())
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
