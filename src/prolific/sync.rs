//! Sync and reconcile: Prolific's submissions of a study, paged into
//! `prolific_submissions`; returned and timed-out submissions free their
//! hardneg place as the lease reclaim does (unless every answer is in);
//! the study's status, places and counts beside them.
use super::actions::prolific_id;
use super::client::Client;
use crate::domain::ids::StudyId;
use crate::domain::prolific::status::{place_action, PlaceAction, SubmissionStatus};
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;

/// Submissions per page asked for.
pub const PAGE_SIZE: usize = 500;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncReport {
    pub pages: u32,
    pub submissions: usize,
    /// hardneg places freed because Prolific reported a return or a time-out.
    pub freed: usize,
    pub seconds: f64,
    /// The new total of places, when `auto_increase` raised them after this sync.
    #[serde(default)]
    pub places_raised_to: Option<u64>,
    /// The study was stopped on Prolific after this sync: hardneg needs nobody more.
    #[serde(default)]
    pub stopped: bool,
}

pub async fn sync(client: &Client, study: StudyId) -> Result<SyncReport, ServiceError> {
    let started = std::time::Instant::now();
    // When this sync read Prolific, before its first request: two syncs at
    // once (two servers, a CLI beside the loop) may answer in either order,
    // and an older read must not overwrite a newer one (`seen_at` is ms).
    let read_ms = crate::store::db::now_millis();
    let db = client.db();
    let pid = prolific_id(db, study)
        .await?
        .ok_or_else(|| ServiceError::Invalid(format!("study {study} is not on Prolific yet: publish it first")))?;
    let mut report = SyncReport::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut rows: Vec<Value> = Vec::new();
    let mut longest = 0;
    for page in 1u32.. {
        // The reference's paginated list (`page`, `page_size`); its per-study list documents no paging.
        let path = format!("/api/v1/submissions/?study={pid}&page={page}&page_size={PAGE_SIZE}");
        let body = match client.expect_found("GET", &path, None).await? {
            Some(body) => body,
            // A page past the last (a full last page and no `_links`): the list is done.
            None if page > 1 => break,
            None => return Err(ServiceError::NotFound(format!("Prolific has no study {pid}"))),
        };
        report.pages = page;
        let results = body["results"].as_array().cloned().unwrap_or_default();
        let n = results.len();
        let mut new = 0;
        for s in results {
            if let Some(id) = s["id"].as_str() {
                if seen.insert(id.to_string()) {
                    new += 1;
                    rows.push(s);
                }
            }
        }
        // The next page's link when Prolific gives one; else a page shorter than the longest
        // yet is the last (a server may cap page_size below ours: its full pages are shorter
        // than 500, so a first page asks for one more). A server that ignores paging answers
        // every page alike: a page that brings nothing new ends it too.
        longest = longest.max(n);
        let link = body.get("_links").and_then(|l| l.get("next")).map(|next| next["href"].is_string());
        let more = more_pages(link, body["next"].is_string(), n, longest);
        if n == 0 || new == 0 || !more {
            break;
        }
    }
    report.submissions = rows.len();
    let mut tx = crate::store::db::begin_write(db).await?;
    for s in &rows {
        // A field the row leaves out (all but id, status, study_id and
        // started_at are optional in the reference, and a list may leave out
        // more) is not known yet: what was stored stays (docs/prolific.md §6).
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
        let asked_back = s.get("return_requested").map(|r| i64::from(!r.is_null()));
        sqlx::query(
            "INSERT INTO prolific_submissions (study_id, submission_id, participant_id, status, study_code, return_requested, seen_at)
             VALUES ($1, $2, coalesce($3, ''), coalesce($4, 'UNKNOWN'), $5, coalesce($6, 0), $7)
             ON CONFLICT (study_id, submission_id) DO UPDATE SET
                participant_id = coalesce($3, prolific_submissions.participant_id),
                status = coalesce($4, prolific_submissions.status),
                study_code = CASE WHEN $8 = 1 THEN excluded.study_code ELSE prolific_submissions.study_code END,
                return_requested = coalesce($6, prolific_submissions.return_requested), seen_at = excluded.seen_at
             WHERE prolific_submissions.seen_at <= excluded.seen_at",
        )
        .bind(study)
        .bind(s["id"].as_str().unwrap_or_default())
        .bind(text(&s["participant_id"]).or_else(|| text(&s["participant"])))
        .bind(text(&s["status"]))
        .bind(s["study_code"].as_str())
        .bind(asked_back)
        .bind(read_ms)
        .bind(i64::from(s.get("study_code").is_some()))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    // Lease times follow the lease clock (which tests may move), as every other end of a place.
    report.freed = free_places(db, study, crate::store::clock::Clock::quiet_from_env().now()).await?;
    let study_read = crate::store::db::now_secs();
    let study_body = client.expect("GET", &format!("/api/v1/studies/{pid}/"), None).await?;
    let counts = client.expect("GET", &format!("/api/v1/studies/{pid}/submissions/counts/"), None).await?;
    // A 2xx that is no study (a proxy's page, a redirect elsewhere) must not blank the status.
    if study_body["status"].as_str().is_none() || !counts.is_object() {
        return Err(ServiceError::Unavailable(format!(
            "Prolific's answer for study {pid} is not a study with its counts (no status); nothing stored"
        )));
    }
    sqlx::query(
        "UPDATE prolific_studies SET status = $1, places = coalesce($2, places), counts = $3, synced_at = $4
         WHERE study_id = $5 AND coalesce(synced_at, 0) <= $4",
    )
    .bind(study_body["status"].as_str())
    .bind(study_body["total_available_places"].as_f64().map(|p| p as i64))
    .bind(counts.to_string())
    .bind(study_read)
    .bind(study)
    .execute(db)
    .await?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Active hardneg places whose Prolific submission was returned or timed
/// out go back to the pool (lease `returned` / `timed_out`), unless every
/// answer of the bundle is in. Returns how many.
async fn free_places(db: &sqlx::AnyPool, study: StudyId, now: i64) -> Result<usize, ServiceError> {
    type Row = (i64, String, Option<String>, i64, i64);
    // Joined by PROLIFIC_PID: the link's SESSION_ID is only what it said.
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT p.user_id, ps.status, l.state, coalesce(pa.done, 0), coalesce(pa.total, 0)
         FROM prolific_submissions ps
         JOIN participants p ON p.study_id = ps.study_id AND p.platform_pid = ps.participant_id
         JOIN leases l ON l.user_id = p.user_id
         LEFT JOIN participations pa ON pa.study_id = p.study_id AND pa.user_id = p.user_id
         WHERE ps.study_id = $1 AND ps.status IN ('RETURNED', 'TIMED-OUT') AND l.state = 'active'",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut freed = 0;
    let mut tx = crate::store::db::begin_write(db).await?;
    for (user, status, lease, done, total) in rows {
        let state = match place_action(SubmissionStatus::parse(&status), lease.as_deref(), total > 0 && done >= total) {
            PlaceAction::Keep => continue,
            PlaceAction::Return => "returned",
            PlaceAction::TimeOut => "timed_out",
        };
        let moved = sqlx::query("UPDATE leases SET state = $1, ended_at = $2 WHERE user_id = $3 AND state = 'active'")
            .bind(state)
            .bind(now)
            .bind(user)
            .execute(&mut *tx)
            .await?;
        freed += moved.rows_affected() as usize;
    }
    if freed > 0 {
        crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    }
    tx.commit().await?;
    Ok(freed)
}

/// Whether a list has another page: its `_links.next` when given, else a
/// `next` field, else whether this page (`n` rows) is as long as the longest yet.
fn more_pages(link_next: Option<bool>, next_field: bool, n: usize, longest: usize) -> bool {
    link_next.unwrap_or(next_field || n >= longest)
}

#[cfg(test)]
mod tests {
    use super::more_pages;

    #[test]
    fn without_links_a_page_shorter_than_the_longest_is_the_last() {
        // A server that caps page_size at 100: full pages go on, a short one ends.
        assert!(more_pages(None, false, 100, 100));
        assert!(!more_pages(None, false, 37, 100));
        // A first page may be a capped full one: one more page is asked for.
        assert!(more_pages(None, false, 37, 37));
        // Links decide when given.
        assert!(!more_pages(Some(false), false, 500, 500));
        assert!(more_pages(Some(true), false, 3, 500));
        assert!(more_pages(None, true, 3, 500));
    }
}
