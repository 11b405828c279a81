//! Submissions as a researcher sees them: lists (paginated), counts, one
//! submission, approve/reject/complete/screen-out, return requests and
//! asynchronous bulk approval.
use super::pages::paginate;
use super::participants::apply_code;
use super::reply::{Call, Reply};
use super::state::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Instant;

/// Submission ids (or participant ids) one bulk approval takes at most.
pub const MAX_BULK_APPROVE: usize = 1_000;
/// Prolific's shortest rejection message.
pub const MIN_REJECTION_MESSAGE: usize = 100;

/// The reference's SubmissionShort.
/// How many submissions each participant has in a study (for `has_siblings`), counted once per list.
fn per_participant<'a>(state: &'a State, ids: &[String]) -> HashMap<&'a str, usize> {
    let mut n = HashMap::new();
    for s in ids.iter().filter_map(|id| state.submissions.get(id)) {
        *n.entry(s.participant_id.as_str()).or_insert(0) += 1;
    }
    n
}

fn short(s: &Submission, per_participant: &HashMap<&str, usize>) -> Value {
    let siblings = per_participant.get(s.participant_id.as_str()).is_some_and(|&n| n > 1);
    json!({"id": s.id, "participant_id": s.participant_id, "status": s.status, "started_at": s.started_at,
           "completed_at": s.completed_at, "has_siblings": siblings, "study_code": s.entered_code,
           "return_requested": s.return_requested, "study_id": s.study_id})
}

/// The reference's SubmissionDetail.
fn detail(s: &Submission) -> Value {
    json!({"id": s.id, "completed_at": s.completed_at, "entered_code": s.entered_code,
           "participant": s.participant_id, "started_at": s.started_at, "status": s.status,
           "study_id": s.study_id, "parent_study_id": null, "bonus_payments": s.bonus_payments,
           "return_requested": s.return_requested})
}

/// The reference's Submission (a transition's answer).
fn plain(s: &Submission) -> Value {
    json!({"id": s.id, "completed_at": s.completed_at, "entered_code": s.entered_code,
           "participant": s.participant_id, "started_at": s.started_at, "status": s.status, "study_id": s.study_id})
}

fn sorted<'a>(state: &'a State, ids: &[String], ordering: Option<&str>) -> Vec<&'a Submission> {
    let mut subs: Vec<&Submission> = ids.iter().filter_map(|id| state.submissions.get(id)).collect();
    let (desc, key) = match ordering {
        Some(o) => (o.starts_with('-'), o.trim_start_matches('-')),
        None => (false, "started_at"),
    };
    let text = |s: &Submission| -> String {
        match key {
            "completed_at" => s.completed_at.clone().unwrap_or_default(),
            "status" => s.status.into(),
            "participant_id" => s.participant_id.clone(),
            "study_code" => s.entered_code.clone().unwrap_or_default(),
            _ => s.started_at.clone(),
        }
    };
    // Stable: equal keys keep arrival order, so pages do not shift between reads.
    subs.sort_by_key(|s| text(s));
    if desc {
        subs.reverse();
    }
    subs
}

/// GET /api/v1/studies/{id}/submissions/: paginated like /api/v1/submissions/.
pub fn list_of_study(c: &mut Call) -> Reply {
    let Some(study) = c.state.studies.get(c.param(0)) else { return Reply::not_found("Study") };
    let ordering = c.query("ordering").map(str::to_string);
    let counts = per_participant(c.state, &study.submissions);
    let all: Vec<Value> =
        sorted(c.state, &study.submissions, ordering.as_deref()).into_iter().map(|s| short(s, &counts)).collect();
    paginate(c, all, None)
}

fn flag(c: &Call, name: &str) -> Option<bool> {
    c.query(name).map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "t"))
}

