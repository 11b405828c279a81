//! A survey card's no-JavaScript form post, routed under both survey pages
//! (`/annotate/{id}/…` for annotators, `/take/{id}/…` for link
//! participants): the caller must be one who answers surveys (checked
//! before the form is read), the answer goes through
//! the service, then a 303 sends the browser back to the survey page, or a
//! page for people says what went wrong with a link back. The shared answer
//! form (`http::survey_form`) and the kinds' own forms use it.
use super::caller::Caller;
use super::error_page;
use crate::accounts::SessionUser;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::state::AppState;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::de::DeserializeOwned;
use std::future::Future;

/// What a handler gets: the logged-in caller, the study, the form, and the
/// survey page the post came from (`/annotate/{id}` or `/take/{id}`).
pub struct SurveyPost<T> {
    pub state: AppState,
    pub user: SessionUser,
    pub study: StudyId,
    pub form: T,
    pub page: String,
}

impl<T> SurveyPost<T> {
    /// The task a form names must be one of the page's study (its owner is
    /// checked where the answer is stored).
    pub async fn in_study(&self, task: crate::domain::ids::TaskId) -> Result<(), ServiceError> {
        crate::studies::tasks::in_study(&self.state.db, &self.user, task, self.study).await
    }
}

/// How a handled post is answered.
pub enum Answered {
    /// 303 back to the survey page, which renders the next item.
    Back,
    /// A page of its own (the writing card's words outside the vocabulary).
    Page(Response),
}

/// Routes `POST /annotate/{id}/{action}` and `POST /take/{id}/{action}` to `handler`.
pub fn on_survey_pages<T, H, Fut>(action: &str, handler: H) -> Router<AppState>
where
    T: DeserializeOwned + Send + 'static,
    H: Fn(SurveyPost<T>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Answered, ServiceError>> + Send + 'static,
{
    let under = |area: &'static str| {
        let handler = handler.clone();
        // The role before the form: a caller who answers no survey learns
        // nothing of its fields (a 401/403, never a 422 naming one).
        post(
            move |State(state): State<AppState>,
                  Path(study): Path<StudyId>,
                  caller: Result<Caller, ServiceError>,
                  form: Result<Form<T>, FormRejection>| async move {
                let page = format!("{area}/{study}");
                let done = match (caller.and_then(|Caller(user)| answers_here(area, user)), form) {
                    (Err(e), _) => Err(e),
                    (Ok(_), Err(refused)) => match crate::error::form_rejection(refused) {
                        Ok(invalid) => Err(invalid),
                        Err(response) => return response,
                    },
                    (Ok(user), Ok(Form(form))) => {
                        handler(SurveyPost { state, user, study, form, page: page.clone() }).await
                    }
                };
                answer(done, &page)
            },
        )
    };
    Router::new()
        .route(&format!("/annotate/{{id}}/{action}"), under("/annotate"))
        .route(&format!("/take/{{id}}/{action}"), under("/take"))
}

/// Who answers on this page: link participants on `/take`, annotators on `/annotate`.
fn answers_here(area: &str, user: SessionUser) -> Result<SessionUser, ServiceError> {
    match area {
        "/take" => crate::studies::link::participants_only(&user).map(|_| user),
        _ if user.role.may_annotate() => Ok(user),
        _ => Err(ServiceError::Forbidden("only annotators answer surveys".into())),
    }
}

/// Back to the survey `page`, its own page, or a page for people saying
/// what went wrong, with a way back to the survey.
pub fn answer(done: Result<Answered, ServiceError>, page: &str) -> Response {
    match done {
        Ok(Answered::Back) => Redirect::to(page).into_response(),
        Ok(Answered::Page(res)) => res,
        // The item was withdrawn as the answer came (the place ended): the page shows what is next.
        Err(ServiceError::Gone(_)) => Redirect::to(page).into_response(),
        Err(e) => error_page::service_error(e, page),
    }
}
