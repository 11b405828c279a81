//! The reference's `hooks` endpoints: event types, secrets, subscriptions
//! (create, confirm, update, delete) and their events.
use super::hooks::{Hooks, Secret, Subscription, EVENT_TYPES};
use super::ids::new_id;
use super::reply::{Call, Reply};
use serde_json::{json, Value};

pub fn event_types(_: &mut Call) -> Reply {
    let results: Vec<Value> = EVENT_TYPES.iter().map(|(t, d)| json!({"event_type": t, "description": d})).collect();
    Reply::ok(json!({ "results": results }))
}

pub fn list_secrets(c: &mut Call) -> Reply {
    let workspace = c.query("workspace_id").unwrap_or_default().to_string();
    let results: Vec<Value> = c
        .state
        .hooks
        .secrets
        .iter()
        .filter(|s| s.workspace_id == workspace)
        .map(|s| json!({"id": s.id, "value": s.value, "workspace_id": s.workspace_id}))
        .collect();
    Reply::ok(json!({ "results": results }))
}

/// Creates (or replaces) the workspace's secret.
pub fn create_secret(c: &mut Call) -> Reply {
    let workspace = c.str_field("workspace_id").unwrap_or(c.state.workspace_id.as_str()).to_string();
    if workspace != c.state.workspace_id {
        return Reply::invalid("workspace_id", "no such workspace");
    }
    let hooks = &mut c.state.hooks;
    hooks.secrets.retain(|s| s.workspace_id != workspace);
    let value = format!("{}{}", new_id(), new_id());
    let secret = Secret { id: new_id(), value: value.clone(), workspace_id: workspace.clone() };
    let body = json!({"id": secret.id, "value": value, "workspace_id": workspace});
    hooks.secrets.push(secret);
    Reply::created(body)
}

pub fn list_subscriptions(c: &mut Call) -> Reply {
    let enabled = c.query("is_enabled").map(|v| v == "true");
    let workspace = c.query("workspace_id").map(str::to_string);
    let results: Vec<Value> = c
        .state
        .hooks
        .subscriptions
        .iter()
        .filter(|s| !s.deleted)
        .filter(|s| enabled.unwrap_or(true) == s.is_enabled)
        .filter(|s| workspace.as_ref().is_none_or(|w| *w == s.workspace_id))
        .map(Hooks::subscription_json)
        .collect();
    Reply::ok(json!({ "results": results }))
}

/// A subscription needs the workspace's secret first and a known event type.
/// The reference calls the 201's body a SubscriptionList while Prolific's
/// examples show the subscription itself: the body is both.
pub fn create_subscription(c: &mut Call) -> Reply {
    let event_type = c.str_field("event_type").unwrap_or_default().to_string();
    let target_url = c.str_field("target_url").unwrap_or_default().to_string();
    let workspace = c.str_field("workspace_id").unwrap_or_default().to_string();
    if !EVENT_TYPES.iter().any(|(t, _)| *t == event_type) {
        return Reply::invalid(
            "event_type",
            &format!("{event_type:?} is not an event type (GET /api/v1/hooks/event-types/)"),
        );
    }
    if !(target_url.starts_with("http://") || target_url.starts_with("https://")) {
        return Reply::invalid("target_url", "must be an http(s) URL");
    }
    if workspace != c.state.workspace_id {
        return Reply::invalid("workspace_id", "no such workspace");
    }
    let hooks = &mut c.state.hooks;
    if hooks.secret_of(&workspace).is_none() {
        return Reply::invalid(
            "workspace_id",
            "create a secret for this workspace first (POST /api/v1/hooks/secrets/)",
        );
    }
    if hooks.subscriptions.len() >= 1_000 {
        return Reply::invalid("event_type", "too many subscriptions");
    }
    let sub = Subscription {
        id: new_id(),
        event_type,
        target_url,
        is_enabled: c.body.get("is_enabled").and_then(Value::as_bool).unwrap_or(true),
        workspace_id: workspace,
        hook_secret: new_id(),
        confirmed: false,
        deleted: false,
    };
    let mut body = Hooks::subscription_json(&sub);
    body["results"] = json!([Hooks::subscription_json(&sub)]);
    let secret = sub.hook_secret.clone();
    hooks.subscriptions.push(sub);
    Reply::created(body).with_header("x-hook-secret", secret)
}

fn find<'a>(c: &'a mut Call) -> Option<&'a mut Subscription> {
    let id = c.param(0).to_string();
    c.state.hooks.subscriptions.iter_mut().find(|s| s.id == id && !s.deleted)
}

pub fn get_subscription(c: &mut Call) -> Reply {
    find(c).map_or_else(|| Reply::not_found("Subscription"), |s| Reply::ok(Hooks::subscription_json(s)))
}

pub fn confirm_subscription(c: &mut Call) -> Reply {
    let secret = c.str_field("secret").unwrap_or_default().to_string();
    let Some(s) = find(c) else { return Reply::not_found("Subscription") };
    if s.hook_secret != secret {
        return Reply::invalid("secret", "does not match the X-Hook-Secret sent when the subscription was created");
    }
    s.confirmed = true;
    Reply::ok(Hooks::subscription_json(s))
}

pub fn update_subscription(c: &mut Call) -> Reply {
    let body = c.body.clone();
    let Some(s) = find(c) else { return Reply::not_found("Subscription") };
    if let Some(t) = body.get("event_type").and_then(Value::as_str) {
        if !EVENT_TYPES.iter().any(|(e, _)| *e == t) {
            return Reply::invalid("event_type", &format!("{t:?} is not an event type"));
        }
        s.event_type = t.into();
    }
    if let Some(u) = body.get("target_url").and_then(Value::as_str) {
        s.target_url = u.into();
    }
    if let Some(e) = body.get("is_enabled").and_then(Value::as_bool) {
        s.is_enabled = e;
    }
    Reply::ok(Hooks::subscription_json(s))
}

pub fn delete_subscription(c: &mut Call) -> Reply {
    let Some(s) = find(c) else { return Reply::not_found("Subscription") };
    s.deleted = true;
    Reply::no_content()
}

/// The subscription's events, newest last, with offset/limit as the reference's query says.
pub fn events(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    if !c.state.hooks.subscriptions.iter().any(|s| s.id == id) {
        return Reply::not_found("Subscription");
    }
    let offset = c.query("offset").and_then(|v| v.parse().ok()).unwrap_or(0usize);
    let limit = c.query("limit").and_then(|v| v.parse().ok()).unwrap_or(100usize);
    let status = c.query("status").map(str::to_string);
    let resource = c.query("resource_id").map(str::to_string);
    let results: Vec<Value> = c
        .state
        .hooks
        .events
        .iter()
        .filter(|e| e.subscription_id == id)
        .filter(|e| status.as_ref().is_none_or(|s| s.contains(e.status)))
        .filter(|e| resource.as_ref().is_none_or(|r| *r == e.resource_id))
        .skip(offset)
        .take(limit)
        .map(|e| {
            json!({"id": e.id, "datetime_created": e.created, "datetime_updated": e.updated,
                   "event_type": e.event_type, "resource_id": e.resource_id, "status": e.status,
                   "target_url": c.state.hooks.subscriptions.iter().find(|s| s.id == id).map(|s| s.target_url.clone()),
                   "payload": e.payload})
        })
        .collect();
    Reply::ok(json!({ "results": results }))
}
