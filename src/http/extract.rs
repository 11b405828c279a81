//! Extractors every API handler shares: the logged-in caller, ids in the
//! path whose rejection is a 400 naming the id and the value
//! (`{"error": "path: study id must be …, not \"abc\""}`), and JSON bodies
//! and query strings whose rejections are a 422 that says what was wrong
//! (`{"error": "request body: …"}` / `"query: …"`).
use crate::domain::ids::{BundleId, InstanceId, ParseIdError, ParticipantId, StudyId, TaskId};
use crate::error::ServiceError;
use axum::extract::{FromRequest, FromRequestParts, Query, RawPathParams, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;

pub use crate::ui_kit::caller::{Admin, Annotates, Caller, Participant, Researcher};

/// A JSON body; a rejection (not JSON, wrong content type, a missing or
/// mistyped field) is 422 `request body: …`, but a body over the route's
/// limit is 413, as on every other route (docs/api.md).
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err((e.status(), Json(serde_json::json!({ "error": e.body_text() }))).into_response())
            }
            Err(e) => Err(ServiceError::Invalid(format!("request body: {}", e.body_text())).into_response()),
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

/// The ids in a route's path, in order (`/studies/{id}/adjudications/{instance}`
/// is `(StudyId, InstanceId)`), each parsed once with an error that names it.
pub struct ApiPath<T>(pub T);

/// A path that does not hold the ids its route wants: 400.
#[derive(Debug)]
pub struct PathError(String);

impl IntoResponse for PathError {
    fn into_response(self) -> Response {
        (StatusCode::BAD_REQUEST, Json(serde_json::json!({ "error": format!("path: {}", self.0) }))).into_response()
    }
}

impl From<ParseIdError> for PathError {
    fn from(e: ParseIdError) -> Self {
        PathError(e.to_string())
    }
}

/// What a path may hold: one id or two, in the route's order.
pub trait PathIds: Sized {
    fn parse(values: &[&str]) -> Result<Self, PathError>;
}

macro_rules! path_ids {
    ($($one:ty),+; $(($a:ty, $b:ty)),+) => {
        $(impl PathIds for $one {
            fn parse(values: &[&str]) -> Result<Self, PathError> {
                match values {
                    [v] => Ok(v.parse()?),
                    _ => Err(wrong_count(1, values.len())),
                }
            }
        })+
        $(impl PathIds for ($a, $b) {
            fn parse(values: &[&str]) -> Result<Self, PathError> {
                match values {
                    [a, b] => Ok((a.parse()?, b.parse()?)),
                    _ => Err(wrong_count(2, values.len())),
                }
            }
        })+
    };
}

path_ids!(StudyId, TaskId; (StudyId, InstanceId), (StudyId, BundleId), (StudyId, ParticipantId));

/// A route whose path has another number of parameters than its handler takes: a bug, logged.
fn wrong_count(want: usize, got: usize) -> PathError {
    tracing::error!(want, got, "a route's path parameters do not match its handler");
    PathError("unexpected path".into())
}

impl<T: PathIds, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = PathError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let raw = RawPathParams::from_request_parts(parts, state).await.map_err(|e| PathError(e.body_text()))?;
        let values: Vec<&str> = raw.iter().map(|(_, v)| v).collect();
        T::parse(&values).map(ApiPath)
    }
}
