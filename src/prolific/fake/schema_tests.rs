//! The validator against the reference's own schemas.
use super::*;
use serde_json::json;

fn create_study() -> &'static Value {
    request_schema("/api/v1/studies/", "POST").expect("the reference has POST /api/v1/studies/")
}

fn draft() -> Value {
    json!({
        "name": "Pick the caption", "description": "Look at images.",
        "external_study_url": "https://x.test/join?PROLIFIC_PID={{%PROLIFIC_PID%}}",
        "prolific_id_option": "url_parameters", "total_available_places": 10,
        "estimated_completion_time": 10, "reward": 150,
        "completion_codes": [{"code": "C1", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "device_compatibility": ["desktop"],
        "filters": [{"filter_id": "participant_group_blocklist", "selected_values": ["abc"]}],
    })
}

fn fields(problems: &[Problem]) -> Vec<&str> {
    problems.iter().map(|p| p.field.as_str()).collect()
}

#[test]
fn the_reference_parses_and_a_good_draft_passes() {
    assert!(reference()["paths"].as_object().unwrap().len() > 50);
    assert_eq!(validate(create_study(), &draft(), true), vec![]);
}

#[test]
fn missing_required_fields_are_named() {
    let mut d = draft();
    d.as_object_mut().unwrap().remove("reward");
    d.as_object_mut().unwrap().remove("name");
    let p = validate(create_study(), &d, true);
    assert_eq!(fields(&p), vec!["name", "reward"]);
    assert!(p[0].reason.contains("required"));
}

#[test]
fn unknown_enum_values_and_wrong_types_are_refused_where_they_are() {
    let mut d = draft();
    d["prolific_id_option"] = json!("url_params");
    d["device_compatibility"] = json!(["desktop", "fridge"]);
    d["completion_codes"][0]["actions"][0]["action"] = json!("APPROVE_LATER");
    d["reward"] = json!("150");
    let p = validate(create_study(), &d, true);
    let f = fields(&p);
    assert!(f.contains(&"prolific_id_option"), "{p:?}");
    assert!(f.contains(&"device_compatibility[1]"), "{p:?}");
    assert!(f.contains(&"reward"), "{p:?}");
    assert!(f.iter().any(|f| f.starts_with("completion_codes[0].actions[0]")), "{p:?}");
    let action = p.iter().find(|p| p.field == "completion_codes[0].actions[0].action").unwrap();
    for allowed in ["AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "REQUEST_RETURN", "ADD_TO_PARTICIPANT_GROUP"] {
        assert!(action.reason.contains(allowed), "every branch's values are named: {}", action.reason);
    }
    let reward = p.iter().find(|p| p.field == "reward").unwrap();
    assert_eq!(reward.reason, "expected number, got string");
}

#[test]
fn unknown_fields_are_refused_only_when_strict() {
    let mut d = draft();
    d["rewards"] = json!(150);
    assert_eq!(fields(&validate(create_study(), &d, true)), vec!["rewards"]);
    assert_eq!(validate(create_study(), &d, false), vec![]);
}

#[test]
fn nullable_types_and_one_of_branches() {
    let mut d = draft();
    d["internal_name"] = json!(null);
    d["filters"] = json!(null);
    d["data_collection_method"] = json!(null);
    assert_eq!(validate(create_study(), &d, true), vec![]);
    d["filters"] = json!([{"filter_id": "age", "selected_range": {"lower": 18, "upper": 30}}]);
    assert_eq!(validate(create_study(), &d, true), vec![], "an integer is also a number: oneOf read as anyOf");
    d["filters"] = json!([{"filter_id": "age"}]);
    assert!(!validate(create_study(), &d, true).is_empty());
}

#[test]
fn transitions_and_bulk_approval_follow_their_schemas() {
    let study = request_schema("/api/v1/studies/{id}/transition/", "POST").unwrap();
    assert_eq!(validate(study, &json!({"action": "PUBLISH"}), true), vec![]);
    assert_eq!(fields(&validate(study, &json!({"action": "LAUNCH"}), true)), vec!["action"]);
    assert_eq!(fields(&validate(study, &json!({}), true)), vec!["action"]);
    let sub = request_schema("/api/v1/submissions/{id}/transition/", "POST").unwrap();
    let reject = json!({"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": "m"});
    assert_eq!(validate(sub, &reject, true), vec![]);
    let wrong = json!({"action": "REJECT", "rejection_category": "LAZY"});
    assert_eq!(fields(&validate(sub, &wrong, true)), vec!["rejection_category"]);
    let bulk = request_schema("/api/v1/submissions/bulk-approve/", "POST").unwrap();
    assert_eq!(validate(bulk, &json!({"submission_ids": ["a", "b"]}), true), vec![]);
    assert!(!validate(bulk, &json!({"submission_ids": "a"}), true).is_empty());
}

#[test]
fn formats_that_matter_are_checked() {
    assert!(format_ok("date-time", "2026-11-28T22:00:00Z"));
    assert!(!format_ok("date-time", "tomorrow"));
    assert!(format_ok("objectId", "60ffe5c8371090c7041d43f8"));
    assert!(!format_ok("objectId", "60ffe5c8"));
    assert!(format_ok("uuid", "123e4567-e89b-12d3-a456-426614174000"));
    let study = request_schema("/api/v1/studies/{id}/transition/", "POST").unwrap();
    let p = validate(study, &json!({"action": "SCHEDULE_PUBLISH", "publish_at": "soon"}), true);
    assert_eq!(fields(&p), vec!["publish_at"]);
}

#[test]
fn query_parameters_are_checked_against_their_schemas() {
    let ok = |q: &[(&str, &str)]| {
        let q: Vec<(String, String)> = q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        validate_query("/api/v1/submissions/", "GET", &q)
    };
    assert_eq!(ok(&[("study", "s"), ("status", "AWAITING_REVIEW"), ("page", "2")]), vec![]);
    assert_eq!(fields(&ok(&[("status", "APPROVED")])), vec!["study"]);
    assert_eq!(fields(&ok(&[("study", "s"), ("page", "two")])), vec!["page"]);
    assert_eq!(fields(&ok(&[("study", "s"), ("status", "DONE")])), vec!["status"]);
    let groups = |q: &[(&str, &str)]| {
        let q: Vec<(String, String)> = q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        validate_query("/api/v1/participant-groups/", "GET", &q)
    };
    assert_eq!(groups(&[("workspace_id", "w")]), vec![]);
    assert!(!groups(&[("active", "true")]).is_empty(), "the filter (workspace_id or project_id) is required");
}
