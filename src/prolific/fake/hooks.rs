//! Webhooks' state: workspace secrets, subscriptions and their events, what
//! is owed and what was delivered. The reference's `hooks` endpoints are in
//! hooks_api.rs; deliveries are made by deliver.rs.
use super::ids::{new_id, now, MAX_RECORDS};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub const EVENT_TYPES: [(&str, &str); 2] = [
    ("study.status.change", "A study's status changed."),
    ("submission.status.change", "A submission's status changed."),
];

/// Attempts per event when failed deliveries are retried.
pub const MAX_ATTEMPTS: u32 = 6;

pub struct Secret {
    pub id: String,
    pub value: String,
    pub workspace_id: String,
}

pub struct Subscription {
    pub id: String,
    pub event_type: String,
    pub target_url: String,
    pub is_enabled: bool,
    pub workspace_id: String,
    /// Sent as `X-Hook-Secret` on creation; POSTed back to confirm.
    pub hook_secret: String,
    pub confirmed: bool,
    pub deleted: bool,
}

pub struct Event {
    pub id: String,
    pub subscription_id: String,
    pub event_type: String,
    pub resource_id: String,
    pub payload: Value,
    pub status: &'static str,
    pub created: String,
    pub updated: String,
    pub attempts: u32,
    pub next_at: Instant,
    pub in_flight: bool,
}

pub struct Delivery {
    pub event_id: String,
    pub subscription_id: String,
    pub attempt: u32,
    pub duplicate: bool,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub at: String,
}

/// How deliveries misbehave, set by `POST /_fake/webhooks`.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// Probability that a delivered event is delivered a second time.
    pub duplicate: f64,
    /// Deliver each batch of due events in a random order.
    pub reorder: bool,
    /// Retry non-2xx answers (with back-off, up to MAX_ATTEMPTS); otherwise an event fails at once.
    pub retry_failed: bool,
}

pub struct Hooks {
    pub secrets: Vec<Secret>,
    pub subscriptions: Vec<Subscription>,
    pub events: Vec<Event>,
    pub deliveries: VecDeque<Delivery>,
    pub deliveries_dropped: u64,
    pub behaviour: Behaviour,
}

/// One delivery to make, taken out of the state so the lock is not held while it is sent.
pub struct Attempt {
    pub event_id: String,
    pub subscription_id: String,
    pub url: String,
    pub body: String,
    pub secret: String,
    pub attempt: u32,
}

impl Hooks {
    pub fn new(workspace_id: &str, secret: Option<String>) -> Hooks {
        let secrets =
            secret.map(|value| Secret { id: new_id(), value, workspace_id: workspace_id.into() }).into_iter().collect();
        Hooks {
            secrets,
            subscriptions: Vec::new(),
            events: Vec::new(),
            deliveries: VecDeque::new(),
            deliveries_dropped: 0,
            behaviour: Behaviour { duplicate: 0.0, reorder: false, retry_failed: true },
        }
    }

    pub fn secret_of(&self, workspace_id: &str) -> Option<&Secret> {
        self.secrets.iter().rev().find(|s| s.workspace_id == workspace_id)
    }

    /// Queues an event for every enabled subscription to its type.
    pub fn emit(&mut self, event_type: &str, data: &Value) {
        let resource_id = data.get("resource_id").and_then(Value::as_str).unwrap_or("").to_string();
        let targets: Vec<String> = self
            .subscriptions
            .iter()
            .filter(|s| s.is_enabled && !s.deleted && s.event_type == event_type)
            .map(|s| s.id.clone())
            .collect();
        for subscription_id in targets {
            if self.events.len() >= MAX_RECORDS {
                return;
            }
            let id = new_id();
            let mut payload = data.clone();
            payload["event_id"] = json!(id);
            payload["event_type"] = json!(event_type);
            let at = now();
            self.events.push(Event {
                id,
                subscription_id,
                event_type: event_type.into(),
                resource_id: resource_id.clone(),
                payload,
                status: "PENDING",
                created: at.clone(),
                updated: at,
                attempts: 0,
                next_at: Instant::now(),
                in_flight: false,
            });
        }
    }

