//! The participant's page of a link study (`/take/{id}`, docs/crowd.md):
//! consent, instructions, practice with feedback, the bundle with the
//! annotator's survey, then the completion code. What to show always comes
//! from the server (`crowd::stage`), so a reload lands on the same step.
pub(crate) mod browser;
mod check_pages;
mod done;
#[cfg(feature = "ssr")]
mod server;
pub(crate) mod steps;
pub mod view;

use super::annotate::Survey;
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::Progress;
use crate::domain::ids::StudyId;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use view::{CompletionView, FeedbackQuery, PracticeFeedback, TakeStage, TakeView};

/// A step the participant takes that is not an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Consent,
    Instructions,
    Return,
}

#[server(prefix = "/sfn")]
pub async fn load_take(study_id: StudyId) -> Result<TakeView, ServerFnError> {
    let (state, user) = session::subject_caller().await?;
    let stage = crate::crowd::stage(&state, &user, study_id).await.map_err(session::subject_error)?;
    server::view_of(&state, &user, study_id, stage).await.map_err(session::sfn_error)
}

/// `/take/{raw}` where `raw` is no study number: the caller and the role
/// are checked as on any study's page (401, 403), then it is a 404.
#[server(prefix = "/sfn")]
pub async fn load_unnumbered_take(raw: String) -> Result<(), ServerFnError> {
    let (_, user) = session::subject_caller().await?;
    crate::studies::link::participants_only(&user).map_err(session::subject_error)?;
    super::shared::no_such_study(raw).await
}

#[server(prefix = "/sfn")]
pub async fn take_step(
    study_id: StudyId,
    step: Step,
    /// The consent box, ticked: checked here as the form post checks it.
    #[server(default)]
    consent: bool,
) -> Result<TakeView, ServerFnError> {
    let (state, user) = session::caller().await?;
    let stage = match step {
        Step::Consent if !consent => Err(crate::error::ServiceError::Invalid(steps::TICK_CONSENT.into())),
        Step::Consent => crate::crowd::accept_consent(&state, &user, study_id).await,
        Step::Instructions => crate::crowd::instructions_read(&state, &user, study_id).await,
        Step::Return => crate::crowd::return_study(&state, &user, study_id).await,
    }
    .map_err(session::sfn_error)?;
    server::view_of(&state, &user, study_id, stage).await.map_err(session::sfn_error)
}

#[server(prefix = "/sfn")]
pub async fn take_practice(study_id: StudyId, index: usize, option: String) -> Result<PracticeFeedback, ServerFnError> {
    let (state, user) = session::caller().await?;
    let f = crate::crowd::practice_answer(&state, &user, study_id, index, &option).await.map_err(session::sfn_error)?;
    let next = server::view_of(&state, &user, study_id, f.next).await.map_err(session::sfn_error)?;
    Ok(PracticeFeedback { correct: f.correct, chosen: f.chosen, right: f.right, next })
}

/// One option index per question; a pass leases the bundle.
#[server(prefix = "/sfn")]
pub async fn take_comprehension(study_id: StudyId, answers: Vec<usize>) -> Result<TakeView, ServerFnError> {
    let (state, user) = session::caller().await?;
    let stage =
        crate::crowd::comprehension_answer(&state, &user, study_id, &answers).await.map_err(session::sfn_error)?;
    server::view_of(&state, &user, study_id, stage).await.map_err(session::sfn_error)
}

/// The code and the URL to go on to; refused until every answer of the bundle is stored.
#[server(prefix = "/sfn")]
pub async fn take_completion(study_id: StudyId) -> Result<CompletionView, ServerFnError> {
    let (state, user) = session::caller().await?;
    let c = crate::crowd::completion(&state, &user, study_id).await.map_err(session::sfn_error)?;
    Ok(CompletionView { code: c.code, url: c.url })
}

