//! The control API under `/_fake/` (not Prolific's): simulated participants,
//! faults, asynchronous work on demand, webhook behaviour and the whole state.
use super::participants;
use super::reply::Reply;
use super::router::{same_token, Request};
use super::state::{now, LogEntry, State};
use super::{bonuses, deliver, groups, hooks, jobs, Fake};
use serde_json::{json, Value};

fn refusal((status, why): participants::Refusal) -> Reply {
    let title = if status == 404 { "Not Found" } else { "Conflict" };
    Reply::error(status, title, &why)
}

fn done(result: Result<Value, participants::Refusal>) -> Reply {
    result.map_or_else(refusal, Reply::ok)
}

pub async fn handle(fake: &Fake, req: &Request) -> Reply {
    let reply = answer(fake, req).await;
    let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
    state.log(LogEntry {
        method: req.method.clone(),
        path: req.path.clone(),
        status: reply.status,
        fault: None,
        reason: reply.reason.clone().filter(|_| reply.status >= 400),
        at: now(),
    });
    reply
}

async fn answer(fake: &Fake, req: &Request) -> Reply {
    if !same_token(req.authorization.as_deref(), &fake.token) {
        return Reply::error(401, "Unauthorized", "Invalid token.");
    }
    let body: Value = if req.body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&req.body) {
            Ok(v) => v,
            Err(e) => return Reply::invalid("body", &format!("not JSON: {e}")),
        }
    };
    let segments: Vec<&str> = req.path.trim_start_matches("/_fake/").trim_end_matches('/').split('/').collect();
    if req.method == "POST" && segments == ["tick"] {
        return tick(fake).await;
    }
    let reply = {
        let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
        sync_answer(&mut state, req.method.as_str(), &segments, &body)
    };
    fake.wake.notify_one();
    reply
}

fn sync_answer(state: &mut State, method: &str, segments: &[&str], body: &Value) -> Reply {
    let text = |key: &str| body.get(key).and_then(Value::as_str);
    match (method, segments) {
        ("POST", ["studies", study, "arrivals"]) => {
            let start = !body.get("reserve_only").and_then(Value::as_bool).unwrap_or(false);
            done(participants::arrive(state, study, text("participant_id"), start))
        }
        ("POST", ["submissions", id, "start"]) => done(participants::start(state, id)),
        ("POST", ["submissions", id, "submit"]) => {
            if body.get("completion_code").is_some_and(|c| !c.is_null() && !c.is_string()) {
                return Reply::invalid("completion_code", "a string or null");
            }
            done(participants::submit(state, id, text("completion_code")))
        }
        ("POST", ["submissions", id, "return"]) => done(participants::return_(state, id)),
        ("POST", ["submissions", id, "timeout"]) => done(participants::time_out(state, id)),
        ("POST", ["faults"]) => match state.faults.add(body) {
            Ok(()) => Reply::ok(json!({ "faults": state.faults.to_json() })),
            Err(why) => {
                let (field, reason) = why.split_once(": ").unwrap_or(("body", why.as_str()));
                Reply::invalid(field, reason)
            }
        },
        ("GET", ["faults"]) => Reply::ok(json!({ "faults": state.faults.to_json() })),
        ("DELETE", ["faults"]) => {
            state.faults.clear();
            Reply::no_content()
        }
        ("POST", ["webhooks"]) => webhooks(state, body),
        ("GET", ["state"]) => Reply::ok(snapshot(state)),
        _ => Reply::error(404, "Not Found", "No such control endpoint (docs/prolific.md, \"The fake Prolific\")."),
    }
}

