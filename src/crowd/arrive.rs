//! Arriving by link. [`preview`] only reads (what `GET /join/{token}` shows);
//! [`arrive`] is one `BEGIN IMMEDIATE` transaction: reclaim overdue leases,
//! pick the bundle, create the participant, its lease, tasks and
//! participation. One writer at a time decides, so a bundle never gets more
//! than its wanted copies however many arrive at once. A study with a
//! comprehension check leases nothing here: the place is taken once the
//! participant passes it (`crowd::comprehension`).
use super::place::{loads, reclaim_and_pick, take_place};
use super::{link_in, unknown_token, Arrival, LinkRow, Preview, LINK_SL_COLUMNS};
use crate::accounts::SessionUser;
use crate::domain::crowd::bundles::open_places;
use crate::domain::crowd::ids::{participant_username, PlatformIds};
use crate::domain::crowd::lease::LeaseState;
use crate::domain::ids::UserId;
use crate::domain::role::Role;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::store::ids::Flag;
use sqlx::{AnyConnection, Row};

/// A password hash no password verifies: not a PHC string.
const NO_PASSWORD: &str = "!participant";

/// The ids of the link's query, checked; None for an anonymous arrival the spec allows.
fn checked_ids(link: &LinkRow, ids: Option<&PlatformIds>) -> Result<Option<PlatformIds>, ServiceError> {
    match ids {
        Some(ids) => Ok(Some(ids.clone())),
        None if link.settings.allow_anonymous => Ok(None),
        None => Err(ServiceError::Invalid(
            "this link needs your participant id (PROLIFIC_PID or pid in the address)".into(),
        )),
    }
}

/// A participant already known by platform id: its user id, username, lease
/// state (None before it holds a bundle), whether it was screened out and
/// whether it passed the comprehension check.
struct Known {
    id: UserId,
    username: String,
    lease: Option<LeaseState>,
    screened_out: bool,
    /// Screened out by the comprehension check (else by attention checks).
    by_comprehension: bool,
    passed_check: bool,
}

/// The link a token opens, the participant already known under it by
/// platform id (None for `pid` None), and the number a new participant
/// would get: one statement where three were, as every arrival reads them
/// under the writers' lock. NotFound for a malformed or unknown token.
async fn link_and_known(
    conn: &mut AnyConnection,
    token: &str,
    pid: Option<&str>,
) -> Result<(LinkRow, Option<Known>, i64), ServiceError> {
    if !crate::domain::crowd::ids::is_token(token) {
        return Err(unknown_token());
    }
    let sql = format!(
        "SELECT {LINK_SL_COLUMNS}, p.user_id, u.username, l.state, p.screened_out_at IS NOT NULL AS screened_out,
                p.screened_out_reason, p.comprehension_passed_at IS NOT NULL AS passed_check,
                (SELECT coalesce(max(q.number), 0) + 1 FROM participants q WHERE q.study_id = sl.study_id) AS next_number
         FROM study_links sl
         LEFT JOIN participants p ON p.study_id = sl.study_id AND p.platform_pid = $2
         LEFT JOIN users u ON u.id = p.user_id LEFT JOIN leases l ON l.user_id = p.user_id
         WHERE sl.token = $1"
    );
    let row = sqlx::query(&sql).bind(token).bind(pid).fetch_optional(&mut *conn).await?.ok_or_else(unknown_token)?;
    let link = link_in(&row)?;
    let known = match row.try_get::<Option<UserId>, _>("user_id")? {
        None => None,
        Some(id) => {
            let lease: Option<String> = row.try_get("state")?;
            Some(Known {
                id,
                username: row.try_get("username")?,
                lease: lease.as_deref().map(super::lease_state).transpose()?,
                screened_out: row.try_get::<Flag, _>("screened_out")?.0,
                by_comprehension: row.try_get::<Option<String>, _>("screened_out_reason")?.as_deref()
                    == Some("comprehension"),
                passed_check: row.try_get::<Flag, _>("passed_check")?.0,
            })
        }
    };
    Ok((link, known, row.try_get("next_number")?))
}

/// What a participant who arrived before sees; None: it resumes.
fn again(link: &LinkRow, k: &Known) -> Option<Arrival> {
    let screened_out = || {
        let c = link.screen_out();
        Some(Arrival::ScreenedOut { comprehension: k.by_comprehension, code: c.code, url: c.url })
    };
    if k.screened_out {
        return screened_out();
    }
    match k.lease? {
        // A discarded copy was finished: its participant sees its code again.
        LeaseState::Completed | LeaseState::Extra | LeaseState::Discarded => {
            let c = link.completion();
            Some(Arrival::Finished { code: c.code, url: c.url })
        }
        LeaseState::Returned => Some(Arrival::Returned),
        LeaseState::ScreenedOut => screened_out(),
        LeaseState::Active | LeaseState::TimedOut => None,
    }
}