#[component]
pub fn TakePage() -> impl IntoView {
    let study_id = super::shared::study_in_path();
    let first = Resource::new(study_id, |id| async move {
        match id {
            Ok(id) => load_take(id).await.map(|v| (id, v)),
            Err(raw) => match load_unnumbered_take(raw.clone()).await {
                Err(e) => Err(e),
                // Not reached: it answers 401, 403 or 404.
                Ok(()) => super::shared::no_such_study(raw).await,
            },
        }
    });
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match first.await {
                    Err(e) => view! {
                        <section class="take">
                            <leptos_meta::Title text="Study"/>
                            <h1>"This study cannot open"</h1>
                            <p class="error" role="alert">{match error_text(&e) {
                                // A participant knows no login: say what happened in their words.
                                t if t == crate::api_types::NOT_LOGGED_IN => NOT_JOINED.to_string(),
                                t => t,
                            }}</p>
                            <p>{match error_text(&e) {
                                // A blip that passes by itself (503): staying is right, leaving is not.
                                t if [crate::api_types::DB_UNREACHABLE, crate::api_types::NOT_SAVED, crate::api_types::SESSION_UNREADABLE].contains(&t.as_str()) => {
                                    "Reload this page in a few seconds: nothing you answered was lost."
                                }
                                _ => "Open this study from its link on Prolific (or the address the researcher gave you).",
                            }}</p>
                        </section>
                    }.into_any(),
                    Ok((id, v)) => view! { <Take study_id=id first=v/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// `/take/{id}` in a browser that has not joined the study (or whose session ended).
const NOT_JOINED: &str = "This browser has not joined this study, or its session has ended.";

fn item_of_total(p: Progress) -> String {
    format!("Item {} of {}", (p.done + 1).min(p.total), p.total)
}

#[component]
fn Take(study_id: StudyId, first: TakeView) -> impl IntoView {
    let page = RwSignal::new(first);
    let error = RwSignal::new(None::<String>);
    let step = ServerAction::<TakeStep>::new();
    Effect::new(move |_| match step.value().get() {
        Some(Ok(next)) => {
            error.set(None);
            page.set(next);
        }
        Some(Err(e)) => error.set(Some(error_text(&e))),
        None => {}
    });
    let go = move |s: Step| {
        if !step.pending().get_untracked() {
            let consent = matches!(s, Step::Consent) && steps::consent_ticked();
            step.dispatch(TakeStep { study_id, step: s, consent });
        }
    };
    let title = page.with_untracked(|p| p.study_name.clone());
    // A practice answer posted without the wasm: its feedback, from the address.
    let query = crate::ui::shared::use_query();
    // Only where a practice answer can just have been given: an address made
    // up to put words on the page shows nothing later in the study.
    let feedback = Memo::new(move |_| {
        let fresh = page.with(|p| match &p.stage {
            TakeStage::Practice { .. } => true,
            TakeStage::Working { .. } => p.task.as_ref().is_some_and(|t| t.progress.done == 0),
            _ => false,
        });
        FeedbackQuery::from_query(query).filter(|_| fresh)
    });
    view! {
        <section class="take" data-stage=move || page.with(|p| p.stage.name())>
            <leptos_meta::Title text=title.clone()/>
            <h1>{title}</h1>
            {move || feedback.get().map(|f| view! {
                <p class="notice">{steps::PRACTICE_NOTICE}</p>
                {steps::feedback_box(&f, view! {
                    <p><a class="button primary" href=format!("/take/{study_id}") data-step="practice-next">"Continue"</a></p>
                })}
            })}
            {move || {
                let TakeView { stage, task, .. } = page.get();
                match stage {
                    _ if feedback.get().is_some() => ().into_any(),
                    TakeStage::Consent { text } => view! { <steps::Consent study_id text go/> }.into_any(),
                    TakeStage::Instructions { kind, study, again } => view! { <steps::Instructions study_id kind study again go/> }.into_any(),
                    TakeStage::Comprehension { attempt, questions } => view! { <check_pages::Comprehension study_id attempt questions page/> }.into_any(),
                    TakeStage::Practice { index, item } => view! { <steps::Practice study_id index item page/> }.into_any(),
                    TakeStage::Working { late } => view! {
                        {late.then(|| view! {
                            <p class="notice late">"Your time limit has passed. You can still finish and get your completion code."</p>
                        })}
                        <Survey study_id=study_id first=task counter=item_of_total instructions_read=true
                            finished=move || view! { <check_pages::AfterBundle study_id page/> }/>
                    }.into_any(),
                    TakeStage::Complete => view! { <done::Completion study_id/> }.into_any(),
                    TakeStage::Returned => view! { <steps::Returned/> }.into_any(),
                    TakeStage::ScreenedOut { comprehension, code, url } => view! { <check_pages::ScreenedOut comprehension code url/> }.into_any(),
                    TakeStage::Full { code } => view! { <check_pages::Full code/> }.into_any(),
                }
            }}
            <p class="error" role="alert">{move || error.get()}</p>
            {move || page.with(|p| p.stage.may_return()).then(|| view! { <steps::ReturnStudy study_id go/> })}
        </section>
    }
}
