//! Deciding through the API (docs/prolific.md, "Decide"): the approve list
//! with each participant's Prolific submission gives one action each
//! (`domain::prolific::decide`); approvals go out in bulk, rejections one
//! at a time, screen-outs get a return request, finishers join the
//! benchmark's group. A dry run lists exactly the requests, sends nothing.
use super::actions::{prolific_id, Remote};
use super::outbox::{crash_point, enqueue};
use crate::domain::ids::{ParticipantId, StudyId};
use crate::domain::prolific::decide::{decide, Action, Person, BULK_APPROVE_MAX};
use crate::domain::prolific::status::SubmissionStatus;
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyPool;
use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecisionLine {
    pub participant: i64,
    pub platform_id: String,
    pub submission: Option<String>,
    pub prolific_status: Option<String>,
    pub status: String,
    pub decision: String,
    #[serde(flatten)]
    pub action: Action,
}

/// One request as it would be sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decisions {
    pub lines: Vec<DecisionLine>,
    /// Exactly what is (or, in a dry run, would be) sent.
    pub requests: Vec<Request>,
    /// Outbox rows written now (0 in a dry run, and for a decision already written).
    pub written: usize,
    /// Participants whose finished copies this decision discarded with
    /// their rejection: their answers no longer count (none in a dry run).
    #[serde(default)]
    pub discarded: Vec<i64>,
    /// Participants rejected now whose finished copies were kept, as a
    /// later study was built on this study's outcomes (none in a dry run).
    #[serde(default)]
    pub kept: Vec<i64>,
    /// When Prolific's statuses it read were synced (Unix seconds); None: never.
    pub synced_at: Option<i64>,
    /// Set when a dry run could not sync first: why, and that it read an older sync.
    pub stale: Option<String>,
}

/// Every participant's action, from stored rows (sync first for fresh statuses).
pub async fn lines(db: &AnyPool, study: StudyId) -> Result<Vec<DecisionLine>, ServiceError> {
    let list = crate::crowd::approve_list(db, crate::kinds::KINDS, study).await?;
    let messages: BTreeMap<String, String> =
        super::settings::settings(db, study).await.map(|s| s.2.rejection_messages).unwrap_or_default();
    let sessions: HashMap<i64, Option<String>> = sqlx::query_as::<_, (i64, Option<String>)>(&format!(
        "SELECT p.number, {} FROM participants p WHERE p.study_id = $1",
        super::SUBMISSION_OF_P
    ))
    .bind(study)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let subs: HashMap<String, (String, bool)> = sqlx::query_as::<_, (String, String, i64)>(
        "SELECT submission_id, status, return_requested FROM prolific_submissions WHERE study_id = $1",
    )
    .bind(study)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|(id, status, rr)| (id, (status, rr != 0)))
    .collect();
    Ok(list
        .into_iter()
        .map(|row| {
            let submission = sessions.get(&row.participant).cloned().flatten();
            let remote = submission.as_ref().and_then(|s| subs.get(s));
            let flags: Vec<String> = row.flags.iter().map(|f| f.as_str().to_string()).collect();
            let person = Person {
                status: &row.status,
                decision: row.decision,
                flags: &flags,
                prolific: remote.map(|(s, _)| SubmissionStatus::parse(s)),
                return_requested: remote.is_some_and(|r| r.1),
            };
            let action = decide(&person, &messages);
            DecisionLine {
                participant: row.participant,
                platform_id: row.platform_id.clone(),
                submission,
                prolific_status: remote.map(|r| r.0.clone()),
                status: row.status.clone(),
                decision: row.decision.as_str().to_string(),
                action,
            }
        })
        .collect())
}

/// The remote actions of the lines, with their idempotency keys.
/// `grouped`: those an earlier decision already sent or queued to the group,
/// who get no second request.
fn remotes(lines: &[DecisionLine], group: Option<&str>, grouped: &HashSet<String>) -> Vec<(String, Remote)> {
    let mut out = Vec::new();
    let mut finishers = Vec::new();
    for l in lines {
        let Some(sub) = l.submission.clone() else { continue };
        match &l.action {
            Action::Approve => {
                out.push((format!("approve:{sub}"), Remote::Approve { submission: sub }));
                finishers.push(l.platform_id.clone());
            }
            Action::Reject { category, message } => out.push((
                format!("reject:{sub}"),
                Remote::Reject { submission: sub, category: category.clone(), message: message.clone() },
            )),
            Action::RequestReturn { reason } => {
                out.push((format!("return:{sub}"), Remote::RequestReturn { submission: sub, reason: reason.clone() }))
            }
            // Approved already (an earlier run): still one of the group's
            // finishers, so a group named only now is not left empty (an
            // audit: it was made with no members, and blocked nobody).
            Action::Nothing { .. } if l.prolific_status.as_deref() == Some("APPROVED") => {
                finishers.push(l.platform_id.clone())
            }
            Action::Nothing { .. } => {}
        }
    }
    finishers.retain(|p| !grouped.contains(p));
    if let Some(g) = group {
        for chunk in finishers.chunks(BULK_APPROVE_MAX) {
            let key = format!("group_add:{g}:{}", crate::store::images::sha256_hex(chunk.join(",").as_bytes()));
            out.push((key, Remote::GroupAdd { group_id: g.to_string(), participants: chunk.to_vec() }));
        }
    }
    out
}

