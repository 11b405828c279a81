//! Simulated participants: they reserve a place, start (through the study's
//! filled-in URL, which the caller opens against the real study), submit
//! with a completion code or without, return, or time out.
use super::rules;
use super::state::*;
use serde_json::{json, Value};

/// A refusal of the control API: 404 (no such thing) or 409 (not now).
pub type Refusal = (u16, String);

/// The study's `external_study_url` with Prolific's three placeholders filled in.
pub fn study_url(template: &str, participant: &str, study: &str, session: &str) -> String {
    template
        .replace("{{%PROLIFIC_PID%}}", participant)
        .replace("{{%STUDY_ID%}}", study)
        .replace("{{%SESSION_ID%}}", session)
}

/// A participant takes a place: refused when the study is not ACTIVE, is
/// full, has its concurrency limit reached, the participant is filtered out
/// or already took it (one submission per participant unless the study allows more).
pub fn arrive(state: &mut State, study_id: &str, participant: Option<&str>, start: bool) -> Result<Value, Refusal> {
    let Some(study) = state.studies.get(study_id) else { return Err((404, format!("no study {study_id}"))) };
    if study.status != ACTIVE {
        return Err((409, format!("study {study_id} is {}, not ACTIVE", study.status)));
    }
    if state.submissions.len() >= MAX_SUBMISSIONS {
        return Err((409, format!("the fake holds at most {MAX_SUBMISSIONS} submissions")));
    }
    let places = study.num("total_available_places");
    if state.places_taken(study) as f64 >= places {
        return Err((409, format!("study {study_id} has no free place ({places} taken)")));
    }
    let config = study.fields.get("submissions_config");
    let setting = |key: &str, default: i64| config.and_then(|c| c.get(key)).and_then(Value::as_i64).unwrap_or(default);
    let running =
        study.submissions.iter().filter(|id| matches!(state.submissions[*id].status, RESERVED | ACTIVE)).count() as i64;
    let concurrent = setting("max_concurrent_submissions", -1);
    if concurrent > 0 && running >= concurrent {
        return Err((409, format!("study {study_id} has {running} submissions running, its limit")));
    }
    let participant = participant.map(str::to_string).unwrap_or_else(new_id);
    let taken =
        study.submissions.iter().filter(|id| state.submissions[*id].participant_id == participant).count() as i64;
    let per_participant = setting("max_submissions_per_participant", 1);
    if per_participant > 0 && taken >= per_participant {
        return Err((409, format!("participant {participant} already took study {study_id}")));
    }
    rules::eligible(state, study, &participant).map_err(|why| (409, why))?;
    let id = new_id();
    let url = study_url(study.text("external_study_url").unwrap_or(""), &participant, study_id, &id);
    let at = now();
    state.submissions.insert(
        id.clone(),
        Submission {
            id: id.clone(),
            study_id: study_id.into(),
            participant_id: participant.clone(),
            status: RESERVED,
            started_at: at.clone(),
            completed_at: None,
            entered_code: None,
            return_requested: None,
            bonus_payments: Vec::new(),
            rejection: None,
            history: vec![(String::new(), RESERVED.into(), at, "participant".into())],
        },
    );
    state.studies.get_mut(study_id).expect("found").submissions.push(id.clone());
    if start {
        state.set_submission_status(&id, ACTIVE, "participant");
    }
    state.settle_study(study_id);
    Ok(json!({"participant_id": participant, "submission_id": id, "study_url": url,
              "status": state.submissions[&id].status}))
}

/// A reserved participant opens the study.
pub fn start(state: &mut State, id: &str) -> Result<Value, Refusal> {
    let status = state.submissions.get(id).map(|s| s.status).ok_or((404, format!("no submission {id}")))?;
    if status != RESERVED {
        return Err((409, format!("submission {id} is {status}, not RESERVED")));
    }
    state.set_submission_status(id, ACTIVE, "participant");
    Ok(summary(state, id))
}

fn summary(state: &State, id: &str) -> Value {
    let s = &state.submissions[id];
    json!({"submission_id": s.id, "participant_id": s.participant_id, "status": s.status,
           "entered_code": s.entered_code, "return_requested": s.return_requested})
}

