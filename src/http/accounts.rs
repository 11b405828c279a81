//! `/api/v1/session`: logging in and out.
use crate::accounts;
use crate::error::ServiceError;
use crate::login_limits::ClientAddr;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use serde::Deserialize;
use tower_sessions::Session;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/session", post(login).delete(logout))
}

#[derive(Deserialize)]
struct Credentials {
    username: String,
    password: String,
}

async fn login(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    session: Session,
    Json(c): Json<Credentials>,
) -> Result<StatusCode, Response> {
    match accounts::check_credentials(&state.logins, &state.db, &c.username, &c.password, client).await {
        Ok(user) => {
            accounts::log_in(&session, &user)
                .await
                .map_err(|e| ServiceError::internal("logging in", e).into_response())?;
            Ok(StatusCode::NO_CONTENT)
        }
        Err(accounts::AuthError::BadCredentials) => Err(ServiceError::BadCredentials.into_response()),
        Err(accounts::AuthError::Refused(r)) => Err(refused(&r)),
        Err(e) => Err(ServiceError::from(e).into_response()),
    }
}

/// 429 for a backoff, 503 when every password check is busy; both say when to retry.
pub fn refused(r: &crate::login_limits::Refused) -> Response {
    let status = match r {
        crate::login_limits::Refused::Backoff(_) => StatusCode::TOO_MANY_REQUESTS,
        crate::login_limits::Refused::Busy => StatusCode::SERVICE_UNAVAILABLE,
    };
    let body = Json(serde_json::json!({ "error": r.message() }));
    (status, [(header::RETRY_AFTER, r.retry_after().to_string())], body).into_response()
}

async fn logout(session: Session) -> Result<StatusCode, ServiceError> {
    accounts::log_out(&session).await.map_err(|e| ServiceError::internal("logging out", e))?;
    Ok(StatusCode::NO_CONTENT)
}