/// The requests the remote actions make: approvals batched as the sender batches them.
pub fn requests(remotes: &[(String, Remote)], pid: Option<&str>) -> Vec<Request> {
    let mut out = Vec::new();
    let approvals: Vec<&str> = remotes
        .iter()
        .filter_map(|(_, r)| match r {
            Remote::Approve { submission } => Some(submission.as_str()),
            _ => None,
        })
        .collect();
    for chunk in approvals.chunks(BULK_APPROVE_MAX) {
        out.push(Request {
            method: "POST".into(),
            path: "/api/v1/submissions/bulk-approve/".into(),
            body: Some(serde_json::json!({ "submission_ids": chunk })),
        });
    }
    for (_, r) in remotes.iter().filter(|(_, r)| !matches!(r, Remote::Approve { .. })) {
        if let Ok((method, path, body)) = r.request(pid) {
            out.push(Request { method: method.into(), path, body });
        }
    }
    out
}

/// Decides: writes every action to the outbox (or, `dry_run`, only lists
/// them). Sending is the outbox's: the caller runs it or wakes the server's.
pub async fn decide_study(
    db: &AnyPool,
    study: StudyId,
    group: Option<&str>,
    dry_run: bool,
) -> Result<Decisions, ServiceError> {
    let pid = prolific_id(db, study).await?;
    let synced_at: Option<i64> = sqlx::query_scalar("SELECT synced_at FROM prolific_studies WHERE study_id = $1")
        .bind(study)
        .fetch_optional(db)
        .await?
        .flatten();
    let lines = lines(db, study).await?;
    let grouped = match group {
        Some(g) => in_group(db, study, g).await?,
        None => HashSet::new(),
    };
    let remotes = remotes(&lines, group, &grouped);
    let requests = requests(&remotes, pid.as_deref());
    if dry_run {
        return Ok(Decisions {
            lines,
            requests,
            written: 0,
            discarded: Vec::new(),
            kept: Vec::new(),
            synced_at,
            stale: None,
        });
    }
    let mut tx = crate::store::db::begin_write(db).await?;
    let mut written = 0;
    for (key, remote) in &remotes {
        written += usize::from(enqueue(&mut *tx, study, key, remote).await?);
    }
    // A rejection says the answers cannot be used (two failed attention
    // checks): the copy is discarded with it, as a researcher would, so its
    // answers leave outcomes, agreement and exports and its bundle goes to
    // someone new (an audit: with max_failed_checks = 3 they settled items).
    // Once a later study was built on these outcomes the copies are kept
    // (the rejection is still sent): they are final, as for a discard by hand.
    let frozen = crate::crowd::outcomes_built_on(&mut tx, study).await?.is_some();
    let (mut discarded, mut kept) = (Vec::new(), Vec::new());
    for line in lines.iter().filter(|l| l.submission.is_some() && matches!(l.action, Action::Reject { .. })) {
        let number = ParticipantId::new(line.participant);
        if frozen {
            kept.push(line.participant);
        } else if let crate::crowd::Discard::Done(_) = crate::crowd::discard_in(&mut tx, study, number).await? {
            discarded.push(line.participant);
        }
    }
    if !discarded.is_empty() {
        crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    }
    tx.commit().await?;
    if written > 0 {
        crash_point("outbox_written", None);
    }
    Ok(Decisions { lines, requests, written, discarded, kept, synced_at, stale: None })
}

/// The participants of this study's group rows for `group` that did not
/// fail: sent, or still to be sent (a failed row's are asked again).
async fn in_group(db: &AnyPool, study: StudyId, group: &str) -> Result<HashSet<String>, ServiceError> {
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT payload FROM prolific_outbox WHERE study_id = $1 AND action = 'group_add' AND state <> 'failed'",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    let mut out = HashSet::new();
    for payload in rows {
        if let Ok(Remote::GroupAdd { group_id, participants }) = serde_json::from_str(&payload) {
            if group_id == group {
                out.extend(participants);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(pid: &str, status: Option<&str>, action: Action) -> DecisionLine {
        DecisionLine {
            participant: 1,
            platform_id: pid.into(),
            submission: Some(format!("sub-{pid}")),
            prolific_status: status.map(str::to_string),
            status: String::new(),
            decision: String::new(),
            action,
        }
    }

    #[test]
    fn a_group_named_after_the_approvals_went_through_still_gets_the_finishers() {
        let done = || Action::Nothing { why: "approved".into() };
        let lines = [
            line("a", Some("APPROVED"), done()),
            line("b", Some("AWAITING REVIEW"), Action::Approve),
            line("c", Some("RETURNED"), Action::Nothing { why: "returned".into() }),
        ];
        let added: Vec<Vec<String>> = remotes(&lines, Some("g"), &HashSet::new())
            .into_iter()
            .filter_map(|(_, r)| match r {
                Remote::GroupAdd { participants, .. } => Some(participants),
                _ => None,
            })
            .collect();
        assert_eq!(added, [vec!["a".to_string(), "b".to_string()]]);
        // The same finishers twice make the same key: the outbox adds them once.
        assert_eq!(remotes(&lines, Some("g"), &HashSet::new()), remotes(&lines, Some("g"), &HashSet::new()));
        assert!(remotes(&lines[..1], None, &HashSet::new()).is_empty());
        // One a decision before already sent to the group is not sent again (an audit).
        let grouped = HashSet::from(["a".to_string()]);
        let again: Vec<Remote> = remotes(&lines, Some("g"), &grouped).into_iter().map(|(_, r)| r).collect();
        assert!(again.iter().any(|r| matches!(r, Remote::GroupAdd { participants, .. } if participants == &["b"])));
        assert!(!again
            .iter()
            .any(|r| matches!(r, Remote::GroupAdd { participants, .. } if participants.contains(&"a".to_string()))));
    }
}
