//! Studies: draft, list, read, update (with the reference's locks once
//! published), delete, the status machine of `/transition/`, and costs.
use super::pages::paginate;
use super::reply::{Call, Reply};
use super::rules;
use super::state::*;
use serde_json::{json, Map, Value};

/// The fields a published study may still change (the reference's PATCH description).
const OPEN_AFTER_PUBLISH: [&str; 5] =
    ["internal_name", "total_available_places", "access_details", "data_collection_metadata", "submissions_config"];

/// Prolific's service fee on rewards and bonuses, and VAT on that fee (the fake's figures, GBP).
pub const FEE_RATE: f64 = 1.0 / 3.0;
pub const VAT_RATE: f64 = 0.2;
pub const CURRENCY: &str = "GBP";

pub fn fees(cents: f64) -> (f64, f64) {
    let fee = (cents * FEE_RATE).round();
    (fee, (fee * VAT_RATE).round())
}

/// The reference's Study object.
pub fn to_json(state: &State, s: &Study) -> Value {
    let mut v = s.fields.clone();
    let taken = state.places_taken(s);
    let places = s.num("total_available_places");
    let (fee, vat) = fees(s.num("reward") * places);
    for (key, default) in [("internal_name", Value::Null), ("metadata", Value::Null), ("filters", json!([]))] {
        v.entry(key).or_insert(default);
    }
    v.insert("id".into(), json!(s.id));
    v.insert("status".into(), json!(s.status));
    v.insert("date_created".into(), json!(s.date_created));
    v.insert("published_at".into(), json!(s.published_at));
    v.insert("places_taken".into(), json!(taken));
    v.insert("number_of_submissions".into(), json!(s.submissions.len()));
    v.insert("total_cost".into(), json!(s.num("reward") * places + fee + vat));
    v.insert("is_ready_to_publish".into(), json!(rules::publish_problem(state, s).is_none()));
    v.insert("project".into(), json!(s.text("project").unwrap_or(&state.project_id)));
    v.insert("currency_code".into(), json!(CURRENCY));
    Value::Object(v)
}

