//! The survey without JavaScript (or before the wasm has loaded): each
//! option is a submit button of a plain HTML form posting here. The answer
//! goes through the same service as the API and the page's server function,
//! then a 303 sends the browser back to the survey page, which renders the
//! next item on the server. The cross-site check (`origin.rs`) covers these
//! posts like every other, and the page guard the `/annotate` ones.
use super::extract::Caller;
use crate::domain::ids::{StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::tasks;
use crate::ui_kit::error_page;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/annotate/{id}/start", post(start))
        .route("/annotate/{id}/answer", post(|s, id, c, f| answer(s, id, c, f, "/annotate")))
        .route("/take/{id}/answer", post(|s, id, c, f| answer(s, id, c, f, "/take")))
}

#[derive(Deserialize)]
struct AnswerForm {
    task_id: TaskId,
    option: String,
    /// A qualifier of the option, stored as `option:tag` (the triplet check's error tag).
    #[serde(default)]
    tag: Option<String>,
    /// The free-text part of a kind that declares one.
    #[serde(default)]
    text: Option<String>,
}

async fn start(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Caller, ServiceError>,
) -> Response {
    let back = format!("/annotate/{id}");
    let started = async {
        let Caller(user) = caller?;
        tasks::start(&state, &user, id).await
    };
    match started.await {
        Ok(_) => Redirect::to(&back).into_response(),
        // A page for people, with a way back to the survey.
        Err(e) => error_page::service_error(e, &back),
    }
}

async fn answer(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Caller, ServiceError>,
    Form(form): Form<AnswerForm>,
    area: &str,
) -> Response {
    let back = format!("{area}/{id}");
    let stored = async {
        let Caller(user) = caller?;
        let option = match form.tag.as_deref().filter(|t| !t.is_empty()) {
            Some(tag) => format!("{}:{tag}", form.option),
            None => form.option.clone(),
        };
        tasks::answer_with_text(&state, &user, form.task_id, &option, form.text.as_deref(), None).await
    };
    match stored.await {
        Ok(_) => Redirect::to(&back).into_response(),
        // A page for people, with a way back to the survey.
        Err(e) => error_page::service_error(e, &back),
    }
}