/// What `GET /join/{token}` shows for these ids; changes nothing.
pub async fn preview(state: &AppState, token: &str, ids: Option<&PlatformIds>) -> Result<Preview, ServiceError> {
    let mut conn = state.db.acquire().await?;
    let (link, known, _) = link_and_known(&mut conn, token, ids.map(|i| i.pid.as_str())).await?;
    if ids.is_none() && !link.settings.allow_anonymous {
        return Ok(Preview::NeedsId);
    }
    if let Some(k) = known {
        return Ok(match again(&link, &k) {
            Some(Arrival::Finished { code, url }) => Preview::Finished { code, url },
            Some(Arrival::ScreenedOut { comprehension, code, url }) => {
                Preview::ScreenedOut { comprehension, code, url }
            }
            Some(_) => Preview::Returned,
            None if k.lease.is_some() => {
                Preview::Resume { study: link.study_id, place: true, late: k.lease == Some(LeaseState::TimedOut) }
            }
            // Passed the check when every place was taken: the full page again.
            None if k.passed_check => Preview::Full { code: link.full_code.clone() },
            // Not through the comprehension check yet: no place is held.
            None => Preview::Resume { study: link.study_id, place: false, late: false },
        });
    }
    if !link.open {
        return Ok(Preview::Closed);
    }
    if open_places(&loads(&mut conn, link.study_id, state.crowd.clock.now()).await?) == 0 {
        return Ok(Preview::Full { code: link.full_code.clone() });
    }
    let study_name: String =
        sqlx::query_scalar("SELECT name FROM studies WHERE id = $1").bind(link.study_id).fetch_one(&mut *conn).await?;
    Ok(Preview::Welcome { study_name, consent: link.settings.consent.clone() })
}

/// Arrives by link with the platform's ids (None: anonymous, if the spec allows).
pub async fn arrive(state: &AppState, token: &str, ids: Option<&PlatformIds>) -> Result<Arrival, ServiceError> {
    arrive_consenting(state, token, ids, false, None).await
}

/// As [`arrive`]; `consented`: the join form's consent box was ticked, and
/// is recorded in the same transaction (one commit less per arrival);
/// `from`: the client's address, for the arrival bound (memory only).
pub async fn arrive_consenting(
    state: &AppState,
    token: &str,
    ids: Option<&PlatformIds>,
    consented: bool,
    from: Option<std::net::IpAddr>,
) -> Result<Arrival, ServiceError> {
    // Arrivals take the write lock one at a time anyway; queueing them in
    // process (with the answer writer's batches) spares SQLite's busy-wait.
    refuse_while_unreachable()?;
    let _one_at_a_time = state.writer.exclusive().await;
    refuse_while_unreachable()?;
    let mut tx = match crate::store::db::begin_write(&state.db).await {
        Ok(tx) => tx,
        Err(e) => {
            if crate::store::health::out_of_reach(&e) {
                let until = crate::store::db::now_millis() + UNREACHABLE_WAIT_MS;
                UNREACHABLE_UNTIL_MS.fetch_max(until, std::sync::atomic::Ordering::AcqRel);
            }
            return Err(e.into());
        }
    };
    let (link, known, number) = link_and_known(&mut tx, token, ids.map(|i| i.pid.as_str())).await?;
    let ids = checked_ids(&link, ids)?;
    let study = link.study_id;
    if let Some(k) = known {
        if consented {
            sqlx::query("UPDATE participants SET consented_at = coalesce(consented_at, $1) WHERE user_id = $2")
                .bind(state.crowd.clock.now())
                .bind(k.id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        return Ok(again(&link, &k).unwrap_or(Arrival::Admitted {
            user: SessionUser { id: k.id, username: k.username, role: Role::Participant, epoch: 0 },
            study,
            resumed: true,
        }));
    }
    if !link.open {
        return Ok(Arrival::Closed);
    }
    // A kind may keep some people out (HNC: a writer of the pairs a validation study checks).
    if let Some(ids) = &ids {
        let meta = crate::studies::meta::study_meta(state, study).await?;
        if let Some(keep_out) = crate::kinds::REGISTRY.server(meta.kind).and_then(|s| s.keep_out) {
            if keep_out(&mut tx, &meta, &ids.pid).await? {
                return Ok(Arrival::Writer);
            }
        }
    }
    let now = state.crowd.clock.now();
    let (Some(bundle), places) = reclaim_and_pick(&mut tx, study, now).await? else {
        tx.commit().await?; // keeps the reclaimed leases
        return Ok(Arrival::Full { code: link.full_code.clone() });
    };
    let without_place = arrivals_without_place(&mut tx, &link, now).await?;
    let since = now - i64::from(link.settings.time_limit_minutes) * 60;
    let from_address = from.map(|a| state.crowd.addresses.since(study, a, since));
    if !crate::domain::crowd::bundles::admits_another_arrival(without_place, places, from_address) {
        if let Some(turned_away) = turned_away_to_log(study.get(), now) {
            tracing::warn!(%study, without_place, places, turned_away, "arrivals turned away: too many recent arrivals hold no place");
        }
        tx.commit().await?;
        return Ok(Arrival::Full { code: link.full_code.clone() });
    }
    let (user_id, username) = new_participant(&mut tx, study, number, ids.as_ref(), now, consented).await?;
    // With a comprehension check the place is taken only once it is passed.
    if link.settings.checks.comprehension.is_empty() {
        take_place(&mut tx, state, &link, bundle, user_id, now).await?;
    }
    tx.commit().await?;
    if let Some(from) = from {
        state.crowd.addresses.record(study, from, now);
    }
    Ok(Arrival::Admitted {
        user: SessionUser { id: user_id, username, role: Role::Participant, epoch: 0 },
        study,
        resumed: false,
    })
}

/// The study's arrivals within the time limit that hold no place: returned
/// or screened out since, and, with a comprehension check, still at the
/// check or screened out by it. What bounds an anonymous flood of the link
/// ([`crate::domain::crowd::bundles::admits_another_arrival`]).
async fn arrivals_without_place(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    link: &super::LinkRow,
    now: i64,
) -> Result<i64, ServiceError> {
    // A lease ends its time limit after it was taken: one taken within the
    // time limit has not expired (an index range, not a scan).
    let ended: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM leases WHERE study_id = $1 AND state IN ('returned', 'screened_out') AND expires_at > $2",
    )
    .bind(link.study_id)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    if link.settings.checks.comprehension.is_empty() {
        return Ok(ended);
    }
    let since = now - i64::from(link.settings.time_limit_minutes) * 60;
    let no_lease: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM participants p WHERE p.study_id = $1 AND p.arrived_at > $2
           AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.user_id = p.user_id)",
    )
    .bind(link.study_id)
    .bind(since)
    .fetch_one(&mut **tx)
    .await?;
    Ok(ended + no_lease)
}

