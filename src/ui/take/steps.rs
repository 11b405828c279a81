//! The steps before and beside the bundle: consent, instructions, practice
//! with feedback, and giving the study back.
use super::view::{PracticeFeedback, TakeView};
use super::{Step, TakePractice};
use crate::api_types::{Progress, TaskView};
use crate::ui::annotate::{answer_by_keys, TaskCard};
use crate::ui::error_text;
use leptos::prelude::*;

fn paragraphs(text: &str) -> impl IntoView {
    text.split("\n\n").map(|p| view! { <p>{p.to_string()}</p> }).collect_view()
}

#[component]
pub fn Consent(text: String, go: impl Fn(Step) + Copy + Send + Sync + 'static) -> impl IntoView {
    let agreed = RwSignal::new(false);
    view! {
        <div class="consent">{paragraphs(&text)}</div>
        <label class="agree">
            <input type="checkbox" name="consent" on:change=move |ev| agreed.set(event_target_checked(&ev))/>
            " I have read the above and agree to take part."
        </label>
        <p><button type="button" class="primary" data-step="consent" disabled=move || !agreed.get()
            on:click=move |_| go(Step::Consent)>"Start"</button></p>
    }
}

#[component]
pub fn Instructions(
    kind: String,
    study: Option<String>,
    /// After a failed first comprehension attempt.
    again: bool,
    go: impl Fn(Step) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <h2>"Instructions"</h2>
        {again.then(|| view! {
            <p class="notice again" role="status">"Some of your answers were not right. Please read the instructions again; then you have one more attempt."</p>
        })}
        <div class="instructions-text">
            {paragraphs(&kind)}
            {study.map(|s| view! { <h3>"For this study"</h3> {paragraphs(&s)} })}
        </div>
        <p class="hint">"Answer each item with the keys shown on its options, or by tapping an option."</p>
        <p><button type="button" class="primary" data-step="instructions"
            on:click=move |_| go(Step::Instructions)>"I have read the instructions"</button></p>
    }
}

fn practice_of_total(p: Progress) -> String {
    format!("Practice {} of {}", p.done + 1, p.total)
}

/// A practice item, answered like a task; the feedback stays until "Continue".
#[component]
pub fn Practice(study_id: i64, index: usize, item: TaskView, page: RwSignal<TakeView>) -> impl IntoView {
    let labels: Vec<(String, String)> = item.options.iter().map(|o| (o.id.clone(), o.label.clone())).collect();
    let label = move |id: &str| labels.iter().find(|(i, _)| i == id).map(|(_, l)| l.clone()).unwrap_or(id.into());
    let shown = RwSignal::new(Some(item));
    let feedback = RwSignal::new(None::<PracticeFeedback>);
    let error = RwSignal::new(None::<String>);
    let action = ServerAction::<TakePractice>::new();
    Effect::new(move |_| match action.value().get() {
        Some(Ok(f)) => {
            error.set(None);
            shown.set(None); // no more answers to this item
            feedback.set(Some(f));
        }
        Some(Err(e)) => error.set(Some(error_text(&e))),
        None => {}
    });
    let choose = move |option: String| {
        if !action.pending().get_untracked() && shown.with_untracked(Option::is_some) {
            action.dispatch(TakePractice { study_id, index, option });
        }
    };
    answer_by_keys(shown, choose);
    view! {
        <p class="notice">"Practice: your answers here are not recorded; you will see the right answer."</p>
        {move || shown.get().map(|t| view! { <TaskCard task=t pending=action.pending() choose counter=practice_of_total instructions_read=true/> })}
        {move || feedback.get().map(|f| {
            let text = if f.correct {
                format!("Correct: {} is right.", label(&f.right))
            } else {
                format!("Not quite: you chose {}; the right answer is {}.", label(&f.chosen), label(&f.right))
            };
            let next = f.next.clone();
            view! {
                <div class="feedback" data-correct=f.correct.to_string() role="status">
                    <p>{text}</p>
                    <button type="button" class="primary" data-step="practice-next"
                        on:click=move |_| page.set(next.clone())>"Continue"</button>
                </div>
            }
        })}
        <p class="error" role="alert">{move || error.get()}</p>
    }
}

#[component]
pub fn Returned() -> impl IntoView {
    view! {
        <div class="returned">
            <p>"You returned this study. Your place has gone to someone else; nothing more is needed here."</p>
            <p>"Please also return it on Prolific, so that it does not count as timed out."</p>
        </div>
    }
}

/// "Return this study", asked twice so that a stray tap does not give the place away.
#[component]
pub fn ReturnStudy(go: impl Fn(Step) + Copy + Send + Sync + 'static) -> impl IntoView {
    let asking = RwSignal::new(false);
    view! {
        <div class="return-study">
            {move || if asking.get() {
                view! {
                    <p>"Give this study back? Your answers so far are kept but you will not get a completion code."</p>
                    <button type="button" class="danger" data-step="return" on:click=move |_| go(Step::Return)>"Yes, return it"</button>
                    " "
                    <button type="button" class="link" on:click=move |_| asking.set(false)>"No, keep going"</button>
                }.into_any()
            } else {
                view! { <button type="button" class="link" data-step="ask-return" on:click=move |_| asking.set(true)>"Return this study"</button> }.into_any()
            }}
        </div>
    }
}
