//! The completion page: the code and a button to the completion URL, only
//! once the server says every answer is stored. Nothing leaves by itself
//! (no timer, no meta refresh: WCAG 2.2.1): the participant reads or copies
//! the code and goes on when ready.
use super::take_completion;
use crate::domain::ids::StudyId;
use crate::ui::error_text;
use leptos::prelude::*;

/// The way back to the platform: a prominent link the participant follows
/// when ready (the code stays on the page).
#[component]
pub(super) fn GoOn(url: String, label: &'static str) -> impl IntoView {
    view! { <p><a class="button primary go-on" href=url>{label}</a></p> }
}

#[component]
pub fn Completion(study_id: StudyId) -> impl IntoView {
    let code = Resource::new(move || study_id, take_completion);
    view! {
        <Suspense fallback=|| view! { <p>"Checking that all your answers are saved…"</p> }>
            {move || Suspend::new(async move {
                match code.await {
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    Ok(c) => {
                        // The answered item's card is gone: the focus moves to what replaced it.
                        let done = NodeRef::<leptos::html::Div>::new();
                        Effect::new(move |_| {
                            if let Some(el) = done.get() {
                                crate::ui_kit::focus_once_shown(el.into());
                            }
                        });
                        view! {
                            <div class="completion" role="status" tabindex="-1" node_ref=done>
                                <h2>"Thank you: you have finished"</h2>
                                <p>"All your answers are saved. Your completion code is"</p>
                                <p><strong class="code" data-code=c.code.clone()>{c.code.clone()}</strong></p>
                                <p>"Use the button to go back to Prolific with this code, or enter the code there yourself."</p>
                                <GoOn url=c.url.clone() label="Go back to Prolific with this code"/>
                            </div>
                        }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}