/// The participant submits with `code` (None: without one, recorded as "NOCODE").
pub fn submit(state: &mut State, id: &str, code: Option<&str>) -> Result<Value, Refusal> {
    let status = state.submissions.get(id).map(|s| s.status).ok_or((404, format!("no submission {id}")))?;
    // A participant Prolific timed out may still submit late: the submission then awaits review.
    if status != ACTIVE && status != TIMED_OUT {
        return Err((409, format!("submission {id} is {status}, not ACTIVE or TIMED-OUT")));
    }
    apply_code(state, id, code, "participant", false).map_err(|why| (409, why))?;
    Ok(summary(state, id))
}

/// Carries out what the study's completion code says: AUTOMATICALLY_APPROVE
/// approves, MANUALLY_REVIEW (or no action, an unknown code, or no code)
/// awaits review, REQUEST_RETURN awaits review with a return requested,
/// FIXED_SCREEN_OUT_PAYMENT screens out, group actions change the groups.
/// A researcher's COMPLETE/SCREEN_OUT must use a code whose actor is the researcher.
pub fn apply_code(
    state: &mut State,
    id: &str,
    code: Option<&str>,
    actor: &str,
    screen_out: bool,
) -> Result<(), String> {
    let study_id = state.submissions[id].study_id.clone();
    let codes =
        state.studies[&study_id].fields.get("completion_codes").and_then(Value::as_array).cloned().unwrap_or_default();
    let found = code.and_then(|code| codes.iter().find(|c| c.get("code").and_then(Value::as_str) == Some(code)));
    if actor == "researcher" {
        let by_researcher = found.and_then(|c| c.get("actor")).and_then(Value::as_str) == Some("researcher");
        if !by_researcher {
            return Err(format!("{code:?} is not a completion code of this study whose actor is researcher"));
        }
    }
    let actions: Vec<Value> =
        found.and_then(|c| c.get("actions")).and_then(Value::as_array).cloned().unwrap_or_default();
    let has = |name: &str| actions.iter().any(|a| a.get("action").and_then(Value::as_str) == Some(name));
    if screen_out && !has("FIXED_SCREEN_OUT_PAYMENT") {
        return Err("SCREEN_OUT needs a code with the FIXED_SCREEN_OUT_PAYMENT action".into());
    }
    for a in &actions {
        let group = a.get("participant_group").and_then(Value::as_str).unwrap_or("").to_string();
        let participant = state.submissions[id].participant_id.clone();
        match a.get("action").and_then(Value::as_str) {
            Some("ADD_TO_PARTICIPANT_GROUP") => super::groups::add_members(state, &group, &[participant]),
            Some("REMOVE_FROM_PARTICIPANT_GROUP") => super::groups::remove_members(state, &group, &[participant]),
            _ => {}
        }
    }
    let sub = state.submissions.get_mut(id).expect("checked by the caller");
    sub.entered_code = Some(code.unwrap_or("NOCODE").to_string());
    sub.completed_at = Some(now());
    if has("REQUEST_RETURN") {
        sub.return_requested = Some(now());
    }
    let to = if has("FIXED_SCREEN_OUT_PAYMENT") {
        SCREENED_OUT
    } else if has("AUTOMATICALLY_APPROVE") {
        APPROVED
    } else {
        AWAITING_REVIEW
    };
    if to == APPROVED {
        state.set_submission_status(id, AWAITING_REVIEW, actor);
    }
    state.set_submission_status(id, to, if to == APPROVED { "prolific" } else { actor });
    Ok(())
}

/// The participant returns the submission (also after a return request): its place is freed.
pub fn return_(state: &mut State, id: &str) -> Result<Value, Refusal> {
    let status = state.submissions.get(id).map(|s| s.status).ok_or((404, format!("no submission {id}")))?;
    if !matches!(status, RESERVED | ACTIVE | AWAITING_REVIEW) {
        return Err((409, format!("submission {id} is {status}: it cannot be returned")));
    }
    state.set_submission_status(id, RETURNED, "participant");
    Ok(summary(state, id))
}

/// The submission runs past the study's maximum allowed time: its place is freed.
pub fn time_out(state: &mut State, id: &str) -> Result<Value, Refusal> {
    let status = state.submissions.get(id).map(|s| s.status).ok_or((404, format!("no submission {id}")))?;
    if !matches!(status, RESERVED | ACTIVE) {
        return Err((409, format!("submission {id} is {status}: it cannot time out")));
    }
    state.set_submission_status(id, TIMED_OUT, "prolific");
    Ok(summary(state, id))
}
