//! The steps before and beside the bundle: consent, instructions, practice
//! with feedback, and giving the study back.
use super::view::{FeedbackQuery, PracticeFeedback, TakeView};
use super::{Step, TakePractice};
use crate::api_types::{Progress, TaskView};
use crate::domain::ids::StudyId;
use crate::ui::annotate::TaskCard;
use crate::ui::answer_input::answer_by_keys;
use crate::ui::error_text;
use leptos::prelude::*;

fn paragraphs(text: &str) -> impl IntoView {
    crate::ui_kit::card_head::instruction_paragraphs(text)
}

/// A step as a plain form post (`http::take_form`), so it works before the
/// wasm has loaded; once hydrated, the page's server function takes it in place.
fn step_form(
    study_id: StudyId,
    step: Step,
    go: impl Fn(Step) + Copy + Send + Sync + 'static,
    class: &'static str,
    inside: impl IntoView,
) -> impl IntoView {
    let name = match step {
        Step::Consent => "Consent",
        Step::Instructions => "Instructions",
        Step::Return => "Return",
    };
    view! {
        <form class=class method="post" action=format!("/take/{study_id}/step")
            on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); go(step) }>
            <input type="hidden" name="step" value=name/>
            {inside}
        </form>
    }
}

/// Said when the consent step comes without the box ticked.
#[cfg(feature = "ssr")]
pub const TICK_CONSENT: &str = "tick the consent box to take part";

/// Whether the consent form's box is ticked (false on the server).
pub fn consent_ticked() -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let input = leptos::prelude::document()
            .query_selector("form.consent-form input[name=consent]")
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok());
        input.is_some_and(|i| i.checked())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        false
    }
}

#[component]
pub fn Consent(study_id: StudyId, text: String, go: impl Fn(Step) + Copy + Send + Sync + 'static) -> impl IntoView {
    // `required`: the browser asks for the box before posting, with or without the wasm.
    let inside = view! {
        <label class="agree">
            <input type="checkbox" name="consent" value="yes" required/>
            " I have read the above and agree to take part."
        </label>
        <p><button type="submit" class="primary" data-step="consent">"Start"</button></p>
    };
    view! {
        <div class="consent">{paragraphs(&text)}</div>
        {step_form(study_id, Step::Consent, go, "consent-form", inside)}
    }
}

#[component]
pub fn Instructions(
    study_id: StudyId,
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
        <p class="hint key-hint">"Answer each item with the keys shown on its options, or by tapping an option."</p>
        {step_form(study_id, Step::Instructions, go, "instructions-form", view! {
            <p><button type="submit" class="primary" data-step="instructions">"I have read the instructions"</button></p>
        })}
    }
}

fn practice_of_total(p: Progress) -> String {
    format!("Practice {} of {}", p.done + 1, p.total)
}

/// Above a practice item and its feedback, with or without the wasm.
pub const PRACTICE_NOTICE: &str = "Practice: your answers here are not recorded; you will see the right answer.";

/// The answer to a practice item; `next` is how the participant goes on.
pub fn feedback_box(f: &FeedbackQuery, next: impl IntoView) -> impl IntoView {
    view! {
        <div class="feedback" data-correct=f.correct.to_string() role="status">
            <p>{f.text()}</p>
            {next}
        </div>
    }
}

/// A practice item, answered like a task; the feedback stays until "Continue".
/// Before the wasm has loaded its options post to `http::take_form`, which
/// shows the feedback on the page it redirects to.
#[component]
pub fn Practice(study_id: StudyId, index: usize, item: TaskView, page: RwSignal<TakeView>) -> impl IntoView {
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
    let form_action = format!("/take/{study_id}/practice");
    // Hydrated, a kind with a card of its own (the triplet check's verdict,
    // tag and keys) shows it, as on its real items; before that, and without
    // JavaScript, the option card posts the practice form.
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    let submit = Callback::new(move |(option, _): (String, Option<String>)| choose(option));
    // The feedback takes the focus from the answered item, which is gone.
    let continue_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if let Some(b) = continue_button.get() {
            let _ = b.focus();
        }
    });
    view! {
        <p class="notice">{PRACTICE_NOTICE}</p>
        {move || shown.get().map(|t| match crate::kinds::ui(t.kind).filter(|_| live.get()) {
            Some(ui) => (ui.card)(crate::ui_kit::card::Card {
                study_id,
                task: t,
                current: RwSignal::new(None),
                pending: action.pending(),
                submit,
                counter: practice_of_total,
                page: format!("/take/{study_id}"),
            }),
            None => view! {
                <TaskCard task=t pending=action.pending() choose counter=practice_of_total instructions_read=true
                    form_action=form_action.clone()/>
            }.into_any(),
        })}
        {move || feedback.get().map(|f| {
            let said = FeedbackQuery { correct: f.correct, chosen: label(&f.chosen), right: label(&f.right) };
            let next = f.next.clone();
            feedback_box(&said, view! {
                <button type="button" class="primary" data-step="practice-next" node_ref=continue_button
                    on:click=move |_| page.set(next.clone())>"Continue"</button>
            })
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

/// "Return this study", asked twice so that a stray tap does not give the
/// place away; a `details` element, so it opens and posts without the wasm.
#[component]
pub fn ReturnStudy(study_id: StudyId, go: impl Fn(Step) + Copy + Send + Sync + 'static) -> impl IntoView {
    let details = NodeRef::<leptos::html::Details>::new();
    // A link back to the page, so it closes the question without the wasm too.
    let keep = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        if let Some(d) = details.get() {
            let _ = d.remove_attribute("open");
        }
    };
    view! {
        <details class="return-study" node_ref=details>
            <summary class="link" data-step="ask-return">"Return this study"</summary>
            <p>"Give this study back? Your answers so far are kept but you will not get a completion code."</p>
            {step_form(study_id, Step::Return, go, "return-form", view! {
                <button type="submit" class="danger" data-step="return">"Yes, return it"</button>
                " "
                <a class="link keep-going" href=format!("/take/{study_id}") on:click=keep>"No, keep going"</a>
            })}
        </details>
    }
}