/// GET /api/v1/submissions/?study=…: filters by status and the reference's flags, paginated.
pub fn list(c: &mut Call) -> Reply {
    let study_id = c.query("study").unwrap_or_default().to_string();
    let Some(study) = c.state.studies.get(&study_id) else { return Reply::invalid("study", "no such study") };
    let status = c.query("status").map(|s| s.to_ascii_uppercase().replace('_', " ").replace("TIMED OUT", TIMED_OUT));
    let flags: Vec<(bool, &[&str])> = [
        ("returned", &[RETURNED][..]),
        ("awaiting_review", &[AWAITING_REVIEW][..]),
        ("approved", &[APPROVED][..]),
        ("active", &[ACTIVE, RESERVED][..]),
        ("timeout", &[TIMED_OUT][..]),
        ("rejected", &[REJECTED][..]),
        ("screened_out", &[SCREENED_OUT][..]),
        ("completed", &[AWAITING_REVIEW, APPROVED, REJECTED, PARTIALLY_APPROVED][..]),
    ]
    .into_iter()
    .filter_map(|(name, statuses)| flag(c, name).map(|want| (want, statuses)))
    .collect();
    let ordering = c.query("ordering").map(str::to_string);
    let counts = per_participant(c.state, &study.submissions);
    let all: Vec<Value> = sorted(c.state, &study.submissions, ordering.as_deref())
        .into_iter()
        .filter(|s| status.as_ref().is_none_or(|st| st == s.status))
        .filter(|s| flags.iter().all(|(want, statuses)| statuses.contains(&s.status) == *want))
        .map(|s| short(s, &counts))
        .collect();
    paginate(c, all, None)
}

/// SubmissionsCountResponse: every status, zero included, and TOTAL.
pub fn counts(c: &mut Call) -> Reply {
    let Some(study) = c.state.studies.get(c.param(0)) else { return Reply::not_found("Study") };
    let mut out = serde_json::Map::new();
    for status in SUBMISSION_STATUSES {
        out.insert(status.into(), json!(0));
    }
    for s in study.submissions.iter().filter_map(|id| c.state.submissions.get(id)) {
        let n = out[s.status].as_u64().unwrap_or(0) + 1;
        out.insert(s.status.into(), json!(n));
    }
    out.insert("TOTAL".into(), json!(study.submissions.len()));
    Reply::ok(Value::Object(out))
}

pub fn get(c: &mut Call) -> Reply {
    match c.state.submissions.get(c.param(0)) {
        Some(s) => Reply::ok(detail(s)),
        None => Reply::not_found("Submission"),
    }
}

/// APPROVE and REJECT from AWAITING REVIEW (repeating one is ignored, as the
/// reference says); COMPLETE and SCREEN_OUT with a researcher's code. An
/// active submission cannot be decided yet: 400, so the client waits and retries.
pub fn transition(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    let action = c.str_field("action").unwrap_or_default().to_string();
    let Some(sub) = c.state.submissions.get(&id) else { return Reply::not_found("Submission") };
    let status = sub.status;
    match action.as_str() {
        "APPROVE" | "REJECT" => {
            let target = if action == "APPROVE" { APPROVED } else { REJECTED };
            if action == "REJECT" {
                if c.body.get("rejection_category").is_none() {
                    return Reply::invalid("rejection_category", "required to reject a submission");
                }
                let message = c.str_field("message").unwrap_or_default();
                let len = message.chars().count();
                if len < MIN_REJECTION_MESSAGE {
                    return Reply::invalid(
                        "message",
                        &format!("must be at least {MIN_REJECTION_MESSAGE} characters long (is {len})"),
                    );
                }
            }
            if status == target {
                return Reply::ok(plain(sub));
            }
            if matches!(status, ACTIVE | RESERVED) {
                return Reply::error(
                    400,
                    "Bad Request",
                    &format!("The submission is {status}: it can be decided once the participant has submitted it."),
                );
            }
            if status != AWAITING_REVIEW {
                return Reply::error(400, "Bad Request", &format!("Cannot {action} a submission that is {status}."));
            }
            if action == "REJECT" {
                let category = c.str_field("rejection_category").unwrap_or_default().to_string();
                let message = c.str_field("message").unwrap_or_default().to_string();
                c.state.submissions.get_mut(&id).expect("found").rejection = Some((category, message));
            }
            c.state.set_submission_status(&id, target, "researcher");
        }
        "COMPLETE" | "SCREEN_OUT" => {
            let Some(code) = c.str_field("completion_code").map(str::to_string) else {
                return Reply::invalid("completion_code", &format!("required for {action}"));
            };
            if !matches!(status, ACTIVE | AWAITING_REVIEW) {
                return Reply::error(400, "Bad Request", &format!("Cannot {action} a submission that is {status}."));
            }
            if let Err(reason) = apply_code(c.state, &id, Some(&code), "researcher", action == "SCREEN_OUT") {
                return Reply::invalid("completion_code", &reason);
            }
        }
        other => {
            return Reply::invalid("action", &format!("{other} is not available to researchers through the API"));
        }
    }
    Reply::ok(plain(&c.state.submissions[&id]))
}

