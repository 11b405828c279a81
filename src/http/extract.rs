//! Extractors every API handler shares: the logged-in caller, and JSON
//! bodies and query strings whose rejections are a 422 that says what was
//! wrong (`{"error": "request body: …"}` / `"query: …"`).
use crate::accounts::{self, SessionUser};
use crate::error::ServiceError;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::Json;
use serde::de::DeserializeOwned;
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

    pub fn admin(self) -> Result<SessionUser, ServiceError> {
        if self.0.role.may_administer() {
            Ok(self.0)
        } else {
            Err(ServiceError::Forbidden("admins only".into()))
        }
    }
}

/// A JSON body; any rejection (not JSON, wrong content type, a missing or
/// mistyped field) is 422 `request body: …`.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ServiceError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(e) => Err(ServiceError::Invalid(format!("request body: {}", e.body_text()))),
        }
    }
}

/// A query string; any rejection is 422 `query: …`.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(v)) => Ok(ApiQuery(v)),
            Err(e) => Err(ServiceError::Invalid(format!("query: {}", e.body_text()))),
        }
    }
}
