//! Annotator pages: the study list and the survey loop. The next item comes
//! from a server function (no page reload); keys answer (their hints show
//! only then: style/pages.css). Before the wasm has
//! loaded (or without JavaScript) the options are plain form posts to
//! `http::survey_form`, which answer and reload the page. A kind with a
//! card of its own (`kinds::ui`) is shown on it instead of the option card.
use super::answer_input::{answer_by_keys, drop_double_clicks};
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::{Progress, StudySummary, TaskView};
use crate::domain::ids::{StudyId, TaskId};
use crate::ui_kit::card::Card;
use crate::ui_kit::card_head::Prefetch;
use crate::ui_kit::{now_ms, Counter};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;
use leptos_router::hooks::use_location;
use serde::{Deserialize, Serialize};

#[server(prefix = "/sfn")]
pub async fn my_studies() -> Result<Vec<StudySummary>, ServerFnError> {
    let (state, user) = session::caller().await?;
    crate::studies::meta::visible_studies(&state, &user).await.map_err(session::sfn_error)
}

/// Starts the study if need be (a POST, like every server function call).
#[server(prefix = "/sfn")]
pub async fn next_task(study_id: StudyId) -> Result<Option<TaskView>, ServerFnError> {
    let (state, user) = session::caller().await?;
    crate::studies::tasks::start(&state, &user, study_id).await.map_err(session::sfn_error)?;
    crate::studies::tasks::next_task(&state, &user, study_id).await.map_err(session::sfn_error)
}

/// What an answer's round trip brings back: the next task, and whether the
/// item had been answered otherwise already (in another tab), so that the
/// page can say this answer was not the one kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    pub next: Option<TaskView>,
    pub kept_other: bool,
}

/// Stores the answer (durably), then returns the next task in the same round trip.
#[server(prefix = "/sfn")]
pub async fn answer_and_next(
    study_id: StudyId,
    task_id: TaskId,
    option: String,
    elapsed_ms: i64,
    #[server(default)] text: Option<String>,
) -> Result<Answered, ServerFnError> {
    let (state, user) = session::caller().await?;
    let stored =
        crate::studies::tasks::answer_with_text(&state, &user, task_id, &option, text.as_deref(), Some(elapsed_ms))
            .await;
    let kept_other = match stored {
        // A resend of the same answer is no news; another option stored first is.
        Ok(ack) => ack.duplicate && !ack.option.eq_ignore_ascii_case(option.trim()),
        // The item was withdrawn (the place ended) as the answer came: on to the next, which says what is left.
        Err(crate::error::ServiceError::Gone(_)) => false,
        Err(e) => return Err(session::sfn_error(e)),
    };
    let next = crate::studies::tasks::next_task(&state, &user, study_id).await.map_err(session::sfn_error)?;
    Ok(Answered { next, kept_other })
}

/// What the survey page renders on the server: the study's name and, once
/// the caller has started it, the task to show (`None`: all done).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyOpen {
    pub study: String,
    pub started: bool,
    pub task: Option<TaskView>,
}

/// Read-only (a page's GET): does not start the study.
#[server(prefix = "/sfn")]
pub async fn open_survey(study_id: StudyId) -> Result<SurveyOpen, ServerFnError> {
    let (state, user) = session::subject_caller().await?;
    let (study, task) = crate::studies::tasks::peek(&state, &user, study_id).await.map_err(session::subject_error)?;
    Ok(SurveyOpen { study, started: task.is_some(), task: task.flatten() })
}

