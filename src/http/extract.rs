//! Extractors every API handler shares: the logged-in caller.
use crate::accounts::{self, SessionUser};
use crate::error::ServiceError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tower_sessions::Session;

/// The logged-in caller; 401 when there is none.
pub struct Caller(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|_| ServiceError::Internal("session layer missing".into()))?;
        accounts::current_user(&session).await.map(Caller).ok_or(ServiceError::Unauthorized)
    }
}

impl Caller {
    pub fn researcher(self) -> Result<SessionUser, ServiceError> {
        if self.0.role.may_research() {
            Ok(self.0)
        } else {
            Err(ServiceError::Forbidden("researchers and admins only".into()))
        }
    }
}
