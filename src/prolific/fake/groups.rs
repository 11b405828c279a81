//! Participant groups: create, list, read, rename or replace members,
//! delete, and the membership endpoints. Studies use them through the
//! `participant_group_blocklist` / `_allowlist` filters (rules.rs).
use super::reply::{Call, Reply};
use super::state::*;
use serde_json::{json, Value};

fn to_json(state: &State, g: &Group) -> Value {
    let feeders: Vec<Value> = state
        .study_order
        .iter()
        .filter_map(|id| state.studies.get(id))
        .filter_map(|s| {
            let codes: Vec<Value> = s
                .fields
                .get("completion_codes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|code| {
                    code.get("actions").and_then(Value::as_array).into_iter().flatten().filter(|a| a.get("participant_group").and_then(Value::as_str) == Some(g.id.as_str()))
                        .map(move |a| {
                            json!({"code": code.get("code"), "code_type": code.get("code_type"), "action": a.get("action")})
                        })
                })
                .collect();
            (!codes.is_empty()).then(|| {
                json!({"id": s.id, "name": s.text("name"), "internal_name": s.text("internal_name"),
                       "status": s.status, "feeder_completion_codes": codes})
            })
        })
        .collect();
    json!({"id": g.id, "name": g.name, "project_id": g.project_id, "workspace_id": g.workspace_id,
           "organisation_id": g.organisation_id, "description": g.description,
           "participant_count": g.members.len(), "is_deleted": g.is_deleted, "feeder_studies": feeders})
}

fn members_json(g: &Group) -> Value {
    let results: Vec<Value> =
        g.members.iter().map(|(p, at)| json!({"participant_id": p, "datetime_created": at})).collect();
    json!({ "results": results })
}

fn ids(body: &Value) -> Vec<String> {
    body.get("participant_ids")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn member_count(state: &State) -> usize {
    state.groups.values().map(|g| g.members.len()).sum()
}

/// Adds participants not yet in the group (others are ignored, as the reference says).
pub fn add_members(state: &mut State, group: &str, participants: &[String]) {
    let room = MAX_RECORDS.saturating_sub(member_count(state));
    let Some(g) = state.groups.get_mut(group) else { return };
    for p in participants.iter().take(room) {
        if !g.members.iter().any(|(m, _)| m == p) {
            g.members.push((p.clone(), now()));
        }
    }
}

pub fn remove_members(state: &mut State, group: &str, participants: &[String]) {
    if let Some(g) = state.groups.get_mut(group) {
        g.members.retain(|(m, _)| !participants.contains(m));
    }
}

pub fn create(c: &mut Call) -> Reply {
    let workspace = c.str_field("workspace_id").map(str::to_string);
    let organisation = c.str_field("organisation_id").map(str::to_string);
    match (&workspace, &organisation) {
        (None, None) => return Reply::invalid("workspace_id", "either workspace_id or organisation_id is required"),
        (Some(w), _) if *w != c.state.workspace_id => return Reply::invalid("workspace_id", "no such workspace"),
        _ => {}
    }
    if c.state.groups.len() >= 10_000 {
        return Reply::invalid("name", "too many participant groups");
    }
    let group = Group {
        id: new_id(),
        name: c.str_field("name").unwrap_or_default().to_string(),
        description: c.str_field("description").map(str::to_string),
        workspace_id: workspace,
        organisation_id: organisation,
        project_id: None,
        is_deleted: false,
        members: Vec::new(),
    };
    let id = group.id.clone();
    c.state.group_order.push(id.clone());
    c.state.groups.insert(id.clone(), group);
    let initial = ids(&c.body);
    add_members(c.state, &id, &initial);
    Reply::created(to_json(c.state, &c.state.groups[&id]))
}

/// Groups of the workspace (or project) the query names; `active=true` hides deleted ones.
pub fn list(c: &mut Call) -> Reply {
    let workspace = c.query("workspace_id").map(str::to_string);
    let project = c.query("project_id").map(str::to_string);
    let active = c.query("active").map(|a| a == "true");
    let results: Vec<Value> = c
        .state
        .group_order
        .iter()
        .filter_map(|id| c.state.groups.get(id))
        .filter(|g| workspace.is_none() || g.workspace_id == workspace)
        .filter(|g| {
            project.is_none() || g.project_id == project || project.as_deref() == Some(c.state.project_id.as_str())
        })
        .filter(|g| active.is_none_or(|a| a != g.is_deleted))
        .map(|g| to_json(c.state, g))
        .collect();
    Reply::ok(json!({ "results": results }))
}

fn live(c: &Call) -> Option<String> {
    c.state.groups.get(c.param(0)).filter(|g| !g.is_deleted).map(|g| g.id.clone())
}

pub fn get(c: &mut Call) -> Reply {
    match live(c) {
        Some(id) => Reply::ok(to_json(c.state, &c.state.groups[&id])),
        None => Reply::not_found("Participant group"),
    }
}

/// PATCH: a new name, and `participant_ids` replaces the members.
pub fn update(c: &mut Call) -> Reply {
    let Some(id) = live(c) else { return Reply::not_found("Participant group") };
    if let Some(name) = c.str_field("name").map(str::to_string) {
        c.state.groups.get_mut(&id).expect("live").name = name;
    }
    if c.body.get("participant_ids").is_some() {
        let members = ids(&c.body);
        c.state.groups.get_mut(&id).expect("live").members.clear();
        add_members(c.state, &id, &members);
    }
    Reply::ok(to_json(c.state, &c.state.groups[&id]))
}

pub fn delete(c: &mut Call) -> Reply {
    let Some(id) = live(c) else { return Reply::not_found("Participant group") };
    c.state.groups.get_mut(&id).expect("live").is_deleted = true;
    Reply::no_content()
}

pub fn members(c: &mut Call) -> Reply {
    match live(c) {
        Some(id) => Reply::ok(members_json(&c.state.groups[&id])),
        None => Reply::not_found("Participant group"),
    }
}

pub fn add(c: &mut Call) -> Reply {
    let Some(id) = live(c) else { return Reply::not_found("Participant group") };
    let new = ids(&c.body);
    add_members(c.state, &id, &new);
    Reply::ok(members_json(&c.state.groups[&id]))
}

pub fn remove(c: &mut Call) -> Reply {
    let Some(id) = live(c) else { return Reply::not_found("Participant group") };
    let gone = ids(&c.body);
    remove_members(c.state, &id, &gone);
    Reply::ok(members_json(&c.state.groups[&id]))
}

/// For `/_fake/state`.
pub fn state_json(state: &State) -> Value {
    let groups: Vec<Value> = state
        .group_order
        .iter()
        .filter_map(|id| state.groups.get(id))
        .map(|g| {
            json!({"id": g.id, "name": g.name, "workspace_id": g.workspace_id, "is_deleted": g.is_deleted,
                   "members": g.members.iter().map(|(p, _)| p).collect::<Vec<_>>()})
        })
        .collect();
    Value::Array(groups)
}
