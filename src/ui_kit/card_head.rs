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
            <p>{instructions}</p>
        </details>
    }
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
