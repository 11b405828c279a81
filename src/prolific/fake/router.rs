//! One request through the fake: faults on demand, the token, the route (by
//! the reference's own path templates), the query and JSON body checked
//! against the reference, the handler, and the request log.
use super::faults::Fault;
use super::reply::{Call, Reply};
use super::state::{now, LogEntry};
use super::{bonuses, groups, hooks_api, schema, studies, submissions, workspaces, Fake};
use serde_json::Value;

type Handler = fn(&mut Call) -> Reply;

/// (method, the reference's path template, handler). Every template is a key of the reference's `paths`.
const ROUTES: &[(&str, &str, Handler)] = &[
    ("GET", "/api/v1/users/me/", workspaces::me),
    ("GET", "/api/v1/workspaces/", workspaces::list),
    ("GET", "/api/v1/workspaces/{workspace_id}/", workspaces::get),
    ("GET", "/api/v1/workspaces/{workspace_id}/projects/", workspaces::projects),
    ("GET", "/api/v1/workspaces/{workspace_id}/balance/", workspaces::balance),
    ("GET", "/api/v1/projects/{project_id}/", workspaces::get_project),
    ("GET", "/api/v1/projects/{project_id}/studies/", studies::list_in_project),
    ("GET", "/api/v1/studies/", studies::list),
    ("POST", "/api/v1/studies/", studies::create),
    ("GET", "/api/v1/studies/{id}/", studies::get),
    ("PATCH", "/api/v1/studies/{id}/", studies::update),
    ("DELETE", "/api/v1/studies/{id}/", studies::delete),
    ("POST", "/api/v1/studies/{id}/transition/", studies::transition),
    ("GET", "/api/v1/studies/{id}/cost/", studies::cost),
    ("POST", "/api/v1/study-cost-calculator/", studies::calculate),
    ("GET", "/api/v1/studies/{id}/submissions/", submissions::list_of_study),
    ("GET", "/api/v1/studies/{id}/submissions/counts/", submissions::counts),
    ("GET", "/api/v1/submissions/", submissions::list),
    ("POST", "/api/v1/submissions/bulk-approve/", submissions::bulk_approve),
    ("POST", "/api/v1/submissions/bonus-payments/", bonuses::set_up),
    ("GET", "/api/v1/submissions/{id}/", submissions::get),
    ("POST", "/api/v1/submissions/{id}/transition/", submissions::transition),
    ("POST", "/api/v1/submissions/{id}/request-return/", submissions::request_return),
    ("POST", "/api/v1/bulk-bonus-payments/{id}/pay/", bonuses::pay),
    ("GET", "/api/v1/participant-groups/", groups::list),
    ("POST", "/api/v1/participant-groups/", groups::create),
    ("GET", "/api/v1/participant-groups/{id}/", groups::get),
    ("PATCH", "/api/v1/participant-groups/{id}/", groups::update),
    ("DELETE", "/api/v1/participant-groups/{id}/", groups::delete),
    ("GET", "/api/v1/participant-groups/{id}/participants/", groups::members),
    ("POST", "/api/v1/participant-groups/{id}/participants/", groups::add),
    ("DELETE", "/api/v1/participant-groups/{id}/participants/", groups::remove),
    ("GET", "/api/v1/hooks/event-types/", hooks_api::event_types),
    ("GET", "/api/v1/hooks/secrets/", hooks_api::list_secrets),
    ("POST", "/api/v1/hooks/secrets/", hooks_api::create_secret),
    ("GET", "/api/v1/hooks/subscriptions/", hooks_api::list_subscriptions),
    ("POST", "/api/v1/hooks/subscriptions/", hooks_api::create_subscription),
    ("GET", "/api/v1/hooks/subscriptions/{subscription_id}/", hooks_api::get_subscription),
    ("POST", "/api/v1/hooks/subscriptions/{subscription_id}/", hooks_api::confirm_subscription),
    ("PATCH", "/api/v1/hooks/subscriptions/{subscription_id}/", hooks_api::update_subscription),
    ("DELETE", "/api/v1/hooks/subscriptions/{subscription_id}/", hooks_api::delete_subscription),
    ("GET", "/api/v1/hooks/subscriptions/{subscription_id}/events/", hooks_api::events),
];

/// A request as the server read it.
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

/// The answer and what happens to it: `Some(fault)` strikes after the request was applied.
pub struct Outcome {
    pub reply: Reply,
    pub fault: Option<Fault>,
}

/// The path's `{…}` values when `path` fits `template`, with how many literal segments matched.
fn fit(template: &str, path: &str) -> Option<(usize, Vec<String>)> {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    if t.len() != p.len() {
        return None;
    }
    let mut params = Vec::new();
    let mut literal = 0;
    for (a, b) in t.iter().zip(&p) {
        if a.starts_with('{') {
            if b.is_empty() {
                return None;
            }
            params.push(b.to_string());
        } else if a == b {
            literal += 1;
        } else {
            return None;
        }
    }
    Some((literal, params))
}

