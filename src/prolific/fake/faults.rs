//! Faults on demand (`POST /_fake/faults`): the next N calls matching a
//! method and a path prefix get a fault instead of (or after) their answer.
use serde_json::{json, Value};

/// Rules at most: each is a few bytes, but a test loop must not grow it without bound.
const MAX_RULES: usize = 1_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// 400 (a refusal, as for a workspace balance too low), 500, 502, 503
    /// or 504, before the request is applied.
    Status(u16),
    /// 429 before the request is applied, with this `Retry-After` (seconds
    /// or an HTTP-date), or none.
    Throttle(Option<String>),
    /// 500, 502, 503 or 504 after the request was applied: a gateway whose
    /// origin did the work and whose answer was lost (`"502_applied"`).
    AppliedThen(u16),
    /// Applied, then answered only after this many milliseconds.
    Timeout(u64),
    /// Applied, then the connection is closed without an answer.
    Drop,
    /// The connection is closed before the request is applied.
    Reset,
    /// Applied and answered, without these top-level fields (of the body,
    /// and of each `results` row; `*`: all of them): what the reference
    /// allows for every field it does not mark required.
    Omit(Vec<String>),
}

impl Fault {
    pub fn name(&self) -> String {
        match self {
            Fault::Status(s) => s.to_string(),
            Fault::Throttle(Some(after)) if after == "1" => "429".into(),
            Fault::Throttle(None) => "429 without Retry-After".into(),
            Fault::Throttle(Some(after)) => format!("429 Retry-After {after}"),
            Fault::AppliedThen(s) => format!("{s}_applied"),
            Fault::Timeout(ms) => format!("timeout {ms} ms"),
            Fault::Drop => "drop_response".into(),
            Fault::Reset => "reset".into(),
            Fault::Omit(fields) => format!("omit {}", fields.join(",")),
        }
    }

    /// Takes an `Omit` fault's fields out of an answer's body.
    pub fn strip(&self, body: &mut Value) {
        let Fault::Omit(fields) = self else { return };
        let strip_one = |v: &mut Value| {
            if let Value::Object(map) = v {
                match fields.iter().any(|f| f == "*") {
                    true => map.clear(),
                    false => fields.iter().for_each(|f| drop(map.remove(f))),
                }
            }
        };
        if let Some(Value::Array(rows)) = body.get_mut("results") {
            rows.iter_mut().for_each(strip_one);
        } else {
            strip_one(body);
        }
    }
}

#[derive(Debug, Clone)]
struct Rule {
    method: String,
    segments: Vec<String>,
    path: String,
    fault: Fault,
    left: u64,
}

#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<Rule>,
}

fn segments(path: &str) -> Vec<String> {
    path.trim_end_matches('/').split('/').map(str::to_string).collect()
}

impl Faults {
    /// Adds a rule from the control API's body; Err names what is wrong.
    pub fn add(&mut self, body: &Value) -> Result<(), String> {
        if self.rules.len() >= MAX_RULES {
            return Err(format!("at most {MAX_RULES} fault rules; DELETE /_fake/faults first"));
        }
        let method = body.get("method").and_then(Value::as_str).unwrap_or("*").to_ascii_uppercase();
        let path = body.get("path").and_then(Value::as_str).ok_or("path: required (a prefix such as /api/v1/)")?;
        if !path.starts_with('/') {
            return Err("path: must start with /".into());
        }
        let times = body.get("times").map_or(Some(1), Value::as_u64).ok_or("times: must be a whole number")?;
        let delay =
            body.get("delay_ms").map_or(Some(30_000), Value::as_u64).ok_or("delay_ms: must be a whole number")?;
        let fault = match body.get("fault").and_then(Value::as_str) {
            Some("400") => Fault::Status(400),
            Some("429") => Fault::Throttle(match body.get("retry_after") {
                None => Some("1".into()),
                Some(Value::Null) => None,
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(Value::String(t)) if !t.is_empty() && t.len() <= 64 => Some(t.clone()),
                Some(_) => return Err("retry_after: seconds, an HTTP-date (at most 64 characters) or null".into()),
            }),
            Some(code @ ("500" | "502" | "503" | "504")) => Fault::Status(code.parse().unwrap_or(500)),
            Some(code @ ("500_applied" | "502_applied" | "503_applied" | "504_applied")) => {
                Fault::AppliedThen(code[..3].parse().unwrap_or(502))
            }
            Some("timeout") => Fault::Timeout(delay.min(600_000)),
            Some("drop_response") => Fault::Drop,
            Some("reset") => Fault::Reset,
            Some("omit") => {
                let fields =
                    body.get("fields").and_then(Value::as_array).ok_or("fields: required for omit (a list)")?;
                let fields: Option<Vec<String>> = fields.iter().map(|f| f.as_str().map(str::to_string)).collect();
                Fault::Omit(fields.filter(|f| !f.is_empty()).ok_or("fields: a non-empty list of field names")?)
            }
            other => {
                return Err(format!(
                    "fault: {other:?} is not one of 400, 429, 500, 502, 503, timeout, drop_response, reset, omit"
                ))
            }
        };
        self.rules.push(Rule { method, segments: segments(path), path: path.into(), fault, left: times });
        Ok(())
    }

    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The fault for this call, if a rule matches (the first added first); uses one of its times.
    pub fn take(&mut self, method: &str, path: &str) -> Option<Fault> {
        let request = segments(path);
        let rule = self.rules.iter_mut().find(|r| {
            r.left > 0
                && (r.method == "*" || r.method == method)
                && r.segments.len() <= request.len()
                && r.segments.iter().zip(&request).all(|(want, got)| want == "*" || want == got)
        })?;
        rule.left -= 1;
        let fault = rule.fault.clone();
        self.rules.retain(|r| r.left > 0);
        Some(fault)
    }

