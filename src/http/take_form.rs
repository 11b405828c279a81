//! The participant's steps without JavaScript (or before the wasm has
//! loaded), as `survey_form.rs` does for the bundle's items: consent,
//! instructions, the comprehension check, practice and giving the study
//! back are plain form posts here. Each goes through the same `crowd::`
//! service as the API and the page's server functions (which check the
//! caller's own place in the study), then a 303 sends the browser back to
//! `/take/{id}`, rendered whole on the server. The cross-site check
//! (`origin.rs`) covers these posts like every other.
use super::extract::Participant;
use crate::crowd::{self, Stage};
use crate::domain::ids::StudyId;
use crate::domain::ids::TaskId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::ui::take::view::{practice_index, FeedbackQuery};
use crate::ui::take::Step;
use crate::ui_kit::error_page;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/take/{id}/step", post(step))
        .route("/take/{id}/comprehension", post(comprehension))
        .route("/take/{id}/practice", post(practice))
}

/// The caller, checked before the form is read (a caller of another role
/// learns nothing of its fields), and the form; else the refusal to send.
#[allow(clippy::result_large_err)]
fn participant_and<T>(
    id: StudyId,
    caller: Result<Participant, ServiceError>,
    form: Result<Form<T>, FormRejection>,
) -> Result<(crate::accounts::SessionUser, T), Response> {
    let Participant(user) = caller.map_err(|e| answered(id, Err(e)))?;
    let Form(form) =
        form.map_err(|e| crate::error::form_rejection(e).map_or_else(|res| res, |e| answered(id, Err(e))))?;
    Ok((user, form))
}

/// Back to the participant's page, or a page for people saying what went wrong.
fn answered(id: StudyId, done: Result<String, ServiceError>) -> Response {
    match done {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(e) => error_page::service_error(e, &format!("/take/{id}")),
    }
}

#[derive(Deserialize)]
struct StepForm {
    step: Step,
    /// The consent box; a browser leaves an unticked box out of the form.
    consent: Option<String>,
}

async fn step(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Participant, ServiceError>,
    form: Result<Form<StepForm>, FormRejection>,
) -> Response {
    let (user, form) = match participant_and(id, caller, form) {
        Ok(both) => both,
        Err(refused) => return refused,
    };
    let done = async {
        match form.step {
            Step::Consent if form.consent.is_none() => {
                return Err(ServiceError::Invalid(crate::ui::take::steps::TICK_CONSENT.into()));
            }
            Step::Consent => crowd::accept_consent(&state, &user, id).await?,
            Step::Instructions => crowd::instructions_read(&state, &user, id).await?,
            Step::Return => crowd::return_study(&state, &user, id).await?,
        };
        Ok(format!("/take/{id}"))
    };
    answered(id, done.await)
}

/// The check's radio groups `q0`, `q1`, …, each the index of the chosen
/// option. Numbered from 0 without a gap: a number past the answers given
/// is a question without an answer, found without making room for it (a
/// posted `q99999999999` once allocated gigabytes).
fn comprehension_answers(fields: &[(String, String)]) -> Result<Vec<usize>, ServiceError> {
    let mut given = std::collections::BTreeMap::new();
    for (name, value) in fields {
        let Some(q) = name.strip_prefix('q').and_then(|q| q.parse::<usize>().ok()) else { continue };
        let chosen = value.parse().map_err(|_| {
            ServiceError::Invalid(format!("question {}: {:?} is no option", q as u128 + 1, short(value)))
        })?;
        given.insert(q, chosen);
    }
    (0..given.len())
        .map(|q| {
            given.get(&q).copied().ok_or_else(|| ServiceError::Invalid(format!("question {} has no answer", q + 1)))
        })
        .collect()
}

/// A posted value as quoted back in an error: its first 40 characters.
fn short(value: &str) -> String {
    match value.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &value[..cut]),
        None => value.to_string(),
    }
}

async fn comprehension(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Participant, ServiceError>,
    fields: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let (user, fields) = match participant_and(id, caller, fields) {
        Ok(both) => both,
        Err(refused) => return refused,
    };
    let done = async {
        crowd::comprehension_answer(&state, &user, id, &comprehension_answers(&fields)?).await?;
        Ok(format!("/take/{id}"))
    };
    answered(id, done.await)
}

/// A practice item's option, posted by the same task card as the bundle's items.
#[derive(Deserialize)]
struct PracticeForm {
    task_id: TaskId,
    option: String,
}

/// The feedback goes in the address of the page it redirects to (it is
/// not stored), with the labels as shown when the item is the current one.
async fn practice(
    State(state): State<AppState>,
    Path(id): Path<StudyId>,
    caller: Result<Participant, ServiceError>,
    form: Result<Form<PracticeForm>, FormRejection>,
) -> Response {
    let (user, form) = match participant_and(id, caller, form) {
        Ok(both) => both,
        Err(refused) => return refused,
    };
    let done = async {
        let index = practice_index(form.task_id)
            .ok_or_else(|| ServiceError::Invalid(format!("task {} is no practice item", form.task_id)))?;
        let labels = match crowd::stage(&state, &user, id).await? {
            Stage::Practice(p) if p.index == index => p.options,
            _ => Vec::new(),
        };
        let f = crowd::practice_answer(&state, &user, id, index, &form.option).await?;
        let label =
            |shown: &str| labels.iter().find(|o| o.id == shown).map_or_else(|| shown.to_string(), |o| o.label.clone());
        let query = FeedbackQuery { correct: f.correct, chosen: label(&f.chosen), right: label(&f.right) };
        Ok(format!("/take/{id}?{}", query.encode()))
    };
    answered(id, done.await)
}

#[cfg(test)]
mod tests {
    use super::comprehension_answers;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn radio_groups_become_one_answer_per_question_in_order() {
        let got = comprehension_answers(&fields(&[("q1", "0"), ("q0", "2"), ("other", "x")])).unwrap();
        assert_eq!(got, vec![2, 0]);
    }

    #[test]
    fn a_skipped_question_or_a_bad_value_is_named() {
        let skipped = comprehension_answers(&fields(&[("q1", "0")])).unwrap_err();
        assert!(skipped.to_string().contains("question 1 has no answer"), "{skipped}");
        let bad = comprehension_answers(&fields(&[("q0", "x")])).unwrap_err();
        assert!(bad.to_string().contains("question 1: \"x\" is no option"), "{bad}");
    }

    #[test]
    fn a_question_number_past_the_answers_is_a_missing_answer_not_an_allocation() {
        let far = comprehension_answers(&fields(&[("q0", "1"), ("q99999999999", "1")])).unwrap_err();
        assert!(far.to_string().contains("question 2 has no answer"), "{far}");
        let last = format!("q{}", usize::MAX);
        let bad = comprehension_answers(&fields(&[(&last, "x")])).unwrap_err();
        assert!(bad.to_string().contains("question 18446744073709551616: \"x\""), "{bad}");
        let long = "y".repeat(5_000);
        let said = comprehension_answers(&fields(&[("q0", &long)])).unwrap_err().to_string();
        assert!(said.len() < 100, "the value is quoted short: {said}");
    }
}