/// The reference's StudyShort (list entries).
fn short(state: &State, s: &Study) -> Value {
    let full = to_json(state, s);
    let keys = [
        "id",
        "name",
        "internal_name",
        "status",
        "estimated_completion_time",
        "total_available_places",
        "places_taken",
        "number_of_submissions",
        "reward",
        "total_cost",
        "published_at",
        "date_created",
        "is_ready_to_publish",
    ];
    let mut out: Map<String, Value> =
        keys.iter().filter_map(|k| full.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
    out.insert("study_type".into(), json!("SINGLE"));
    out.insert("publish_at".into(), s.fields.get("publish_at").cloned().unwrap_or(Value::Null));
    Value::Object(out)
}

pub fn create(c: &mut Call) -> Reply {
    if c.state.studies.len() >= MAX_STUDIES {
        return Reply::invalid("name", &format!("the fake holds at most {MAX_STUDIES} studies"));
    }
    let Value::Object(fields) = c.body.clone() else { return Reply::invalid("body", "expected an object") };
    if let Some(p) = fields.get("project").and_then(Value::as_str) {
        if p != c.state.project_id {
            return Reply::invalid("project", &format!("no project {p:?} in this workspace"));
        }
    }
    if let Err(problem) = rules::check_fields(c.state, &fields) {
        return Reply::problems(&[problem]);
    }
    let at = now();
    let study = Study {
        id: new_id(),
        fields,
        status: UNPUBLISHED,
        stopped: false,
        date_created: at.clone(),
        published_at: None,
        submissions: Vec::new(),
        history: vec![(UNPUBLISHED.into(), at)],
    };
    let body = to_json(c.state, &study);
    c.state.study_order.push(study.id.clone());
    c.state.studies.insert(study.id.clone(), study);
    Reply::created(body)
}

/// `state` is one status or the reference's "(active|published|...)" form.
fn state_filter(raw: Option<&str>) -> Option<Vec<String>> {
    let raw = raw?;
    let inner = raw.trim_start_matches('(').trim_end_matches(')');
    Some(inner.split('|').map(|s| s.trim().to_ascii_uppercase().replace('_', " ")).collect())
}

fn listed(c: &Call) -> Vec<String> {
    let wanted = state_filter(c.query("state"));
    c.state
        .study_order
        .iter()
        .filter(|id| {
            let s = &c.state.studies[*id];
            wanted.as_ref().is_none_or(|w| {
                w.iter().any(|x| x.as_str() == s.status || (x.as_str() == "PUBLISHED" && s.published_at.is_some()))
            })
        })
        .cloned()
        .collect()
}

pub fn list(c: &mut Call) -> Reply {
    let results: Vec<Value> = listed(c).iter().map(|id| short(c.state, &c.state.studies[id])).collect();
    Reply::ok(json!({ "results": results }))
}

/// The project's studies, paginated as the reference describes (`page`, `page_size`, `ordering`).
pub fn list_in_project(c: &mut Call) -> Reply {
    if c.param(0) != c.state.project_id {
        return Reply::not_found("Project");
    }
    let mut ids = listed(c);
    if c.query("ordering") == Some("-date_created") {
        ids.reverse();
    }
    let all: Vec<Value> = ids.iter().map(|id| short(c.state, &c.state.studies[id])).collect();
    paginate(c, all, None)
}

pub fn get(c: &mut Call) -> Reply {
    match c.state.studies.get(c.param(0)) {
        Some(s) => Reply::ok(to_json(c.state, s)),
        None => Reply::not_found("Study"),
    }
}

pub fn update(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    let Some(study) = c.state.studies.get(&id) else { return Reply::not_found("Study") };
    let Value::Object(changes) = c.body.clone() else { return Reply::invalid("body", "expected an object") };
    let published = study.status != UNPUBLISHED;
    let mut merged = study.fields.clone();
    for (key, value) in &changes {
        if published && !OPEN_AFTER_PUBLISH.contains(&key.as_str()) && study.fields.get(key) != Some(value) {
            return Reply::invalid(key, "cannot be changed once the study is published");
        }
        merged.insert(key.clone(), value.clone());
    }
    if published {
        let (before, after) = (study.num("total_available_places"), merged.get("total_available_places"));
        if after.and_then(Value::as_f64).is_some_and(|a| a < before) {
            return Reply::invalid(
                "total_available_places",
                &format!("can only be increased once the study is published (it is {before})"),
            );
        }
    }
    if let Err(problem) = rules::check_fields(c.state, &merged) {
        return Reply::problems(&[problem]);
    }
    let grew = changes.contains_key("total_available_places");
    let study = c.state.studies.get_mut(&id).expect("checked above");
    study.fields = merged;
    if grew && published {
        study.stopped = false;
        c.state.settle_study(&id);
    }
    Reply::ok(to_json(c.state, &c.state.studies[&id]))
}

pub fn delete(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    match c.state.studies.get(&id) {
        None => Reply::not_found("Study"),
        Some(s) if s.status != UNPUBLISHED => Reply::error(400, "Bad Request", "Published studies cannot be deleted."),
        Some(_) => {
            c.state.studies.remove(&id);
            c.state.study_order.retain(|s| *s != id);
            Reply::ok(json!({}))
        }
    }
}

/// The reference's table: UNPUBLISHED -PUBLISH-> ACTIVE, -SCHEDULE_PUBLISH->
/// SCHEDULED -CANCEL_PUBLISH-> UNPUBLISHED; ACTIVE -PAUSE-> PAUSED -START->
/// ACTIVE; ACTIVE or PAUSED -STOP-> COMPLETED. Anything else is 400.
pub fn transition(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    let action = c.str_field("action").unwrap_or_default().to_string();
    let Some(study) = c.state.studies.get(&id) else { return Reply::not_found("Study") };
    let from = study.status;
    let ready = || rules::publish_problem(c.state, study);
    let to = match (from, action.as_str()) {
        (UNPUBLISHED, "PUBLISH") => match ready() {
            Some(problem) => return Reply::problems(&[problem]),
            None => ACTIVE,
        },
        (UNPUBLISHED, "SCHEDULE_PUBLISH") => {
            if let Some(problem) = ready() {
                return Reply::problems(&[problem]);
            }
            let at = c.body.get("publish_at").or_else(|| study.fields.get("publish_at")).and_then(Value::as_str);
            let Some(at) = at.map(str::to_string) else {
                return Reply::invalid("publish_at", "required to schedule a study that has none");
            };
            c.state.studies.get_mut(&id).expect("found").fields.insert("publish_at".into(), json!(at));
            SCHEDULED
        }
        (SCHEDULED, "CANCEL_PUBLISH") => UNPUBLISHED,
        (ACTIVE, "PAUSE") => PAUSED,
        (PAUSED, "START") => ACTIVE,
        (ACTIVE | PAUSED, "STOP") => COMPLETED,
        _ => {
            return Reply::invalid("action", &format!("{action} is not available for a study that is {from}"));
        }
    };
    if to == COMPLETED {
        c.state.studies.get_mut(&id).expect("found").stopped = true;
    }
    c.state.set_study_status(&id, to);
    if to == ACTIVE {
        c.state.settle_study(&id);
    }
    Reply::ok(to_json(c.state, &c.state.studies[&id]))
}

fn breakdown(cents: f64) -> Value {
    let (fee, vat) = fees(cents);
    json!({"rewards": {"amount": cents, "currency": CURRENCY}, "fees": {"amount": fee, "currency": CURRENCY},
           "tax": {"amount": vat, "currency": CURRENCY}})
}

/// StudyTotalCost: rewards for every place with `?is_projected=true`, else
/// ("the cost at the time of the request") for the places taken so far (none
/// for a draft), and the bonuses paid, each with fees and VAT.
pub fn cost(c: &mut Call) -> Reply {
    let Some(s) = c.state.studies.get(c.param(0)) else { return Reply::not_found("Study") };
    let places = if c.query("is_projected") == Some("true") {
        s.num("total_available_places")
    } else {
        c.state.places_taken(s) as f64
    };
    let bonuses: u64 = s
        .submissions
        .iter()
        .filter_map(|id| c.state.submissions.get(id))
        .flat_map(|sub| sub.bonus_payments.iter())
        .sum();
    Reply::ok(json!({"rewards": breakdown(s.num("reward") * places), "bonuses": breakdown(bonuses as f64),
                     "_links": {"self": {"href": format!("{}{}", c.base, c.path)}}}))
}

pub fn calculate(c: &mut Call) -> Reply {
    let reward = c.body.get("reward").and_then(Value::as_f64).unwrap_or(0.0);
    let places = c.body.get("total_available_places").and_then(Value::as_f64).unwrap_or(0.0);
    let (fee, vat) = fees(reward * places);
    Reply::ok(json!({ "total_cost": reward * places + fee + vat }))
}

/// Publishes scheduled studies whose time has come (run with the other asynchronous work).
pub fn publish_scheduled(state: &mut State) {
    let now = time::OffsetDateTime::now_utc();
    let due: Vec<String> = state
        .studies
        .values()
        .filter(|s| s.status == SCHEDULED)
        .filter(|s| {
            s.text("publish_at")
                .and_then(|t| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok())
                .is_some_and(|t| t <= now)
        })
        .map(|s| s.id.clone())
        .collect();
    for id in due {
        state.set_study_status(&id, ACTIVE);
    }
}
