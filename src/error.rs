//! One error type for the service layer; the API maps it to status codes,
//! the server functions to the same codes and messages. Internal details
//! are logged, with the whole chain of causes, and never sent to a client.
//! Names no feature: a feature's own error converts with a `From` written
//! beside it (`accounts::AuthError`, `datasets::import::ImportError`).
use crate::api_types::{DB_UNREACHABLE, NOT_SAVED, RETRY_AFTER_SECS};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{}", crate::api_types::NOT_LOGGED_IN)]
    Unauthorized,
    #[error("unknown username or wrong password")]
    BadCredentials,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    /// A unique name or key is taken (409).
    #[error("{0}")]
    Conflict(String),
    /// Login refused for now: a backoff (429) or every password check busy (503).
    #[error("{}", .0.message())]
    Refused(crate::login_limits::Refused),
    /// Nothing can be stored right now (the disk is full): 503 with
    /// `Retry-After`; nothing was stored, and the same request may be sent again.
    #[error("{0}")]
    Unavailable(String),
    /// The thing asked about was withdrawn (an item whose place ended): 410.
    #[error("{0}")]
    Gone(String),
    /// A server-side failure told in words, with no error behind it (a
    /// corrupt stored value, an export abandoned).
    #[error("internal error: {0}")]
    Internal(String),
    /// A server-side failure and the error that caused it: `context` says
    /// what was being done, the source is kept for the log.
    #[error("internal error: {context}")]
    Caused {
        context: String,
        #[source]
        source: BoxError,
    },
}

/// The cause an internal error keeps.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a client sees for an internal error.
pub const INTERNAL_MESSAGE: &str = "internal error";

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        if crate::store::health::storage_full(&e) {
            crate::store::health::write_refused(&e);
            return ServiceError::Unavailable(NOT_SAVED.into());
        }
        // No connection to be had (PostgreSQL down or restarting, every
        // connection busy past the pool's wait): the client may try again,
        // as it may after a full disk; an internal error would say otherwise.
        if crate::store::health::out_of_reach(&e) {
            tracing::warn!("the database is out of reach: {e}");
            return ServiceError::Unavailable(DB_UNREACHABLE.into());
        }
        ServiceError::internal("database", e)
    }
}