/// Asks the participant to return: the submission stays as it is, with `return_requested` set.
pub fn request_return(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    let Some(sub) = c.state.submissions.get_mut(&id) else { return Reply::not_found("Submission") };
    if !matches!(sub.status, ACTIVE | AWAITING_REVIEW) {
        return Reply::error(
            400,
            "Bad Request",
            &format!("Cannot request a return of a submission that is {}.", sub.status),
        );
    }
    if sub.return_requested.is_none() {
        sub.return_requested = Some(now());
    }
    Reply::ok(json!({"id": sub.id, "status": sub.status, "participant": sub.participant_id,
                     "return_requested": sub.return_requested}))
}

/// Queues the approvals: they are made a little later (or on `/_fake/tick`), not in this answer.
pub fn bulk_approve(c: &mut Call) -> Reply {
    let ids: Vec<String> = if let Some(Value::Array(ids)) = c.body.get("submission_ids") {
        ids.iter().filter_map(Value::as_str).map(str::to_string).collect()
    } else {
        let study_id = c.str_field("study_id").unwrap_or_default().to_string();
        let Some(study) = c.state.studies.get(&study_id) else { return Reply::invalid("study_id", "no such study") };
        let wanted: Vec<&str> = c
            .body
            .get("participant_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if let Some(p) =
            wanted.iter().find(|p| !study.submissions.iter().any(|s| c.state.submissions[s].participant_id == **p))
        {
            return Reply::invalid("participant_ids", &format!("{p} took no part in study {study_id}"));
        }
        study
            .submissions
            .iter()
            .filter(|s| wanted.contains(&c.state.submissions[*s].participant_id.as_str()))
            .cloned()
            .collect()
    };
    let field = if c.body.get("submission_ids").is_some() { "submission_ids" } else { "participant_ids" };
    if ids.is_empty() {
        return Reply::invalid(field, "must name at least one submission");
    }
    if ids.len() > MAX_BULK_APPROVE {
        return Reply::invalid(field, &format!("at most {MAX_BULK_APPROVE} per request (got {})", ids.len()));
    }
    if let Some(unknown) = ids.iter().find(|id| !c.state.submissions.contains_key(*id)) {
        return Reply::invalid(field, &format!("no submission {unknown}"));
    }
    if c.state.approvals.len() >= MAX_RECORDS {
        return Reply::error(429, "Too Many Requests", "Too many bulk approvals; try later.");
    }
    let due = Instant::now() + c.state.async_delay;
    c.state.approvals.push(BulkApproval {
        id: new_id(),
        submission_ids: ids,
        requested_at: now(),
        applied_at: None,
        due,
        approved: Vec::new(),
        skipped: Vec::new(),
    });
    Reply::ok(json!("The request to bulk approve has been made successfully."))
}

/// Makes the queued approvals that are due (all of them when `all`).
pub fn run_approvals(state: &mut State, all: bool) -> usize {
    let now_i = Instant::now();
    let mut done = 0;
    for i in 0..state.approvals.len() {
        let job = &state.approvals[i];
        if job.applied_at.is_some() || (!all && job.due > now_i) {
            continue;
        }
        let ids = job.submission_ids.clone();
        let (mut approved, mut skipped) = (Vec::new(), Vec::new());
        for id in ids {
            match state.submissions.get(&id).map(|s| s.status) {
                Some(AWAITING_REVIEW) => {
                    state.set_submission_status(&id, APPROVED, "researcher");
                    approved.push(id);
                }
                Some(APPROVED) => approved.push(id),
                Some(other) => skipped.push((id, format!("is {other}"))),
                None => skipped.push((id, "no such submission".into())),
            }
        }
        let job = &mut state.approvals[i];
        job.applied_at = Some(now());
        job.approved = approved;
        job.skipped = skipped;
        done += 1;
    }
    done
}
