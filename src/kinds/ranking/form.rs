//! A ranking without JavaScript (or before the wasm has loaded): the card
//! gives each image a place (`rank_A=2`, …) in one form posted here; the
//! places must be a full order (`order_from_ranks`),
//! which is then answered like the hydrated card's "C,A,B", through the same
//! service, with a 303 back to the survey page (`http::survey_form` does
//! the same for one-option kinds).
use super::order_from_ranks;
use crate::domain::ids::{StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::tasks;
use crate::ui_kit::caller::Caller;
use crate::ui_kit::error_page;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/annotate/{id}/rank", post(|s, id, c, f| rank(s, id, c, f, "/annotate")))
        .route("/take/{id}/rank", post(|s, id, c, f| rank(s, id, c, f, "/take")))
}

async fn rank(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Caller, ServiceError>,
    Form(fields): Form<Vec<(String, String)>>,
    area: &str,
) -> Response {
    let page = format!("{area}/{id}");
    let ranked = async {
        let Caller(user) = caller?;
        let task_id = fields
            .iter()
            .find(|(k, _)| k == "task_id")
            .and_then(|(_, v)| v.parse::<TaskId>().ok())
            .ok_or_else(|| ServiceError::Invalid("the form has no task_id".into()))?;
        let places: Vec<(String, String)> =
            fields.iter().filter_map(|(k, v)| Some((k.strip_prefix("rank_")?.to_string(), v.clone()))).collect();
        let order = order_from_ranks(&places).map_err(ServiceError::Invalid)?;
        tasks::answer(&state, &user, task_id, &order, None).await
    };
    match ranked.await {
        Ok(_) => Redirect::to(&page).into_response(),
        Err(e) => error_page::service_error(e, &page),
    }
}
