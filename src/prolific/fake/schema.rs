//! Prolific's own API reference (docs/reference/prolific-openapi.yml, embedded
//! unmodified) and a validator for the JSON-schema subset it uses: `$ref`,
//! `type` (also as a list with 'null'), `nullable`, `enum`, `const`,
//! `required`, `properties`, `additionalProperties`, `items`, `oneOf`,
//! `anyOf`, `allOf`, the length, range and size bounds, and the formats
//! `date-time`, `uuid`, `uri`, `email` and `objectId`.
//!
//! Two deliberate choices (docs/prolific.md, "The fake Prolific"): `oneOf` is
//! checked as `anyOf` (the reference's own oneOfs overlap: an integer is also
//! a number), and a request body field the schema does not name is refused
//! (Prolific ignores it silently, which hides a client's typo).
use serde_json::Value;
use std::sync::OnceLock;

const REFERENCE: &str = include_str!("../../../docs/reference/prolific-openapi.yml");

/// Nesting deeper than this is refused rather than followed (the filters' composite groups recurse).
const MAX_DEPTH: usize = 64;

static NULL: Value = Value::Null;

/// The parsed reference, once per process (the first request or the start-up pays ~0.2 s).
pub fn reference() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_yaml::from_str(REFERENCE).expect("docs/reference/prolific-openapi.yml parses"))
}

/// The reference's operation for a path template (as the reference spells it) and a method.
pub fn operation(template: &str, method: &str) -> Option<&'static Value> {
    reference().get("paths")?.get(template)?.get(method.to_ascii_lowercase())
}

/// The schema of an operation's JSON request body, when it has one.
pub fn request_schema(template: &str, method: &str) -> Option<&'static Value> {
    operation(template, method)?.get("requestBody")?.get("content")?.get("application/json")?.get("schema")
}

/// Whether the operation's answer with this status is the bare
/// `ErrorDetail` (a few of Prolific's operations), not the `{"error": …}`
/// envelope the rest use.
pub fn bare_error(template: &str, method: &str, status: u16) -> bool {
    let reference = operation(template, method)
        .and_then(|op| {
            op.get("responses")?
                .get(status.to_string())?
                .get("content")?
                .get("application/json")?
                .get("schema")?
                .get("$ref")
        })
        .and_then(Value::as_str);
    reference == Some("#/components/schemas/ErrorDetail")
}

/// A named schema of `components.schemas`.
pub fn component(name: &str) -> Option<&'static Value> {
    reference().get("components")?.get("schemas")?.get(name)
}

/// One refusal: the field (a JSON path such as `completion_codes[0].code`) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub field: String,
    pub reason: String,
}

/// Every way `value` fails `schema` (empty when it conforms). `strict` refuses
/// properties an object schema does not name.
pub fn validate(schema: &Value, value: &Value, strict: bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    check(schema, value, "", strict, 0, &mut problems);
    problems
}

