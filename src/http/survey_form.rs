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
use crate::ui_kit::survey_post::{self, answer, Answered, SurveyPost};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new().route("/annotate/{id}/start", post(start)).merge(survey_post::on_survey_pages("answer", answer_form))
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
    let started = async {
        let Caller(user) = caller?;
        tasks::start(&state, &user, id).await?;
        Ok(Answered::Back)
    };
    answer(started.await, &format!("/annotate/{id}"))
}

async fn answer_form(p: SurveyPost<AnswerForm>) -> Result<Answered, ServiceError> {
    p.in_study(p.form.task_id).await?;
    let option = match p.form.tag.as_deref().filter(|t| !t.is_empty()) {
        Some(tag) => format!("{}:{tag}", p.form.option),
        None => p.form.option.clone(),
    };
    let ack = tasks::answer_with_text(&p.state, &p.user, p.form.task_id, &option, p.form.text.as_deref(), None).await?;
    // Another tab answered the item first: the page says so, as it does with JavaScript.
    if ack.duplicate && !ack.option.eq_ignore_ascii_case(option.trim()) {
        let to = format!("{}?{}", p.page, crate::api_types::ANSWERED_ELSEWHERE_QUERY);
        return Ok(Answered::Page(axum::response::Redirect::to(&to).into_response()));
    }
    Ok(Answered::Back)
}
