//! HTTP/1.1 over hyper, one task per connection, so that a fault can close
//! a connection without any answer (`drop_response`, `reset`), which an
//! axum handler cannot do.
use super::faults::Fault;
use super::router::{self, Request};
use super::{control, Fake};
use axum::body::Body;
use axum::http::{header, HeaderValue, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Request bodies larger than this are refused with 413 before they are read whole.
pub const MAX_BODY: usize = 1 << 20;

pub async fn serve(listener: tokio::net::TcpListener, fake: Arc<Fake>) -> anyhow::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!("fake prolific: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let fake = fake.clone();
        tokio::spawn(async move {
            let kill = Arc::new(Notify::new());
            let service_kill = kill.clone();
            let service = hyper::service::service_fn(move |req| {
                let (fake, kill) = (fake.clone(), service_kill.clone());
                async move { Ok::<_, Infallible>(one(&fake, req, &kill).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                // Dropping the connection closes the socket with no answer sent.
                _ = kill.notified() => {}
            }
        });
    }
}

async fn one(fake: &Fake, req: hyper::Request<Incoming>, kill: &Notify) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(Body::new(body), MAX_BODY).await {
        Ok(b) => b.to_vec(),
        Err(_) => return respond(super::reply::Reply::error(413, "Payload Too Large", "The body is over 1 MiB.")),
    };
    let request = Request {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        authorization: parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string),
        body,
    };
    if request.path.starts_with("/_fake/") {
        return respond(control::handle(fake, &request).await);
    }
    let outcome = router::api(fake, &request);
    match outcome.fault {
        Some(Fault::Drop) | Some(Fault::Reset) => {
            kill.notify_one();
            // Never answered: the connection task drops this request with the connection.
            return std::future::pending().await;
        }
        Some(Fault::Timeout(ms)) => tokio::time::sleep(Duration::from_millis(ms)).await,
        _ => {}
    }
    respond(outcome.reply)
}

fn respond(reply: super::reply::Reply) -> Response<Body> {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut res = match (&reply.body, reply.status) {
        // Gateways answer 502/503 with a page, not Prolific's JSON: clients must not count on JSON there.
        (_, 502..=504) => {
            let mut r = Response::new(Body::from(format!("<html><body><h1>{status}</h1></body></html>")));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            r
        }
        (Some(v), _) => {
            let mut r = Response::new(Body::from(v.to_string()));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        (None, _) => Response::new(Body::empty()),
    };
    *res.status_mut() = status;
    for (name, value) in reply.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            res.headers_mut().insert(name, v);
        }
    }
    res
}
