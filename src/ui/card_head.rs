//! The head every survey card shares: progress and the instructions.
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
