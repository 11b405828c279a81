//! `GET /api/v1/users`: every account, for admins (the admin page's list).
use crate::api_types::UserSummary;
use crate::error::ServiceError;
use crate::http::extract::Admin;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/users", get(list_users))
}

async fn list_users(State(state): State<AppState>, _: Admin) -> Result<Json<Vec<UserSummary>>, ServiceError> {
    Ok(Json(crate::accounts::list_users(&state.db).await?))
}