    /// The events to send now (all pending ones when `all`), marked in flight.
    pub fn due(&mut self, all: bool) -> Vec<Attempt> {
        let now = Instant::now();
        let mut out = Vec::new();
        for i in 0..self.events.len() {
            let e = &self.events[i];
            if e.status != "PENDING" || e.in_flight || (!all && e.next_at > now) {
                continue;
            }
            let Some(sub) = self.subscriptions.iter().find(|s| s.id == e.subscription_id) else { continue };
            let secret = self.secret_of(&sub.workspace_id).map(|s| s.value.clone()).unwrap_or_default();
            let attempt = Attempt {
                event_id: e.id.clone(),
                subscription_id: sub.id.clone(),
                url: sub.target_url.clone(),
                body: e.payload.to_string(),
                secret,
                attempt: e.attempts + 1,
            };
            self.events[i].in_flight = true;
            out.push(attempt);
        }
        out
    }

    /// Records one delivery's outcome; a failed one is retried later or fails.
    pub fn record(&mut self, a: &Attempt, duplicate: bool, result: Result<u16, String>) {
        if self.deliveries.len() >= MAX_RECORDS {
            self.deliveries.pop_front();
            self.deliveries_dropped += 1;
        }
        let (status, error) = match &result {
            Ok(s) => (Some(*s), None),
            Err(e) => (None, Some(e.clone())),
        };
        self.deliveries.push_back(Delivery {
            event_id: a.event_id.clone(),
            subscription_id: a.subscription_id.clone(),
            attempt: a.attempt,
            duplicate,
            status,
            error,
            at: now(),
        });
        if duplicate {
            return;
        }
        let retry = self.behaviour.retry_failed;
        let Some(e) = self.events.iter_mut().find(|e| e.id == a.event_id) else { return };
        e.in_flight = false;
        e.attempts = a.attempt;
        e.updated = now();
        let ok = matches!(result, Ok(s) if (200..300).contains(&s));
        if ok {
            e.status = "SUCCEEDED";
        } else if !retry || e.attempts >= MAX_ATTEMPTS {
            e.status = "FAILED";
        } else {
            e.next_at = Instant::now() + Duration::from_millis(200 << e.attempts.min(8));
        }
    }

    pub fn subscription_json(s: &Subscription) -> Value {
        json!({"id": s.id, "event_type": s.event_type, "target_url": s.target_url,
               "is_enabled": s.is_enabled, "workspace_id": s.workspace_id})
    }
}

/// For `/_fake/state`.
pub fn to_json(h: &Hooks) -> Value {
    let deliveries: Vec<Value> = h
        .deliveries
        .iter()
        .map(|d| {
            json!({"event_id": d.event_id, "subscription_id": d.subscription_id, "attempt": d.attempt,
                   "duplicate": d.duplicate, "status": d.status, "error": d.error, "at": d.at})
        })
        .collect();
    let events: Vec<Value> = h
        .events
        .iter()
        .map(|e| {
            json!({"id": e.id, "subscription_id": e.subscription_id, "event_type": e.event_type,
                        "resource_id": e.resource_id, "status": e.status, "attempts": e.attempts, "payload": e.payload})
        })
        .collect();
    let subscriptions: Vec<Value> = h
        .subscriptions
        .iter()
        .map(|s| {
            let mut v = Hooks::subscription_json(s);
            v["confirmed"] = json!(s.confirmed);
            v["deleted"] = json!(s.deleted);
            v
        })
        .collect();
    json!({
        "secrets": h.secrets.iter().map(|s| json!({"id": s.id, "workspace_id": s.workspace_id})).collect::<Vec<_>>(),
        "subscriptions": subscriptions,
        "events": events,
        "deliveries": deliveries,
        "deliveries_dropped": h.deliveries_dropped,
        "behaviour": {"duplicate": h.behaviour.duplicate, "reorder": h.behaviour.reorder,
                      "retry_failed": h.behaviour.retry_failed},
    })
}