fn webhooks(state: &mut State, body: &Value) -> Reply {
    let b = &mut state.hooks.behaviour;
    if let Some(p) = body.get("duplicate") {
        match p.as_f64().filter(|p| (0.0..=1.0).contains(p)) {
            Some(p) => b.duplicate = p,
            None => return Reply::invalid("duplicate", "a probability from 0 to 1"),
        }
    }
    for (key, slot) in [("reorder", &mut b.reorder), ("retry_failed", &mut b.retry_failed)] {
        if let Some(v) = body.get(key) {
            match v.as_bool() {
                Some(v) => *slot = v,
                None => return Reply::invalid(key, "true or false"),
            }
        }
    }
    Reply::ok(json!({"duplicate": b.duplicate, "reorder": b.reorder, "retry_failed": b.retry_failed}))
}

/// Runs every pending asynchronous job now, then delivers every pending webhook event once.
async fn tick(fake: &Fake) -> Reply {
    let (approvals, payments) = {
        let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
        jobs::run(&mut state, true)
    };
    let deliveries = deliver::deliver_due(fake, true).await;
    deliver::settle(fake).await;
    Reply::ok(json!({"bulk_approvals": approvals, "payments": payments, "webhook_deliveries": deliveries}))
}

/// Everything, for a test's final comparisons.
fn snapshot(state: &State) -> Value {
    let studies: Vec<Value> = state
        .study_order
        .iter()
        .filter_map(|id| state.studies.get(id))
        .map(|s| {
            json!({"id": s.id, "status": s.status, "name": s.text("name"), "internal_name": s.fields.get("internal_name"),
                   "metadata": s.fields.get("metadata"), "total_available_places": s.fields.get("total_available_places"),
                   "places_taken": state.places_taken(s), "reward": s.fields.get("reward"),
                   "filters": s.fields.get("filters"), "completion_codes": s.fields.get("completion_codes"),
                   "external_study_url": s.fields.get("external_study_url"), "stopped": s.stopped,
                   "submissions": s.submissions,
                   "transitions": s.history.iter().map(|(st, at)| json!({"status": st, "at": at})).collect::<Vec<_>>()})
        })
        .collect();
    let mut subs: Vec<&super::state::Submission> = state.submissions.values().collect();
    subs.sort_by(|a, b| (&a.started_at, &a.id).cmp(&(&b.started_at, &b.id)));
    let submissions: Vec<Value> = subs
        .iter()
        .map(|s| {
            json!({"id": s.id, "study_id": s.study_id, "participant_id": s.participant_id, "status": s.status,
                   "entered_code": s.entered_code, "return_requested": s.return_requested,
                   "bonus_payments": s.bonus_payments, "started_at": s.started_at, "completed_at": s.completed_at,
                   "rejection": s.rejection.as_ref().map(|(c, m)| json!({"category": c, "message": m})),
                   "transitions": s.history.iter().map(|(f, t, at, by)| json!({"from": f, "to": t, "at": at, "by": by}))
                       .collect::<Vec<_>>()})
        })
        .collect();
    let approvals: Vec<Value> = state
        .approvals
        .iter()
        .map(|a| {
            json!({"id": a.id, "submission_ids": a.submission_ids, "requested_at": a.requested_at,
                   "applied_at": a.applied_at, "approved": a.approved,
                   "skipped": a.skipped.iter().map(|(id, why)| json!({"id": id, "why": why})).collect::<Vec<_>>()})
        })
        .collect();
    let (bonus_setups, payments) = bonuses::state_json(state);
    let requests: Vec<Value> = state
        .log
        .iter()
        .map(|l| json!({"method": l.method, "path": l.path, "status": l.status, "fault": l.fault, "reason": l.reason, "at": l.at}))
        .collect();
    json!({
        "user_id": state.user_id, "workspace_id": state.workspace_id, "project_id": state.project_id,
        "studies": studies, "submissions": submissions, "bulk_approvals": approvals,
        "bonus_setups": bonus_setups, "payments": payments, "groups": groups::state_json(state),
        "hooks": hooks::to_json(&state.hooks), "faults": state.faults.to_json(),
        "requests": requests, "requests_dropped": state.log_dropped,
    })
}