    pub fn to_json(&self) -> Value {
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| json!({"method": r.method, "path": r.path, "fault": r.fault.name(), "times_left": r.left}))
            .collect();
        Value::Array(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_matches_by_prefix_with_wildcards_and_runs_out() {
        let mut f = Faults::default();
        f.add(&json!({"method": "POST", "path": "/api/v1/submissions/*/transition/", "fault": "503", "times": 2}))
            .unwrap();
        assert_eq!(f.take("GET", "/api/v1/submissions/abc/transition/"), None);
        assert_eq!(f.take("POST", "/api/v1/submissions/abc/"), None);
        assert_eq!(f.take("POST", "/api/v1/submissions/abc/transition/"), Some(Fault::Status(503)));
        assert_eq!(f.take("POST", "/api/v1/submissions/def/transition/"), Some(Fault::Status(503)));
        assert_eq!(f.take("POST", "/api/v1/submissions/def/transition/"), None);
    }

    #[test]
    fn bad_rules_are_refused_with_the_field() {
        let mut f = Faults::default();
        let err = f.add(&json!({"path": "/api/", "fault": "418"})).unwrap_err();
        assert!(err.starts_with("fault:"), "{err}");
        assert!(f.add(&json!({"fault": "500"})).unwrap_err().starts_with("path:"));
        f.add(&json!({"path": "/api/", "fault": "timeout", "delay_ms": 5})).unwrap();
        assert_eq!(f.take("DELETE", "/api/v1/studies/x/"), Some(Fault::Timeout(5)));
    }

    #[test]
    fn throttles_and_gateway_errors_come_as_prolific_and_its_gateways_send_them() {
        let mut f = Faults::default();
        let mut one = |rule: Value| f.add(&rule).map(|()| f.take("POST", "/api/v1/x/").unwrap());
        assert_eq!(one(json!({"path": "/api/", "fault": "429"})), Ok(Fault::Throttle(Some("1".into()))));
        assert_eq!(one(json!({"path": "/api/", "fault": "429", "retry_after": null})), Ok(Fault::Throttle(None)));
        assert_eq!(
            one(json!({"path": "/api/", "fault": "429", "retry_after": 3600})),
            Ok(Fault::Throttle(Some("3600".into())))
        );
        let date = "Wed, 21 Oct 2026 07:28:00 GMT";
        assert_eq!(
            one(json!({"path": "/api/", "fault": "429", "retry_after": date})),
            Ok(Fault::Throttle(Some(date.into())))
        );
        assert!(one(json!({"path": "/api/", "fault": "429", "retry_after": []}))
            .unwrap_err()
            .starts_with("retry_after:"));
        assert_eq!(one(json!({"path": "/api/", "fault": "504"})), Ok(Fault::Status(504)));
        assert_eq!(one(json!({"path": "/api/", "fault": "502_applied"})), Ok(Fault::AppliedThen(502)));
        assert_eq!(Fault::AppliedThen(504).name(), "504_applied");
    }

    #[test]
    fn an_omit_fault_takes_fields_out_of_the_body_and_its_rows() {
        let mut f = Faults::default();
        assert!(f.add(&json!({"path": "/api/v1/", "fault": "omit"})).unwrap_err().contains("fields"));
        f.add(&json!({"path": "/api/v1/", "fault": "omit", "fields": ["bonus_payments"]})).unwrap();
        let omit = f.take("GET", "/api/v1/submissions/s/").unwrap();
        let mut one = json!({"id": "s", "bonus_payments": [50]});
        omit.strip(&mut one);
        assert_eq!(one, json!({"id": "s"}));
        let mut list = json!({"results": [{"id": "a", "bonus_payments": []}], "meta": {"count": 1}});
        omit.strip(&mut list);
        assert_eq!(list, json!({"results": [{"id": "a"}], "meta": {"count": 1}}));
        let mut all = json!({"total_cost": 100, "fees": 30});
        Fault::Omit(vec!["*".into()]).strip(&mut all);
        assert_eq!(all, json!({}));
    }
}
