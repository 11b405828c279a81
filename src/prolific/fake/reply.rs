//! A handler's answer and the reference's error envelope
//! (`{"error": ErrorDetail}`: status, error_code, title, detail).
use super::schema::Problem;
use super::state::State;
use serde_json::{json, Map, Value};

/// What a handler gets: the state (locked), the path's `{…}` values in
/// order, the query and the JSON body (already checked against the reference).
pub struct Call<'a> {
    pub state: &'a mut State,
    pub params: Vec<String>,
    pub query: Vec<(String, String)>,
    pub body: Value,
    /// `http://ADDR` of the fake itself, for `_links`.
    pub base: &'a str,
    pub path: &'a str,
}

impl Call<'_> {
    pub fn param(&self, i: usize) -> &str {
        self.params.get(i).map(String::as_str).unwrap_or("")
    }
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.body.get(name).and_then(Value::as_str)
    }
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// None: an empty body (204).
    pub body: Option<Value>,
    pub headers: Vec<(&'static str, String)>,
    /// Why a 4xx was sent, for the request log.
    pub reason: Option<String>,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Reply {
        Reply { status, body: Some(body), headers: Vec::new(), reason: None }
    }
    pub fn ok(body: Value) -> Reply {
        Reply::json(200, body)
    }
    pub fn created(body: Value) -> Reply {
        Reply::json(201, body)
    }
    pub fn no_content() -> Reply {
        Reply { status: 204, body: None, headers: Vec::new(), reason: None }
    }
    pub fn with_header(mut self, name: &'static str, value: String) -> Reply {
        self.headers.push((name, value));
        self
    }

    /// The reference's envelope with a free-text detail.
    pub fn error(status: u16, title: &str, detail: &str) -> Reply {
        envelope(status, title, Value::String(detail.into()), detail.to_string())
    }

    /// 400 naming one field and why (ErrorDetail's `{field: [reasons]}` form).
    pub fn invalid(field: &str, reason: &str) -> Reply {
        Reply::problems(&[Problem { field: field.into(), reason: reason.into() }])
    }

    /// 400 naming every field that failed and why.
    pub fn problems(problems: &[Problem]) -> Reply {
        let mut detail = Map::new();
        for p in problems {
            let list = detail.entry(p.field.clone()).or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(reasons) = list {
                reasons.push(Value::String(p.reason.clone()));
            }
        }
        let reason = problems.iter().map(|p| format!("{}: {}", p.field, p.reason)).collect::<Vec<_>>().join("; ");
        envelope(400, "Bad Request", Value::Object(detail), reason)
    }

    pub fn not_found(what: &str) -> Reply {
        Reply::error(404, "Not Found", &format!("{what} not found."))
    }
}

/// Internal error codes as Prolific numbers them: 140000 + the HTTP status.
fn envelope(status: u16, title: &str, detail: Value, reason: String) -> Reply {
    let body = json!({"error": {
        "status": status,
        "error_code": 140_000 + u32::from(status),
        "title": title,
        "detail": detail,
        "additional_information": format!("/api/v1/errors/{}", 140_000 + u32::from(status)),
        "interactive": false,
    }});
    Reply { status, body: Some(body), headers: Vec::new(), reason: Some(reason) }
}