/// The participant's account and row: arrival `number` of the study, with
/// the platform's ids (an anonymous one gets an id of its own, so every row
/// has one) and, when the join form's box was ticked, its consent.
async fn new_participant(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    study: crate::domain::ids::StudyId,
    number: i64,
    ids: Option<&PlatformIds>,
    now: i64,
    consented: bool,
) -> Result<(UserId, String), ServiceError> {
    let username = participant_username(study.get(), number);
    let user_id = sqlx::query_scalar::<_, UserId>(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, 'participant', $2, $3) RETURNING id",
    )
    .bind(&username)
    .bind(NO_PASSWORD)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    // Anonymous participants get an id of their own, so every row has one.
    let pid = ids.map(|i| i.pid.clone()).unwrap_or_else(|| format!("anonymous-{number}"));
    sqlx::query(
        "INSERT INTO participants (user_id, study_id, number, platform_pid, platform_study, platform_session, arrived_at,
                                   consented_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(user_id)
    .bind(study)
    .bind(number)
    .bind(&pid)
    .bind(ids.and_then(|i| i.study.clone()))
    .bind(ids.and_then(|i| i.session.clone()))
    .bind(now)
    .bind(consented.then_some(now))
    .execute(&mut **tx)
    .await?;
    Ok((user_id, username))
}

/// After an arrival found no connection (PostgreSQL down: it waited the
/// pool's 3 s), the others are refused at once for as long again: queued
/// one at a time behind the write lock, each waited its own 3 s, so a
/// burst waited minutes for its 503 (audit AM: 3 s times the place in the queue).
const UNREACHABLE_WAIT_MS: i64 = 3_000;
static UNREACHABLE_UNTIL_MS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

fn refuse_while_unreachable() -> Result<(), ServiceError> {
    let until = UNREACHABLE_UNTIL_MS.load(std::sync::atomic::Ordering::Acquire);
    match until > 0 && crate::store::db::now_millis() < until {
        true => Err(ServiceError::Unavailable(crate::api_types::DB_UNREACHABLE.into())),
        false => Ok(()),
    }
}

/// Turned-away arrivals are logged once a minute per study, with their
/// count since the last line: one line each let an anonymous flood grow the
/// log without bound (audit AO: 234 bytes a request). Some(count) when due.
fn turned_away_to_log(study: i64, now: i64) -> Option<u64> {
    use crate::domain::log_tally::Tally;
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static SEEN: LazyLock<Mutex<HashMap<i64, Tally>>> = LazyLock::new(Default::default);
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).entry(study).or_default().count(now)
}

#[cfg(test)]
mod tests {
    #[test]
    fn turned_away_arrivals_are_logged_once_a_minute_per_study_with_their_count() {
        let (a, b) = (-101, -102);
        assert_eq!(super::turned_away_to_log(a, 1000), Some(1), "the first at once");
        assert_eq!((2..=5).filter_map(|i| super::turned_away_to_log(a, 1000 + i)).count(), 0);
        assert_eq!(super::turned_away_to_log(b, 1005), Some(1), "each study its own minute");
        assert_eq!(super::turned_away_to_log(a, 1059), None);
        assert_eq!(super::turned_away_to_log(a, 1060), Some(6), "the five held back and this one");
    }
}
