//! Extractors every API handler shares: the logged-in caller, and JSON
//! bodies and query strings whose rejections are a 422 that says what was
//! wrong (`{"error": "request body: …"}` / `"query: …"`).
use crate::error::ServiceError;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::Json;
use serde::de::DeserializeOwned;

pub use crate::ui_kit::caller::Caller;

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