impl From<crate::store::writer::WriteError> for ServiceError {
    fn from(e: crate::store::writer::WriteError) -> Self {
        if let crate::store::writer::WriteError::Db(cause) = &e {
            let cause: &(dyn std::error::Error + 'static) = cause.as_ref();
            if crate::store::health::storage_full(cause) {
                crate::store::health::write_refused(cause);
                return ServiceError::Unavailable(format!("your answer was {NOT_SAVED}"));
            }
            // The connection cut mid-batch (PostgreSQL restarting): the batch
            // was rolled back, the writer opens a new connection; say so, as
            // a full disk is said, so the page (or the person) sends it again.
            let cut = cause
                .downcast_ref::<sqlx::Error>()
                .is_some_and(|e| crate::store::health::out_of_reach(e) || matches!(e, sqlx::Error::Protocol(_)));
            if cut {
                tracing::warn!("an answer batch met a cut database connection: {cause}");
                return ServiceError::Unavailable(format!("your answer was {}", crate::api_types::ANSWER_CUT));
            }
        }
        ServiceError::internal("answer writer", e)
    }
}

impl From<std::io::Error> for ServiceError {
    fn from(e: std::io::Error) -> Self {
        ServiceError::internal("file system", e)
    }
}

impl From<serde_json::Error> for ServiceError {
    fn from(e: serde_json::Error) -> Self {
        ServiceError::internal("JSON", e)
    }
}

/// A spec error names its field: the caller's fault.
impl From<crate::domain::study::SpecError> for ServiceError {
    fn from(e: crate::domain::study::SpecError) -> Self {
        ServiceError::Invalid(e.to_string())
    }
}

impl ServiceError {
    pub fn status(&self) -> StatusCode {
        match self {
            ServiceError::Unauthorized | ServiceError::BadCredentials => StatusCode::UNAUTHORIZED,
            ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
            ServiceError::NotFound(_) => StatusCode::NOT_FOUND,
            ServiceError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServiceError::Conflict(_) => StatusCode::CONFLICT,
            ServiceError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Gone(_) => StatusCode::GONE,
            ServiceError::Refused(crate::login_limits::Refused::Backoff(_)) => StatusCode::TOO_MANY_REQUESTS,
            ServiceError::Refused(crate::login_limits::Refused::Busy) => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Internal(_) | ServiceError::Caused { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// An internal error that keeps `source` as its cause:
    /// `map_err(|e| ServiceError::internal("reading the card", e))`.
    pub fn internal(context: impl Into<String>, source: impl Into<BoxError>) -> ServiceError {
        ServiceError::Caused { context: context.into(), source: source.into() }
    }

    /// This error and each cause under it, outermost first: what the log
    /// shows. A cause whose text its wrapper already printed is not repeated.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            let line = e.to_string();
            if !text.contains(&line) {
                text.push_str(": ");
                text.push_str(&line);
            }
            cause = e.source();
        }
        text
    }

    /// The message a client may see; logs an internal error, whose text
    /// and causes (a database or file-system message) stay in the log.
    pub fn public_message(&self) -> String {
        match self {
            ServiceError::Internal(_) | ServiceError::Caused { .. } => {
                tracing::error!(error = %self.chain(), "request failed");
                INTERNAL_MESSAGE.to_string()
            }
            other => other.to_string(),
        }
    }
}

impl IntoResponse for ServiceError {
    fn into_response(self) -> Response {
        let message = self.public_message();
        let mut res = (self.status(), Json(serde_json::json!({ "error": message }))).into_response();
        if let ServiceError::Refused(r) = &self {
            res.headers_mut().insert(axum::http::header::RETRY_AFTER, r.retry_after().into());
        }
        if let ServiceError::Unavailable(_) = &self {
            res.headers_mut().insert(axum::http::header::RETRY_AFTER, RETRY_AFTER_SECS.into());
        }
        res
    }
}

/// A form post refused before its handler: one whose fields are not what
/// the page sends (a hand-made request, or a page from an older version)
/// becomes a sentence for the person's error page naming the field, not
/// axum's wording (audit AT); any other refusal (too large, not a form)
/// keeps its own response and status.
#[allow(clippy::result_large_err)]
pub fn form_rejection(e: axum::extract::rejection::FormRejection) -> Result<ServiceError, Response> {
    use axum::extract::rejection::FormRejection as R;
    match e {
        R::FailedToDeserializeForm(_) | R::FailedToDeserializeFormBody(_) => {
            let text = e.body_text();
            let detail = text.strip_prefix("Failed to deserialize form body: ").unwrap_or(&text);
            Ok(ServiceError::Invalid(format!(
                "this answer's form is not as the page sends it ({detail}): reload the page and answer again"
            )))
        }
        other => Err(other.into_response()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A wrapping error that leaves its cause to `source()`, as most do.
    #[derive(Debug, thiserror::Error)]
    #[error("reading the card's provenance")]
    struct Wrapper(#[source] std::io::Error);

    /// The log's output, kept.
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Log {
        type Writer = Log;
        fn make_writer(&'a self) -> Log {
            self.clone()
        }
    }

    #[tokio::test]
    async fn the_log_gets_the_chain_of_causes_and_the_client_only_the_safe_text() {
        let cause = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "/srv/hardneg/card.json refused");
        let e = ServiceError::from(std::io::Error::other(Wrapper(cause)));
        let log = Log::default();
        let subscriber = tracing_subscriber::fmt().with_writer(log.clone()).with_ansi(false).finish();
        let res = tracing::subscriber::with_default(subscriber, || e.into_response());
        let logged = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
        assert_eq!(logged.matches("request failed").count(), 1, "logged once: {logged}");
        assert!(logged.contains("reading the card's provenance: /srv/hardneg/card.json refused"), "{logged}");
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        assert_eq!(body, r#"{"error":"internal error"}"#);
    }

    #[test]
    fn an_internal_error_keeps_its_source_and_says_what_was_being_done() {
        let e = ServiceError::internal("scoring the audit", std::io::Error::other("the scorer exited"));
        assert_eq!(e.to_string(), "internal error: scoring the audit");
        assert_eq!(e.chain(), "internal error: scoring the audit: the scorer exited");
        assert!(std::error::Error::source(&e).is_some());
    }
}
