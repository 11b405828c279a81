//! The account's reads: the user, its one workspace and the workspace's one project.
use super::reply::{Call, Reply};
use super::studies::CURRENCY;
use serde_json::{json, Value};

fn project(c: &Call) -> Value {
    json!({"id": c.state.project_id, "title": "hardneg (fake)", "description": "The fake Prolific's project",
           "owner": c.state.user_id, "type": "PRIVATE", "public_details": null, "users": [],
           "workspace": c.state.workspace_id, "naivety_distribution_rate": null, "is_longitudinal": false})
}

fn workspace(c: &Call) -> Value {
    json!({"id": c.state.workspace_id, "title": "Fake workspace", "description": "The fake Prolific's workspace",
           "owner": c.state.user_id, "users": [{"id": c.state.user_id, "name": "Fake Researcher",
           "email": "researcher@fake-prolific.invalid", "roles": ["WORKSPACE_ADMIN"]}],
           "projects": [project(c)], "wallet": c.state.workspace_id, "naivety_distribution_rate": null})
}

pub fn me(c: &mut Call) -> Reply {
    Reply::ok(json!({"id": c.state.user_id, "email": "researcher@fake-prolific.invalid",
                     "name": "Fake Researcher", "currency_code": CURRENCY}))
}

pub fn list(c: &mut Call) -> Reply {
    Reply::ok(json!({ "results": [workspace(c)] }))
}

pub fn get(c: &mut Call) -> Reply {
    if c.param(0) != c.state.workspace_id {
        return Reply::not_found("Workspace");
    }
    Reply::ok(workspace(c))
}

pub fn projects(c: &mut Call) -> Reply {
    if c.param(0) != c.state.workspace_id {
        return Reply::not_found("Workspace");
    }
    Reply::ok(json!({ "results": [project(c)] }))
}

pub fn get_project(c: &mut Call) -> Reply {
    if c.param(0) != c.state.project_id {
        return Reply::not_found("Project");
    }
    Reply::ok(project(c))
}

/// A balance large enough for any test (the fake never runs out of money).
pub fn balance(c: &mut Call) -> Reply {
    if c.param(0) != c.state.workspace_id {
        return Reply::not_found("Workspace");
    }
    let big = 1_000_000_000u64;
    let parts = json!({"rewards": big, "fees": 0, "vat": 0});
    Reply::ok(json!({"currency_code": CURRENCY, "total_balance": big, "balance_breakdown": parts,
                     "available_balance": big, "available_balance_breakdown": parts}))
}
