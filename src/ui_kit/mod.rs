//! What the pages (`ui`), the forms and pages served without the app
//! (`http`) and the survey kinds' own cards and forms (`kinds/<kind>/ui.rs`)
//! share: the page head, the survey card's head, the progress text, the
//! caller of a server function or a form post, error text and error pages.
//! Below all three, so that a kind's card can use them while the shell asks
//! the registry for the card (README, "Layers, one way").
use crate::api_types::Progress;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
pub mod caller;
pub mod card;
pub mod card_head;
#[cfg(feature = "ssr")]
pub mod error_page;
#[cfg(feature = "ssr")]
pub mod page;
#[cfg(feature = "ssr")]
pub mod survey_post;

/// Whether the client has hydrated the page (false on the server and
/// without JavaScript): what only works with the wasm waits for it.
#[derive(Clone, Copy)]
pub struct Hydrated(pub ReadSignal<bool>);

/// Whether a key went to a control outside the survey card's own form (a
/// toggle such as "Instructions" or "Return this study", a link, a button of
/// the page): Enter there does what that control does, not what the card's
/// keys do (an audit: Enter on "Yes, return it" sent a ranking instead).
pub fn aimed_at_other_control(ev: &leptos::ev::KeyboardEvent) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let control = ev
            .target()
            .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
            .and_then(|e| e.closest("button, a[href], summary, input, textarea, select").ok().flatten());
        // A button of the card's own (a ranking's ↑/↓) does its own thing on Enter.
        control.is_some_and(|c| {
            c.closest("section.survey form").ok().flatten().is_none()
                || c.matches("button[type=button]").unwrap_or(false)
        })
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = ev;
        false
    }
}

/// False where no app provides it (a component rendered on its own).
pub fn hydrated() -> bool {
    use_context::<Hydrated>().is_some_and(|h| h.0.get())
}

/// Moves the focus to `el` once it is in the page: a card drawn after a
/// resource (Suspense) is made before it is inserted, and focusing a node
/// not in the page does nothing. Tries each frame for about two seconds.
pub fn focus_once_shown(el: leptos::web_sys::HtmlElement) {
    fn attempt(el: leptos::web_sys::HtmlElement, frames_left: u32) {
        request_animation_frame(move || {
            if el.is_connected() {
                let _ = el.focus();
            } else if frames_left > 0 {
                attempt(el, frames_left - 1);
            }
        });
    }
    attempt(el, 120);
}

/// How far along a survey is; participants read "Item k of N" instead.
pub type Counter = fn(Progress) -> String;

/// The icon inline (no request, nothing to cache or miss); assets/favicon.svg
/// is the same drawing for those who fetch `/favicon.svg`.
pub const FAVICON: &str = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E\
%3Crect width='32' height='32' rx='6' fill='%231d4ed8'/%3E%3Cpath d='M8 22 L14 10 L20 22 Z' fill='%23fff'/%3E\
%3Ccircle cx='23' cy='12' r='4' fill='%23facc15'/%3E%3C/svg%3E";

/// What every page's head starts with, the app's and those served without
/// it (`page.rs`): the client's stylesheet by its content-hashed name.
#[component]
pub fn HeadLinks(output_name: String) -> impl IntoView {
    view! {
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <link rel="stylesheet" href=format!("/pkg/{output_name}.css")/>
        <link rel="icon" href=FAVICON type="image/svg+xml"/>
    }
}

/// Renders a server error for people, not for developers.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(msg) => msg.clone(),
        // The browser's own words ("TypeError: Failed to fetch") say nothing to a participant.
        ServerFnError::Request(_) => crate::api_types::NOT_SENT.to_string(),
        other => other.to_string(),
    }
}

/// "1 item", "2 items": a count with its noun in the right number.
pub fn count_of(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The browser's clock, for an answer's time on the item (0 on the server).
pub fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_take_the_noun_in_the_right_number() {
        assert_eq!(super::count_of(1, "item", "items"), "1 item");
        assert_eq!(super::count_of(0, "item", "items"), "0 items");
        assert_eq!(super::count_of(2, "answer", "answers"), "2 answers");
    }

    #[test]
    fn a_call_that_never_reached_the_server_is_said_plainly() {
        use leptos::prelude::ServerFnError;
        let lost = super::error_text(&ServerFnError::Request("TypeError: Failed to fetch".into()));
        assert_eq!(lost, crate::api_types::NOT_SENT);
        assert_eq!(super::error_text(&ServerFnError::ServerError("item 3 is gone".into())), "item 3 is gone");
    }
}
