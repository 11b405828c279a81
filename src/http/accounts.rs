//! `/api/v1/session`: logging in and out.
use crate::accounts;
use crate::error::ServiceError;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
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
    session: Session,
    Json(c): Json<Credentials>,
) -> Result<StatusCode, ServiceError> {
    match accounts::check_credentials(&state.db, &c.username, &c.password).await {
        Ok(user) => {
            accounts::log_in(&session, &user).await.map_err(|e| ServiceError::Internal(e.to_string()))?;
            Ok(StatusCode::NO_CONTENT)
        }
        Err(accounts::AuthError::BadCredentials) => Err(ServiceError::BadCredentials),
        Err(e) => Err(ServiceError::Internal(e.to_string())),
    }
}

async fn logout(session: Session) -> Result<StatusCode, ServiceError> {
    accounts::log_out(&session).await.map_err(|e| ServiceError::Internal(e.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}
