//! The page guard: which role a page area needs. Server functions and API
//! routes check again themselves; this keeps a page from even rendering for
//! the wrong role.
use crate::accounts;
use crate::domain::role::Role;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

fn page_rule(path: &str) -> Option<fn(Role) -> bool> {
    // Every request passes here: no allocation for the paths that are not pages.
    let under = |prefix: &str| path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if under("/annotate") {
        Some(Role::may_annotate)
    } else if under("/research") {
        Some(Role::may_research)
    } else if under("/admin") {
        Some(Role::may_administer)
    } else {
        None
    }
}

/// Also turns a server function's argument errors into 400 ([`sfn_client_errors`]),
/// the API's refusals made outside its handlers into JSON
/// (`limits::api_errors_as_json`) and a page's or form's into an error page
/// (`limits::plain_refusals_as_pages`): one middleware for all, as each layer
/// costs every request (a layer of its own cost 3.6 % of a round trip).
pub async fn guard_pages(session: tower_sessions::Session, req: Request, next: Next) -> Response {
    let with_body = super::limits::has_body(&req);
    let mut res = match super::limits::declared_too_large(&req) {
        Some(refused) => refused.await,
        None => guarded(session, req, next).await,
    };
    if with_body && res.status().is_client_error() {
        super::limits::closing(&mut res);
    }
    res
}

async fn guarded(session: tower_sessions::Session, req: Request, next: Next) -> Response {
    let Some(allowed) = page_rule(req.uri().path()) else {
        if req.uri().path().starts_with("/sfn/") {
            return sfn_client_errors(next.run(req).await).await;
        }
        if req.uri().path().starts_with("/api/") {
            return super::limits::api_errors_as_json(req, next).await;
        }
        return pages(req, next).await;
    };
    match accounts::current_user(&session).await {
        Err(e) => crate::ui_kit::error_page::service_error(e, req.uri().path()),
        Ok(None) => Redirect::to("/login").into_response(),
        Ok(Some(user)) if allowed(user.role) => pages(req, next).await,
        Ok(Some(user)) => {
            let message = format!("This page is not for the {} role.", user.role.as_str());
            crate::ui_kit::error_page::ErrorPage {
                status: StatusCode::FORBIDDEN,
                title: "Not for your role",
                message: &message,
                link: (user.role.home(), "Go to your page"),
                who: Some(&user),
            }
            .into_response()
        }
    }
}

/// A page or a form post, whose plain-text refusals become error pages.
async fn pages(req: Request, next: Next) -> Response {
    // Both are cheap: a method is an enum, a URI shares its bytes.
    let (method, uri) = (req.method().clone(), req.uri().clone());
    let res = next.run(req).await;
    if !res.status().is_client_error() {
        return res;
    }
    super::limits::plain_refusals_as_pages(res, &method, uri.path()).await
}

/// A server function's arguments that do not parse are the client's fault:
/// Leptos answers them 500 (`Args|…`, `MissingArg|…`); they become 400,
/// with the same body. Only a 500 is read.
async fn sfn_client_errors(res: Response) -> Response {
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
    };
    // Deserialization|: a body that is not UTF-8, or over the body limit.
    if [&b"Args|"[..], b"MissingArg|", b"Deserialization|"].iter().any(|p| bytes.starts_with(p)) {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_rules_cover_each_area_and_nothing_else() {
        assert!(page_rule("/annotate/3").unwrap()(Role::Annotator));
        assert!(!page_rule("/annotate").unwrap()(Role::Researcher));
        assert!(page_rule("/research").unwrap()(Role::Admin));
        assert!(!page_rule("/admin/users").unwrap()(Role::Researcher));
        assert!(page_rule("/login").is_none());
        assert!(page_rule("/annotatex").is_none());
    }
}
