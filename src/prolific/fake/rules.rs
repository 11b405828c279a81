//! What Prolific refuses beyond the reference's schemas: a study's fields
//! that contradict each other, and a draft not ready to publish.
use super::schema::Problem;
use super::state::{State, Study};
use serde_json::{Map, Value};

/// Prolific's minimum pay, in pence per hour (£6.00).
pub const MIN_HOURLY_CENTS: f64 = 600.0;

/// The filter ids of participant-group allow and block lists (select filters whose values are group ids).
pub const GROUP_ALLOWLIST: &str = "participant_group_allowlist";
pub const GROUP_BLOCKLIST: &str = "participant_group_blocklist";

fn problem(field: &str, reason: String) -> Problem {
    Problem { field: field.into(), reason }
}

fn num(fields: &Map<String, Value>, key: &str) -> Option<f64> {
    fields.get(key).and_then(Value::as_f64)
}

/// Cross-field checks on a draft's (or a patched study's) fields.
pub fn check_fields(state: &State, f: &Map<String, Value>) -> Result<(), Problem> {
    if let Some(places) = num(f, "total_available_places") {
        if places < 1.0 || places.fract() != 0.0 {
            return Err(problem(
                "total_available_places",
                format!("must be a whole number of at least 1 (is {places})"),
            ));
        }
    }
    if num(f, "reward").is_some_and(|r| r < 0.0 || r.fract() != 0.0) {
        return Err(problem("reward", "must be a whole number of cents, not negative".into()));
    }
    let estimated = num(f, "estimated_completion_time");
    if estimated.is_some_and(|e| e < 1.0) {
        return Err(problem("estimated_completion_time", "must be at least 1 minute".into()));
    }
    if let (Some(est), Some(max)) = (estimated, num(f, "maximum_allowed_time")) {
        let min = 2.0 + 2.0 * est + 2.0 * est.sqrt();
        if max < min.ceil() {
            return Err(problem(
                "maximum_allowed_time",
                format!(
                    "must be at least {} minutes for an estimated {est} (2 + 2 × estimate + 2 × √estimate)",
                    min.ceil()
                ),
            ));
        }
    }
    let url = f.get("external_study_url").and_then(Value::as_str).unwrap_or("");
    if f.get("prolific_id_option").and_then(Value::as_str) == Some("url_parameters")
        && !url.contains("{{%PROLIFIC_PID%}}")
    {
        return Err(problem(
            "external_study_url",
            "must contain {{%PROLIFIC_PID%}} when prolific_id_option is url_parameters".into(),
        ));
    }
    if !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://")) {
        return Err(problem("external_study_url", "must be an http(s) URL".into()));
    }
    completion_codes(state, f)?;
    filters(state, f)
}

fn completion_codes(state: &State, f: &Map<String, Value>) -> Result<(), Problem> {
    let Some(Value::Array(codes)) = f.get("completion_codes") else { return Ok(()) };
    let mut seen = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        let field = format!("completion_codes[{i}].code");
        match code.get("code").and_then(Value::as_str) {
            Some(c) if seen.contains(&c) => return Err(problem(&field, format!("{c:?} is used twice in this study"))),
            Some("") => return Err(problem(&field, "must not be empty".into())),
            Some(c) => seen.push(c),
            None => {
                let participant = code.get("actor").and_then(Value::as_str).unwrap_or("participant") == "participant";
                let no_actions = code.get("actions").and_then(Value::as_array).is_some_and(Vec::is_empty);
                if !participant || !no_actions {
                    return Err(problem(&field, "a null code needs the participant actor and no actions".into()));
                }
            }
        }
        let actions = code.get("actions").and_then(Value::as_array).cloned().unwrap_or_default();
        let names: Vec<&str> = actions.iter().filter_map(|a| a.get("action").and_then(Value::as_str)).collect();
        if names.contains(&"AUTOMATICALLY_APPROVE") && names.contains(&"MANUALLY_REVIEW") {
            return Err(problem(
                &format!("completion_codes[{i}].actions"),
                "AUTOMATICALLY_APPROVE and MANUALLY_REVIEW cannot be used together".into(),
            ));
        }
        for (j, a) in actions.iter().enumerate() {
            if let Some(group) = a.get("participant_group").and_then(Value::as_str) {
                if state.groups.get(group).is_none_or(|g| g.is_deleted) {
                    let at = format!("completion_codes[{i}].actions[{j}].participant_group");
                    return Err(problem(&at, format!("no participant group {group:?}")));
                }
            }
        }
    }
    Ok(())
}

/// Group allow/block lists must name existing groups.
fn filters(state: &State, f: &Map<String, Value>) -> Result<(), Problem> {
    let Some(Value::Array(filters)) = f.get("filters") else { return Ok(()) };
    for (i, filter) in filters.iter().enumerate() {
        let id = filter.get("filter_id").and_then(Value::as_str).unwrap_or("");
        if id != GROUP_ALLOWLIST && id != GROUP_BLOCKLIST {
            continue;
        }
        let values = filter.get("selected_values").and_then(Value::as_array).cloned().unwrap_or_default();
        for (j, v) in values.iter().enumerate() {
            let group = v.as_str().unwrap_or("");
            if state.groups.get(group).is_none_or(|g| g.is_deleted) {
                return Err(problem(
                    &format!("filters[{i}].selected_values[{j}]"),
                    format!("no participant group {group:?}"),
                ));
            }
        }
    }
    Ok(())
}

/// Why a draft cannot be published yet (None: it can).
pub fn publish_problem(_state: &State, s: &Study) -> Option<Problem> {
    for key in
        ["name", "description", "external_study_url", "total_available_places", "estimated_completion_time", "reward"]
    {
        if !s.fields.contains_key(key) {
            return Some(problem(key, "required to publish".into()));
        }
    }
    let codes = s.fields.get("completion_codes").and_then(Value::as_array);
    if codes.is_none_or(Vec::is_empty) {
        return Some(problem("completion_codes", "a study needs at least one completion code to be published".into()));
    }
    let hourly = s.num("reward") * 60.0 / s.num("estimated_completion_time").max(1.0);
    if hourly < MIN_HOURLY_CENTS {
        return Some(problem(
            "reward",
            format!(
                "pays {:.2} per hour; Prolific's minimum is {:.2} per hour",
                hourly / 100.0,
                MIN_HOURLY_CENTS / 100.0
            ),
        ));
    }
    None
}

/// Whether a participant may take the study, by its group filters (Err says why not).
pub fn eligible(state: &State, s: &Study, participant: &str) -> Result<(), String> {
    let Some(Value::Array(filters)) = s.fields.get("filters") else { return Ok(()) };
    let member = |group: &str| {
        state.groups.get(group).is_some_and(|g| !g.is_deleted && g.members.iter().any(|(p, _)| p == participant))
    };
    for filter in filters {
        let id = filter.get("filter_id").and_then(Value::as_str).unwrap_or("");
        let groups: Vec<&str> = filter
            .get("selected_values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if id == GROUP_BLOCKLIST {
            if let Some(g) = groups.iter().copied().find(|g| member(g)) {
                return Err(format!("participant {participant} is in blocked participant group {g}"));
            }
        } else if id == GROUP_ALLOWLIST && !groups.iter().copied().any(member) {
            return Err(format!("participant {participant} is in none of the allowed participant groups"));
        }
    }
    Ok(())
}
