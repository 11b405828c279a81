//! The completion page: the code, a link to the completion URL, and the
//! redirect, all only once the server says every answer is stored.
//! Without JavaScript a meta refresh redirects, after the same delay.
use super::browser::go_to;
use super::take_completion;
use crate::domain::ids::StudyId;
use crate::ui::error_text;
use leptos::prelude::*;
use std::time::Duration;

/// Long enough to read (or copy) the code; the link works at once.
pub(super) const REDIRECT_AFTER: Duration = Duration::from_secs(4);

/// Leaves for `url` after [`REDIRECT_AFTER`]: a timer once hydrated, a
/// meta refresh in the page as the server sends it (removed on hydration,
/// when the timer takes over; a page loaded whole keeps the refresh the
/// browser read, to the same URL at the same time).
#[component]
pub(super) fn GoOnTo(url: String) -> impl IntoView {
    let to = url.clone();
    Effect::new(move |_| {
        let to = to.clone();
        set_timeout(move || go_to(&to), REDIRECT_AFTER);
    });
    let refresh = format!("{};url={url}", REDIRECT_AFTER.as_secs());
    move || (!crate::ui::hydrated()).then(|| view! { <meta http-equiv="refresh" content=refresh.clone()/> })
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
                        view! {
                            <div class="completion" role="status">
                                <GoOnTo url=c.url.clone()/>
                                <h2>"Thank you: you have finished"</h2>
                                <p>"All your answers are saved. Your completion code is"</p>
                                <p><strong class="code" data-code=c.code.clone()>{c.code.clone()}</strong></p>
                                <p>"You are being taken back to Prolific with this code."</p>
                                <p><a class="button" href=c.url.clone()>"Go back to Prolific now"</a></p>
                            </div>
                        }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}