/// The route for a path: Ok((template, handler, params)), or Err(405 when another method fits, 404).
fn route(method: &str, path: &str) -> Result<(&'static str, Handler, Vec<String>), u16> {
    let mut best: Option<(usize, &'static str)> = None;
    for (_, template, _) in ROUTES {
        if let Some((literal, _)) = fit(template, path) {
            if best.is_none_or(|(b, _)| literal > b) {
                best = Some((literal, template));
            }
        }
    }
    let (_, template) = best.ok_or(404u16)?;
    let (_, _, handler) = ROUTES.iter().find(|(m, t, _)| *t == template && *m == method).ok_or(405u16)?;
    let (_, params) = fit(template, path).expect("fits");
    Ok((template, *handler, params))
}

pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Compares without stopping at the first difference, so timing does not tell how much of a token was right.
pub fn same_token(given: Option<&str>, token: &str) -> bool {
    let Some(given) = given.and_then(|h| h.strip_prefix("Token ")) else { return false };
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Prolific's API, under the state's lock; no await inside.
pub fn api(fake: &Fake, req: &Request) -> Outcome {
    let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
    let fault = state.faults.take(&req.method, &req.path);
    let (reply, after) = match fault.clone() {
        Some(Fault::Throttle(after)) => {
            let reply = Reply::error(429, "Too Many Requests", "Request was throttled.");
            (after.map_or(reply.clone(), |a| reply.with_header("retry-after", a)), None)
        }
        // The work is done; the gateway's page is all the client gets.
        Some(Fault::AppliedThen(s)) => {
            answer(fake, &mut state, req);
            (Reply::error(s, "Server Error", "The fake Prolific applied this call, then failed its answer."), None)
        }
        Some(Fault::Status(400)) => {
            (Reply::error(400, "Bad Request", "The fake Prolific was asked to refuse this call."), None)
        }
        Some(Fault::Status(s)) => {
            (Reply::error(s, "Server Error", "The fake Prolific was asked to fail this call."), None)
        }
        // Status 0 in the log: no answer at all.
        Some(Fault::Reset) => (Reply::error(0, "Reset", "connection reset"), Some(Fault::Reset)),
        Some(omit @ Fault::Omit(_)) => {
            let mut reply = answer(fake, &mut state, req);
            if let Some(body) = reply.body.as_mut() {
                omit.strip(body);
            }
            (reply, None)
        }
        other => (answer(fake, &mut state, req), other),
    };
    let mut path = req.path.clone();
    if !req.query.is_empty() {
        path = format!("{path}?{}", req.query);
    }
    state.log(LogEntry {
        method: req.method.clone(),
        path,
        status: reply.status,
        fault: fault.as_ref().map(Fault::name),
        reason: reply.reason.clone().filter(|_| reply.status >= 400),
        at: now(),
    });
    Outcome { reply, fault: after }
}

fn answer(fake: &Fake, state: &mut super::state::State, req: &Request) -> Reply {
    if !same_token(req.authorization.as_deref(), &fake.token) {
        return Reply::error(401, "Unauthorized", "Invalid token.");
    }
    let (template, handler, params) = match route(&req.method, &req.path) {
        Ok(found) => found,
        Err(405) => return Reply::error(405, "Method Not Allowed", &format!("Method \"{}\" not allowed.", req.method)),
        Err(_) => return Reply::error(404, "Not Found", &format!("No endpoint {} in the reference.", req.path)),
    };
    let mut reply = routed(fake, state, req, template, handler, params);
    // Shaped as the reference gives this operation's refusal.
    if schema::bare_error(template, &req.method, reply.status) {
        if let Some(body) = reply.body.as_mut().filter(|b| b.get("error").is_some()) {
            *body = body["error"].take();
        }
    }
    reply
}

fn routed(
    fake: &Fake,
    state: &mut super::state::State,
    req: &Request,
    template: &'static str,
    handler: Handler,
    params: Vec<String>,
) -> Reply {
    let query = parse_query(&req.query);
    let problems = schema::validate_query(template, &req.method, &query);
    if !problems.is_empty() {
        return Reply::problems(&problems);
    }
    let body = match schema::request_schema(template, &req.method) {
        None => Value::Null,
        Some(schema) => {
            let body = if req.body.iter().all(u8::is_ascii_whitespace) {
                Value::Object(Default::default())
            } else {
                match serde_json::from_slice::<Value>(&req.body) {
                    Ok(v) => v,
                    Err(e) => return Reply::invalid("body", &format!("not JSON: {e}")),
                }
            };
            let problems = schema::validate(schema, &body, true);
            if !problems.is_empty() {
                return Reply::problems(&problems);
            }
            body
        }
    };
    let mut call = Call { state, params, query, body, base: &fake.base, path: &req.path };
    let reply = handler(&mut call);
    fake.wake.notify_one();
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_an_operation_of_the_reference() {
        for (method, template, _) in ROUTES {
            assert!(schema::operation(template, method).is_some(), "{method} {template} is not in the reference");
        }
    }

    #[test]
    fn literal_segments_win_over_path_parameters() {
        let (template, _, params) = route("POST", "/api/v1/submissions/bulk-approve/").unwrap();
        assert_eq!(template, "/api/v1/submissions/bulk-approve/");
        assert!(params.is_empty());
        let (template, _, params) = route("GET", "/api/v1/submissions/abc/").unwrap();
        assert_eq!((template, params), ("/api/v1/submissions/{id}/", vec!["abc".to_string()]));
        assert_eq!(route("PUT", "/api/v1/studies/").err(), Some(405));
        assert_eq!(route("GET", "/api/v1/studies").err(), Some(404));
    }

    #[test]
    fn queries_are_decoded_and_tokens_compared_whole() {
        assert_eq!(
            parse_query("state=AWAITING%20REVIEW&a=b+c&x"),
            vec![
                ("state".to_string(), "AWAITING REVIEW".to_string()),
                ("a".into(), "b c".into()),
                ("x".into(), "".into())
            ]
        );
        assert!(same_token(Some("Token abc"), "abc"));
        assert!(!same_token(Some("Token abd"), "abc"));
        assert!(!same_token(Some("Bearer abc"), "abc"));
        assert!(!same_token(None, "abc"));
    }
}