fn resolve(schema: &Value) -> &Value {
    let mut schema = schema;
    for _ in 0..16 {
        let Some(target) = schema.get("$ref").and_then(Value::as_str) else { break };
        let Some(name) = target.strip_prefix("#/components/schemas/") else { break };
        match component(name) {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

fn field(path: &str) -> String {
    if path.is_empty() {
        "body".into()
    } else {
        path.to_string()
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn push(out: &mut Vec<Problem>, path: &str, reason: String) {
    out.push(Problem { field: field(path), reason });
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn check(schema: &Value, value: &Value, path: &str, strict: bool, depth: usize, out: &mut Vec<Problem>) {
    if depth > MAX_DEPTH {
        push(out, path, format!("nested deeper than {MAX_DEPTH} levels"));
        return;
    }
    let schema = resolve(schema);
    let Some(obj) = schema.as_object() else { return };
    if value.is_null() && obj.get("nullable").and_then(Value::as_bool) == Some(true) {
        return;
    }
    if let Some(ty) = obj.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| is_type(value, t)) {
            let wanted = types.join(" or ");
            push(out, path, format!("expected {wanted}, got {}", type_name(value)));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = obj.get("enum") {
        if !allowed.contains(value) {
            let names: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
            push(out, path, format!("{value}{ENUM_MISS}{}", names.join(", ")));
            return;
        }
    }
    if let Some(expected) = obj.get("const") {
        if expected != value {
            push(out, path, format!("must be {expected}"));
        }
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            any_of(branches, value, path, strict, depth, out);
        }
    }
    if let Some(Value::Array(branches)) = obj.get("allOf") {
        for branch in branches {
            check(branch, value, path, false, depth + 1, out);
        }
    }
    match value {
        Value::String(s) => string_bounds(obj, s, path, out),
        Value::Number(n) => number_bounds(obj, n.as_f64().unwrap_or(0.0), path, out),
        Value::Array(items) => {
            array_bounds(obj, items.len(), path, out);
            if let Some(item_schema) = obj.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{path}[{i}]"), strict, depth + 1, out);
                }
            }
        }
        Value::Object(map) => object(obj, map, path, strict, depth, out),
        _ => {}
    }
}

/// Passes when one branch passes; otherwise reports the branch that failed least.
fn any_of(branches: &[Value], value: &Value, path: &str, strict: bool, depth: usize, out: &mut Vec<Problem>) {
    let mut best: Option<Vec<Problem>> = None;
    let mut all = Vec::new();
    for branch in branches {
        let mut found = Vec::new();
        check(branch, value, path, strict, depth + 1, &mut found);
        if found.is_empty() {
            return;
        }
        if best.as_ref().is_none_or(|b| found.len() < b.len()) {
            best = Some(found.clone());
        }
        all.extend(found);
    }
    let mut best = best.unwrap_or_default();
    // One field with a value no branch allows (e.g. an unknown action): name every allowed value.
    if let [only] = best.as_mut_slice() {
        if let Some((value, _)) = only.reason.split_once(ENUM_MISS) {
            let mut allowed: Vec<&str> = Vec::new();
            for p in all.iter().filter(|p| p.field == only.field) {
                let list = p.reason.split_once(ENUM_MISS).map(|(_, l)| l).unwrap_or("");
                allowed.extend(list.split(", ").filter(|a| !a.is_empty()));
            }
            allowed.dedup();
            only.reason = format!("{value}{ENUM_MISS}{}", allowed.join(", "));
        }
    }
    out.extend(best);
}

const ENUM_MISS: &str = " is not one of ";

fn object(
    obj: &serde_json::Map<String, Value>,
    map: &serde_json::Map<String, Value>,
    path: &str,
    strict: bool,
    depth: usize,
    out: &mut Vec<Problem>,
) {
    if let Some(Value::Array(required)) = obj.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                push(out, &child(path, name), "this field is required".into());
            }
        }
    }
    let properties = obj.get("properties").and_then(Value::as_object);
    let additional = obj.get("additionalProperties");
    for (key, item) in map {
        let at = child(path, key);
        match properties.and_then(|p| p.get(key)) {
            Some(prop) => check(prop, item, &at, strict, depth + 1, out),
            None => match additional {
                Some(Value::Bool(false)) => push(out, &at, "unknown field".into()),
                Some(s @ Value::Object(_)) => check(s, item, &at, strict, depth + 1, out),
                _ if strict && properties.is_some_and(|p| !p.is_empty()) => {
                    push(out, &at, "unknown field: the reference's schema has no such property".into())
                }
                _ => {}
            },
        }
    }
    let count = map.len() as u64;
    if obj.get("minProperties").and_then(Value::as_u64).is_some_and(|m| count < m) {
        push(out, path, "too few properties".into());
    }
    if obj.get("maxProperties").and_then(Value::as_u64).is_some_and(|m| count > m) {
        push(out, path, "too many properties".into());
    }
}

fn string_bounds(obj: &serde_json::Map<String, Value>, s: &str, path: &str, out: &mut Vec<Problem>) {
    let len = s.chars().count() as u64;
    if let Some(min) = obj.get("minLength").and_then(Value::as_u64).filter(|m| len < *m) {
        push(out, path, format!("must be at least {min} characters long (is {len})"));
    }
    if let Some(max) = obj.get("maxLength").and_then(Value::as_u64).filter(|m| len > *m) {
        push(out, path, format!("must be at most {max} characters long (is {len})"));
    }
    let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
    if !format_ok(format, s) {
        push(out, path, format!("{s:?} is not a valid {format}"));
    }
}

fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "date-time" => time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok(),
        "uuid" => {
            let parts: Vec<&str> = s.split('-').collect();
            parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
                && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        "uri" => s.split_once("://").is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        "email" => s.split_once('@').is_some_and(|(a, b)| !a.is_empty() && b.contains('.')),
        "objectId" => s.len() == 24 && s.chars().all(|c| c.is_ascii_hexdigit()),
        _ => true,
    }
}

fn number_bounds(obj: &serde_json::Map<String, Value>, n: f64, path: &str, out: &mut Vec<Problem>) {
    if let Some(min) = obj.get("minimum").and_then(Value::as_f64).filter(|m| n < *m) {
        push(out, path, format!("must be at least {min}"));
    }
    if let Some(max) = obj.get("maximum").and_then(Value::as_f64).filter(|m| n > *m) {
        push(out, path, format!("must be at most {max}"));
    }
    if let Some(min) = obj.get("exclusiveMinimum").and_then(Value::as_f64).filter(|m| n <= *m) {
        push(out, path, format!("must be more than {min}"));
    }
    if let Some(max) = obj.get("exclusiveMaximum").and_then(Value::as_f64).filter(|m| n >= *m) {
        push(out, path, format!("must be less than {max}"));
    }
}

fn array_bounds(obj: &serde_json::Map<String, Value>, len: usize, path: &str, out: &mut Vec<Problem>) {
    let len = len as u64;
    if let Some(min) = obj.get("minItems").and_then(Value::as_u64).filter(|m| len < *m) {
        push(out, path, format!("must hold at least {min} items (holds {len})"));
    }
    if let Some(max) = obj.get("maxItems").and_then(Value::as_u64).filter(|m| len > *m) {
        push(out, path, format!("must hold at most {max} items (holds {len})"));
    }
}

/// Checks a query string against the operation's `in: query` parameters:
/// required ones present, each value of its schema's type and enum. An
/// object-typed parameter is read exploded (its properties are the query's
/// own names), as OpenAPI's default `form` style sends it.
pub fn validate_query(template: &str, method: &str, query: &[(String, String)]) -> Vec<Problem> {
    let mut out = Vec::new();
    let Some(Value::Array(params)) = operation(template, method).and_then(|op| op.get("parameters")) else {
        return out;
    };
    for param in params.iter().filter(|p| p.get("in").and_then(Value::as_str) == Some("query")) {
        let name = param.get("name").and_then(Value::as_str).unwrap_or("");
        let required = param.get("required").and_then(Value::as_bool) == Some(true);
        let schema = param.get("schema").map(resolve).unwrap_or(&NULL);
        if is_object_param(schema) {
            let obj: serde_json::Map<String, Value> =
                query.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            let mut found = Vec::new();
            check(schema, &Value::Object(obj), "", false, 0, &mut found);
            if required && !found.is_empty() {
                out.extend(found.into_iter().map(|p| Problem { field: format!("{name} ({})", p.field), ..p }));
            }
            continue;
        }
        let Some((_, raw)) = query.iter().find(|(k, _)| k == name) else {
            if required {
                out.push(Problem { field: name.into(), reason: "this query parameter is required".into() });
            }
            continue;
        };
        // GET /api/v1/studies/'s `state` also takes "(active|published|...)", as its description says.
        if let Some(inner) = raw.strip_prefix('(').and_then(|r| r.strip_suffix(')')).filter(|_| name == "state") {
            let allowed = schema.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
            for alt in inner.split('|').map(|a| a.trim().to_ascii_uppercase()) {
                if alt != "PUBLISHED" && !allowed.iter().any(|v| v.as_str() == Some(&alt)) {
                    out.push(Problem { field: name.into(), reason: format!("{alt:?} is not a study status") });
                }
            }
            continue;
        }
        let typed = typed_query_value(schema, raw);
        let mut found = Vec::new();
        check(schema, &typed, name, false, 0, &mut found);
        out.extend(found);
    }
    out
}

fn is_object_param(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        || schema
            .get("oneOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().all(|b| resolve(b).get("type").and_then(Value::as_str) == Some("object")))
}

/// A query value as the JSON its schema's type asks for (unparseable values stay strings, and fail).
fn typed_query_value(schema: &Value, raw: &str) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => raw.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(raw.into())),
        Some("number") => raw.parse::<f64>().map(Value::from).unwrap_or_else(|_| Value::String(raw.into())),
        Some("boolean") => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(raw.into()),
        },
        _ => Value::String(raw.into()),
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
