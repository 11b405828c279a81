//! One error type for the service layer; the API maps it to status codes,
//! the server functions to messages.
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
    #[error("internal error: {0}")]
    Internal(String),
}

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

impl ServiceError {
    pub fn status(&self) -> StatusCode {
        match self {
            ServiceError::Unauthorized | ServiceError::BadCredentials => StatusCode::UNAUTHORIZED,
            ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
            ServiceError::NotFound(_) => StatusCode::NOT_FOUND,
            ServiceError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServiceError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ServiceError {
    fn into_response(self) -> Response {
        if let ServiceError::Internal(e) = &self {
            tracing::error!(error = %e, "request failed");
        }
        let message = match &self {
            ServiceError::Internal(_) => "internal error".to_string(),
            other => other.to_string(),
        };
        (self.status(), Json(serde_json::json!({ "error": message }))).into_response()
    }
}
