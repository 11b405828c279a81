//! Refuses cross-site state changes (CSRF, login CSRF): a request that is
//! not GET, HEAD or OPTIONS and whose `Origin` is not this server's own, or
//! which has no `Origin` but a browser's `Sec-Fetch-Site: cross-site` or
//! `same-site`, gets 403. Requests with neither header come from programs
//! (curl, API clients), which carry no victim's cookies, and pass.
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The origins a browser may send from: the request's own `Host`, and the
/// `--public-origin` a proxy serves the app under (e.g. `https://hardneg.example.org`).
#[derive(Clone, Default)]
pub struct Origins {
    pub public: Option<Arc<str>>,
}

pub async fn same_origin_only(State(origins): State<Origins>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let headers = req.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let refusal = match (text(header::ORIGIN.as_str()), text("sec-fetch-site")) {
        (Some(origin), _) if !is_own(origin, text(header::HOST.as_str()), &origins) => {
            Some(format!("cross-site request refused: Origin {origin} is not this server's origin"))
        }
        (None, Some(site @ ("cross-site" | "same-site"))) => {
            Some(format!("cross-site request refused: the browser marked it Sec-Fetch-Site: {site}"))
        }
        _ => None,
    };
    let Some(error) = refusal else {
        // A page's form posts to a server function too: it gets a page.
        let html = text(header::ACCEPT.as_str()).is_some_and(|a| a.contains("text/html"));
        let api = req.uri().path().starts_with("/api/") || (req.uri().path().starts_with("/sfn/") && !html);
        return session_save_said(next.run(req).await, api);
    };
    let path = req.uri().path();
    let mut res = if api_path(path) {
        (StatusCode::FORBIDDEN, Json(serde_json::json!({ "error": error }))).into_response()
    } else {
        // A page's form (JavaScript off): the app's error page, as for its other refusals.
        let plain = (StatusCode::FORBIDDEN, error).into_response();
        super::limits::plain_refusals_as_pages(plain, req.method(), path).await
    };
    if super::limits::has_body(&req) {
        super::limits::closing(&mut res);
    }
    res
}

fn api_path(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/sfn/")
}

/// tower-sessions answers a session it could not save (a full disk) with a
/// bare 500 and no body: a login showed a blank page. Said as the other
/// writes refused then are: 503, `Retry-After`, in words (the cause is in
/// the log: tower-sessions logs it).
fn session_save_said(res: Response, api: bool) -> Response {
    use hyper::body::Body;
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR || res.body().size_hint().exact() != Some(0) {
        return res;
    }
    let e = crate::error::ServiceError::Unavailable(SESSION_NOT_SAVED.into());
    match api {
        true => e.into_response(),
        false => {
            let mut page = crate::ui_kit::error_page::service_error(e, "/");
            page.headers_mut().insert(header::RETRY_AFTER, crate::api_types::RETRY_AFTER_SECS.into());
            page
        }
    }
}

const SESSION_NOT_SAVED: &str =
    "the server cannot store your session right now (its disk may be full); nothing was changed, try again in a little while";

fn is_own(origin: &str, host: Option<&str>, origins: &Origins) -> bool {
    if origins.public.as_deref().is_some_and(|p| p.trim_end_matches('/').eq_ignore_ascii_case(origin)) {
        return true;
    }
    // Behind no proxy the scheme is the server's own; the authority must be the Host.
    let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    matches!((authority, host), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_own_host_or_the_public_origin_is_own() {
        let none = Origins::default();
        assert!(is_own("http://127.0.0.1:3000", Some("127.0.0.1:3000"), &none));
        assert!(!is_own("http://evil.example", Some("127.0.0.1:3000"), &none));
        assert!(!is_own("null", Some("127.0.0.1:3000"), &none));
        assert!(!is_own("http://127.0.0.1:3000", None, &none));
        assert!(!is_own("http://127.0.0.1:30001", Some("127.0.0.1:3000"), &none));
        let public = Origins { public: Some("https://hardneg.example.org/".into()) };
        assert!(is_own("https://hardneg.example.org", Some("10.0.0.5:3000"), &public));
        assert!(!is_own("http://hardneg.example.org", Some("10.0.0.5:3000"), &public));
    }
}
