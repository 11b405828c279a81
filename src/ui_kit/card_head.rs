//! What every survey card shares: the head (progress and the instructions)
//! and the next item's images, fetched ahead.
use crate::api_types::Progress;
use leptos::prelude::*;

/// Progress bar and count, then the instructions, open on the first item.
#[component]
pub fn CardHead(progress: Progress, counter: fn(Progress) -> String, instructions: String) -> impl IntoView {
    view! {
        <div class="progress">
            <progress max=progress.total value=progress.done aria-label="Progress"></progress>
            <span>{counter(progress)}</span>
        </div>
        <details class="instructions" open=progress.done == 0>
            <summary>"Instructions"</summary>
            {instruction_paragraphs(&instructions)}
        </details>
    }
}

/// Instructions as paragraphs; a "Keys: …" sentence (the kinds' defaults
/// end with one) goes in a key hint, which shows only once the page is
/// hydrated: without JavaScript no key does anything.
pub fn instruction_paragraphs(text: &str) -> impl IntoView {
    text.split("\n\n")
        .map(|p| {
            let (said, keys) = match p.find("Keys:") {
                Some(at) => (p[..at].trim_end(), Some(p[at..].to_string())),
                None => (p, None),
            };
            view! {
                {(!said.is_empty()).then(|| view! { <p>{said.to_string()}</p> })}
                {keys.map(|k| view! { <p class="key-hint">{k}</p> })}
            }
        })
        .collect_view()
}

/// The next item's images, fetched while this one is answered: only once
/// hydrated, since on a cold page they would share a slow link with the wasm
/// that the keys wait for (without the wasm, each answer loads a new page).
#[component]
pub fn Prefetch(urls: Vec<String>) -> impl IntoView {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    view! {
        <div hidden>
            {move || hydrated.get().then(|| urls.iter().map(|src| view! { <img src=src.clone() alt=""/> }).collect_view())}
        </div>
    }
}
