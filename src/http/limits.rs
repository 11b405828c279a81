//! What a request may send, and how the API's own refusals read. Every body
//! is held in memory while it arrives (at the minimum body rate, a 2 MiB
//! body may take half an hour), so the default is small: what an answer, a
//! login or a join needs. The few routes a researcher sends more to raise
//! it for themselves ([`LARGE_BODY`], the import's upload limit).
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Every route's body limit unless it sets its own.
pub const SMALL_BODY: usize = 64 * 1024;
/// A study spec, a bonus list: researchers' bodies that are text, not files.
pub const LARGE_BODY: usize = 4 << 20;

/// An `/api/` request's response, with a refusal made outside the handlers
/// (a body over its limit, a method the route does not take, a path no
/// route has) as the JSON every other API error is: `{"error": …}` with the
/// same status. Run from the page guard's middleware (`http::guard`): one
/// middleware for both, as each layer costs every request.
pub async fn api_errors_as_json(req: Request, next: Next) -> Response {
    // Both are cheap: a method is an enum, a URI shares its bytes.
    let (method, uri) = (req.method().clone(), req.uri().clone());
    let res = next.run(req).await;
    let status = res.status();
    let is_json =
        res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let path = uri.path();
    let (mut parts, body) = res.into_parts();
    let said = match axum::body::to_bytes(body, 16 * 1024).await {
        Ok(b) if parts.headers.get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/plain")) => {
            String::from_utf8_lossy(&b).trim().to_string()
        }
        _ => String::new(),
    };
    let error = match status {
        StatusCode::NOT_FOUND => format!("no API route {method} {path}"),
        StatusCode::METHOD_NOT_ALLOWED => format!("{path} does not take {method}"),
        StatusCode::PAYLOAD_TOO_LARGE if said.is_empty() => "request body too large".into(),
        _ if said.is_empty() => status.canonical_reason().unwrap_or("refused").to_lowercase(),
        _ => said,
    };
    let body = serde_json::json!({ "error": error }).to_string();
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// A refusal made outside the handlers on a page or a plain form post (a
/// form over its limit, not sent as a form, a field that does not parse, an
/// id that is not a number) is axum's plain text (or, for a method the
/// address does not take, nothing at all); people get the app's error
/// page instead, with the same status. Anything else passes untouched.
pub async fn plain_refusals_as_pages(res: Response, method: &axum::http::Method, path: &str) -> Response {
    // axum's 405 comes with no body and no type at all (a GET of a form's address).
    let plain = match res.headers().get(header::CONTENT_TYPE) {
        Some(v) => v.as_bytes().starts_with(b"text/plain"),
        None => true,
    };
    let status = res.status();
    if !plain || !status.is_client_error() {
        return res;
    }
    let said = match axum::body::to_bytes(res.into_body(), 16 * 1024).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "What the form sent is larger than this page takes.".to_string(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "The form was not sent as a form.".to_string(),
        StatusCode::METHOD_NOT_ALLOWED => format!("This address does not take {method}."),
        StatusCode::NOT_FOUND => "There is no page at this address.".to_string(),
        _ if said.is_empty() => "The request could not be read.".to_string(),
        _ => said,
    };
    // Back to the page the form is on: `/take/7/step` → `/take/7`.
    let back = match path.split('/').collect::<Vec<_>>()[..] {
        ["", area @ ("take" | "annotate" | "join"), id, ..] => format!("/{area}/{id}"),
        _ => "/".to_string(),
    };
    let title = if status == StatusCode::NOT_FOUND { "Not found" } else { "That did not work" };
    let link = (back.as_str(), if back == "/" { "Go to the start page" } else { "Go back" });
    crate::ui_kit::error_page::ErrorPage { status, title, message: &message, link, who: None }.into_response()
}

/// The body limit of the route at `path`, as its router sets it
/// (`DefaultBodyLimit`; kept in step by hand: tests/api/limits.rs sends a
/// declared 4 MiB to the spec route, which must not be refused here).
fn body_limit(path: &str) -> usize {
    match path {
        "/api/v1/studies" => LARGE_BODY,
        "/api/v1/datasets/import" => super::import::MAX_UPLOAD,
        p if p.starts_with("/api/v1/studies/") && p.ends_with("/prolific/bonuses") => LARGE_BODY,
        // The webhook's own limit is the same 64 KiB.
        _ => SMALL_BODY,
    }
}

/// A `Content-Length` over the route's limit, refused before any of the
/// body is read (the limit itself counts bytes as they arrive, so such a
/// request held its connection until 64 KiB had come: audit AO). The
/// refusal reads as the route's others do: JSON under `/api/`, a page for
/// people, plain text for a server function.
pub(super) fn declared_too_large(req: &Request) -> Option<impl std::future::Future<Output = Response> + Send> {
    let declared = req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse::<u64>().ok()?;
    if declared <= body_limit(req.uri().path()) as u64 {
        return None;
    }
    Some(too_large(declared, req.method().clone(), req.uri().path().to_string()))
}

async fn too_large(declared: u64, method: axum::http::Method, path: String) -> Response {
    let status = StatusCode::PAYLOAD_TOO_LARGE;
    let said = format!("the request body ({declared} bytes) is larger than this address takes");
    if path.starts_with("/api/") {
        (status, axum::Json(serde_json::json!({ "error": said }))).into_response()
    } else if path.starts_with("/sfn/") {
        (status, said).into_response()
    } else {
        plain_refusals_as_pages((status, said).into_response(), &method, &path).await
    }
}

/// Whether the request says a body follows.
pub(super) fn has_body(req: &Request) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|n| n != "0")
}

/// A refusal that may leave the request's body unread: hyper then closes
/// the connection, so the answer says so (`Connection: close`), and a
/// client does not send its next request down a closed socket.
pub(super) fn closing(res: &mut Response) {
    res.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
}
