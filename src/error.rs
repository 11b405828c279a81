//! One error type for the service layer; the API maps it to status codes,
//! the server functions to the same codes and messages. Internal details
//! are logged and never sent to a client. Names no feature: a feature's
//! own error converts with a `From` written beside it
//! (`accounts::AuthError`, `datasets::import::ImportError`).
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("not logged in")]
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
    #[error("internal error: {0}")]
    Internal(String),
}

/// What a client sees for an internal error.
pub const INTERNAL_MESSAGE: &str = "internal error";

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        ServiceError::Internal(e.to_string())
    }
}

impl From<crate::store::writer::WriteError> for ServiceError {
    fn from(e: crate::store::writer::WriteError) -> Self {
        ServiceError::Internal(e.to_string())
    }
}

impl From<std::io::Error> for ServiceError {
    fn from(e: std::io::Error) -> Self {
        ServiceError::Internal(e.to_string())
    }
}

impl From<serde_json::Error> for ServiceError {
    fn from(e: serde_json::Error) -> Self {
        ServiceError::Internal(e.to_string())
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
            ServiceError::Refused(crate::login_limits::Refused::Backoff(_)) => StatusCode::TOO_MANY_REQUESTS,
            ServiceError::Refused(crate::login_limits::Refused::Busy) => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The message a client may see; logs an internal error, whose text
    /// (a database or file-system message) stays in the log.
    pub fn public_message(&self) -> String {
        match self {
            ServiceError::Internal(e) => {
                tracing::error!(error = %e, "request failed");
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
        res
    }
}
