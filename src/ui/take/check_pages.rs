//! The participant's checks on screen: the comprehension check (radio
//! questions, keyboard as any form), the screen-out page with its code and
//! the way back, the full page, and what follows the last answer of a bundle
//! (the code, or the screen-out page when attention checks ended it).
use super::done::GoOn;
use super::view::TakeView;
use super::{load_take, TakeComprehension};
use crate::domain::ids::StudyId;
use crate::ui::error_text;
use leptos::prelude::*;

#[component]
pub fn Comprehension(
    study_id: StudyId,
    attempt: i64,
    questions: Vec<(String, Vec<String>)>,
    page: RwSignal<TakeView>,
) -> impl IntoView {
    let chosen = RwSignal::new(vec![None::<usize>; questions.len()]);
    let error = RwSignal::new(None::<String>);
    let action = ServerAction::<TakeComprehension>::new();
    Effect::new(move |_| match action.value().get() {
        Some(Ok(next)) => page.set(next),
        Some(Err(e)) => error.set(Some(error_text(&e))),
        None => {}
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let answers: Option<Vec<usize>> = chosen.get_untracked().into_iter().collect();
        match answers {
            Some(answers) if !action.pending().get_untracked() => {
                action.dispatch(TakeComprehension { study_id, answers });
            }
            Some(_) => {}
            None => error.set(Some("Please answer every question.".into())),
        }
    };
    view! {
        <h2>"Check your understanding"</h2>
        <p class="notice">{if attempt > 1 {
            "Last attempt: answer these questions about the instructions."
        } else {
            "Before you start, answer these questions about the instructions. You have two attempts."
        }}</p>
        // A plain form post before the wasm has loaded (`http::take_form`).
        <form class="comprehension" data-attempt=attempt on:submit=submit method="post"
            action=format!("/take/{study_id}/comprehension")>
            {questions.into_iter().enumerate().map(|(q, (text, options))| view! {
                <fieldset data-question=q>
                    <legend>{text}</legend>
                    {options.into_iter().enumerate().map(|(o, option)| view! {
                        <label>
                            <input type="radio" name=format!("q{q}") value=o data-option=option.clone() required
                                on:change=move |_| chosen.update(|c| c[q] = Some(o))/>
                            " " {option}
                        </label>
                    }).collect_view()}
                </fieldset>
            }).collect_view()}
            <button type="submit" class="primary" data-step="comprehension"
                disabled=move || action.pending().get()>"Submit answers"</button>
        </form>
        <p class="error" role="alert">{move || error.get()}</p>
    }
}

/// Ended by the checks: the code and a button to the screen-out URL, which
/// the participant follows when ready.
#[component]
pub fn ScreenedOut(comprehension: bool, code: String, url: String) -> impl IntoView {
    // Drawn in place of the item just answered: the focus moves here.
    let ended = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if let Some(el) = ended.get() {
            crate::ui_kit::focus_once_shown(el.into());
        }
    });
    view! {
        <div class="screened-out" role="status" tabindex="-1" node_ref=ended>
            <h2>"Your participation has ended"</h2>
            {if comprehension {
                view! {
                    <p>"You did not pass the comprehension check, so you cannot take part in this study."</p>
                    <p>"Please return the study on Prolific. You will not be rejected for this."</p>
                    <p>"If Prolific asks for a code instead, use"</p>
                }.into_any()
            } else {
                view! {
                    <p>"Too many attention checks were answered wrongly, so your participation has ended."</p>
                    <p>"If Prolific asks for a code, use"</p>
                }.into_any()
            }}
            <p><strong class="code" data-code=code.clone()>{code.clone()}</strong></p>
            <GoOn url label="Go to Prolific"/>
        </div>
    }
}

#[component]
pub fn Full(code: Option<String>) -> impl IntoView {
    view! {
        <div class="full">
            <p>"Every place in this study was taken while you read the instructions. Please return the study on Prolific (you will not be penalised)."</p>
            {code.map(|c| view! { <p>"If asked for a code, use " <strong class="code">{c}</strong> "."</p> })}
        </div>
    }
}

/// After the last task: the stage again (complete, or screened out when
/// attention checks ended the participation), which the page then shows.
#[component]
pub fn AfterBundle(study_id: StudyId, page: RwSignal<TakeView>) -> impl IntoView {
    let now = Resource::new(move || study_id, load_take);
    view! {
        <Suspense fallback=|| view! { <p>"Checking that all your answers are saved…"</p> }>
            {move || Suspend::new(async move {
                match now.await {
                    // The page itself moves on: to the completion page (its
                    // `data-stage` "complete", no "Return this study"), or the
                    // screen-out page when attention checks ended it.
                    Ok(v) => {
                        Effect::new(move |_| page.set(v.clone()));
                        ().into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}