#[component]
pub fn StudyList() -> impl IntoView {
    let studies = Resource::new(|| (), |_| my_studies());
    view! {
        <Title text="Your studies"/>
        <h1>"Your studies"</h1>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match studies.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => view! { <p>"No studies are open for you."</p> }.into_any(),
                    Ok(list) => view! {
                        <ul class="studies">
                            {list.into_iter().map(|s| {
                                let progress = s.progress.map(|p| format!("{} / {} done", p.done, p.total)).unwrap_or_else(|| "not started".into());
                                view! { <li><A href=format!("/annotate/{}", s.id)>{s.name}</A> " — " {progress}</li> }
                            }).collect_view()}
                        </ul>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn SurveyPage() -> impl IntoView {
    let study_id = super::shared::study_in_path();
    // Rendered on the server too, so the task is in the HTML before the wasm runs.
    let open = Resource::new(study_id, |id| async move {
        match id {
            Ok(id) => open_survey(id).await.map(|o| (id, o)),
            Err(raw) => super::shared::no_such_study(raw).await,
        }
    });
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match open.await {
                    Err(e) => view! {
                        <Title text="Survey"/>
                        <h1>"Survey"</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                        <p><A href="/annotate">"Back to your studies"</A></p>
                    }.into_any(),
                    Ok((study_id, o)) => view! {
                        <Title text=o.study.clone()/>
                        <div class="survey-head">
                            <h1>{o.study.clone()}</h1>
                            <a href="/annotate" class="back">"← Your studies"</a>
                        </div>
                        {if o.started {
                            view! { <Survey study_id first=o.task/> }.into_any()
                        } else {
                            view! { <StartSurvey study_id/> }.into_any()
                        }}
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// A study not started yet: the browser starts it once hydrated (starting is
/// a side effect, never done by the page's GET); until then, or without
/// JavaScript, a Start button posts the form that does.
#[component]
fn StartSurvey(study_id: StudyId) -> impl IntoView {
    let start = ServerAction::<NextTask>::new();
    // Effects run only in the browser.
    Effect::new(move |_| {
        start.dispatch(NextTask { study_id });
    });
    move || match start.value().get() {
        None => view! {
            <form class="start" method="post" action=format!("/annotate/{study_id}/start")>
                <p>"Your items are handed out when you start."</p>
                <button type="submit" class="primary">"Start"</button>
            </form>
        }
        .into_any(),
        Some(Err(e)) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
        Some(Ok(task)) => view! { <Survey study_id first=task/> }.into_any(),
    }
}

fn done_of_total(p: Progress) -> String {
    format!("{} / {}", p.done, p.total)
}

/// The survey loop: the shown task, answered by key or click, the next one
/// fetched in the same round trip. `finished` replaces the annotator's
/// "all done" (the participant's page shows its completion code there).
#[component]
pub fn Survey(
    study_id: StudyId,
    first: Option<TaskView>,
    #[prop(optional, into)] finished: Option<ViewFn>,
    #[prop(optional)] counter: Option<Counter>,
    /// Read on a page of their own just before: start with them folded.
    #[prop(optional)]
    instructions_read: bool,
) -> impl IntoView {
    let counter = counter.unwrap_or(done_of_total);
    let task = RwSignal::new(first);
    // A form answer (no JavaScript) that another tab's overtook comes back with a query saying so.
    let query = super::shared::use_query();
    let elsewhere = untrack(|| query("answered")).as_deref()
        == crate::api_types::ANSWERED_ELSEWHERE_QUERY.strip_prefix("answered=");
    let error = RwSignal::new(elsewhere.then(|| crate::api_types::ANSWERED_ELSEWHERE.to_string()));
    let shown_at = StoredValue::new(now_ms());
    let action = ServerAction::<AnswerAndNext>::new();

    // The answer last sent: kept until stored, and sent again while the
    // server says it could not store it (503).
    let last_sent = StoredValue::new(None::<AnswerAndNext>);
    // This page's own answer route: /annotate/{id}/answer or /take/{id}/answer.
    let page_path = use_location().pathname.get_untracked().trim_end_matches('/').to_string();
    on_answered(action, task, error, last_sent, shown_at, page_path.starts_with("/take/"));

    let send = move |option: String, text: Option<String>| {
        if action.pending().get_untracked() {
            return; // one answer in flight at a time; the server is idempotent anyway
        }
        if let Some(t) = task.get_untracked() {
            let elapsed_ms = (now_ms() - shown_at.get_value()).max(0.0) as i64;
            let sent = AnswerAndNext { study_id, task_id: t.task_id, option, elapsed_ms, text };
            last_sent.set_value(Some(sent.clone()));
            action.dispatch(sent);
        }
    };
    let choose = move |option: String| send(option, None);
    let submit = Callback::new(move |(option, text): (String, Option<String>)| send(option, text));
    answer_by_keys(task, choose);
    drop_double_clicks();
    let form_action = format!("{page_path}/answer");

    view! {
        {move || match (task.get(), finished.clone()) {
            (None, Some(finished)) => finished.run(),
            (None, None) => view! {
                <section class="finished">
                    <h2>"All done — thank you!"</h2>
                    <p>"Every item of this study has your answer."</p>
                    <p><A href="/annotate">"Back to your studies"</A></p>
                </section>
            }.into_any(),
            (Some(t), _) => match crate::kinds::ui(t.kind) {
                Some(ui) => (ui.card)(Card {
                    study_id, task: t, current: task, pending: action.pending(), submit, counter, page: page_path.clone(),
                }),
                None => view! {
                    <TaskCard task=t pending=action.pending() choose counter instructions_read form_action=form_action.clone()/>
                }.into_any(),
            },
        }}
        <p class="error" role="alert">{move || error.get()}</p>
    }
}

/// What the survey does with the server's answer: shows the next task, or
/// the error; an answer the server could not store (503: a full disk, the
/// database out of reach or its connection cut) is kept and sent again
/// every `RETRY_AFTER_SECS` while its task is still shown.
fn on_answered(
    action: ServerAction<AnswerAndNext>,
    task: RwSignal<Option<TaskView>>,
    error: RwSignal<Option<String>>,
    last_sent: StoredValue<Option<AnswerAndNext>>,
    shown_at: StoredValue<f64>,
    participant: bool,
) {
    Effect::new(move |_| match action.value().get() {
        Some(Ok(Answered { next, kept_other })) => {
            error.set(kept_other.then(|| crate::api_types::ANSWERED_ELSEWHERE.to_string()));
            last_sent.set_value(None);
            task.set(next);
            shown_at.set_value(now_ms());
        }
        Some(Err(e)) => {
            let text = match error_text(&e) {
                t if participant && t == crate::api_types::NOT_LOGGED_IN => {
                    crate::api_types::PARTICIPANT_SESSION_GONE.to_string()
                }
                t => t,
            };
            use crate::api_types::{ANSWER_CUT, DB_UNREACHABLE, NOT_SAVED, NOT_SENT};
            let lost = [NOT_SAVED, NOT_SENT, DB_UNREACHABLE, ANSWER_CUT].iter().any(|m| text.contains(m));
            let again = last_sent.get_value().filter(|_| lost);
            match again {
                Some(sent) => {
                    let secs = crate::api_types::RETRY_AFTER_SECS;
                    error.set(Some(format!("{text}. Your answer is kept here and sent again every {secs} s.")));
                    set_timeout(
                        move || {
                            let same = task.with_untracked(|t| t.as_ref().map(|t| t.task_id)) == Some(sent.task_id);
                            if same && !action.pending().get_untracked() {
                                action.dispatch(sent);
                            }
                        },
                        std::time::Duration::from_secs(secs.into()),
                    );
                }
                None => error.set(Some(text)),
            }
        }
        None => {}
    });
}

/// One task: progress, instructions, the prompt and the options as buttons.
#[component]
pub fn TaskCard(
    task: TaskView,
    pending: Memo<bool>,
    choose: impl Fn(String) + Copy + Send + Sync + 'static,
    counter: Counter,
    #[prop(optional)] instructions_read: bool,
    /// Where the options post without JavaScript; none: they only work hydrated.
    #[prop(optional)]
    form_action: Option<String>,
) -> impl IntoView {
    let progress = task.progress;
    let task_id = task.task_id;
    let submits = form_action.is_some();
    // Each new item takes the focus, so no option of it looks chosen already.
    let card = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if let Some(el) = card.get() {
            let _ = el.focus();
        }
    });
    let choices = task.options.iter().filter(|o| o.image_url.is_some() || o.text.is_some()).count();
    view! {
        <section class="survey" tabindex="-1" node_ref=card aria-busy=move || pending.get().to_string() data-task=task.task_id.to_string()>
            <div class="progress">
                <progress max=progress.total value=progress.done aria-label="Progress"></progress>
                <span>{counter(progress)}</span>
            </div>
            <details class="instructions" open=!instructions_read && progress.done == 0>
                <summary>"Instructions"</summary>
                {crate::ui_kit::card_head::instruction_paragraphs(&task.instructions)}
                {key_hint(&task.options)}
            </details>
            // The item's own instructions (a new part of the survey) stay in view: the fold above shuts after the first item.
            {task.item_instructions.then(|| view! { <p class="item-instructions">{item_lead(&task.instructions)}</p> })}
            {(!task.prompt.text.is_empty()).then(|| view! { <blockquote class="prompt">{task.prompt.text.clone()}</blockquote> })}
            {task.prompt.image_url.clone().map(|src| view! { <img class="prompt-image" src=src alt="The image to describe"/> })}
            // Two-choice kinds get two wide columns instead of four narrow ones.
            <form class="options" data-count=choices method="post" action=form_action>
                <input type="hidden" name="task_id" value=task_id.to_string()/>
                {task.options.into_iter().map(|o| {
                    let id = o.id.clone();
                    let keys = o.keys.join(" ");
                    let label = o.label.clone();
                    view! {
                        <button type=if submits { "submit" } else { "button" } name="option" value=o.id.clone()
                            class=match (&o.image_url, &o.text) { (Some(_), _) => "option image", (None, Some(_)) => "option text-choice", _ => "option plain" }
                            data-option=o.id.clone() data-keys=keys.clone()
                            aria-keyshortcuts={ let keys = keys.clone(); move || crate::ui_kit::hydrated().then(|| keys.clone()) }
                            on:click=move |ev| { ev.prevent_default(); choose(id.clone()) }>
                            {o.image_url.clone().map(|src| view! { <img src=src alt=format!("Candidate {}", label)/> })}
                            {o.text.clone().map(|t| view! { <span class="text">{t}</span> })}
                            <span class="label">{o.label.clone()} " " <kbd>{o.keys.first().cloned().unwrap_or_default()}</kbd></span>
                        </button>
                    }
                }).collect_view()}
            </form>
            <Prefetch urls=task.prefetch/>
        </section>
    }
}

/// An item's own instructions without their key hint (the fold has it).
fn item_lead(instructions: &str) -> String {
    instructions.split("Keys:").next().unwrap_or_default().trim().to_string()
}

/// The options' keys, where they have any (a kind with a card of its own
/// gives its options none: its card says its keys).
fn key_hint(options: &[crate::api_types::OptionView]) -> Option<impl IntoView> {
    let keys: Vec<String> =
        options.iter().filter(|o| !o.keys.is_empty()).map(|o| format!("{} = {}", o.keys.join("/"), o.label)).collect();
    (!keys.is_empty()).then(|| view! { <p class="keys key-hint">"Keys: " {keys.join(", ")}</p> })
}
