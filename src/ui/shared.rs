//! What several pages share: whether the page has hydrated, the study
//! a page's address names and its query.
use leptos::prelude::*;

pub use crate::ui_kit::{hydrated, Hydrated};

/// Said on the research pages, which need scripts, to a browser without
/// them (participant and annotator pages work without). Text only inside:
/// with scripts on, a browser parses `noscript`'s content as one text node.
#[component]
pub fn NeedsScript() -> impl IntoView {
    view! {
        <noscript class="needs-js">
            "This page needs JavaScript: its figures and buttons load with it. Participant and annotator pages work without it."
        </noscript>
    }
}

/// The study named by a page's address (`/…/{id}`): a word that is no study
/// number is said as such, not looked up as some other study.
pub fn study_in_path() -> impl Fn() -> Result<crate::domain::ids::StudyId, String> + Copy + Send + Sync + 'static {
    let params = leptos_router::hooks::use_params_map();
    move || {
        let raw = params.read().get("id").unwrap_or_default();
        raw.parse().map_err(|_| raw)
    }
}

/// What a page whose address names no study number loads instead.
/// Rendered on the server, the page answers 404, as for a number that names
/// no study.
pub async fn no_such_study<T>(raw: String) -> Result<T, ServerFnError> {
    let message = format!("There is no study \"{raw}\": a study's address ends in its number.");
    #[cfg(feature = "ssr")]
    return Err(crate::ui_kit::caller::subject_error(crate::error::ServiceError::NotFound(message)));
    #[cfg(not(feature = "ssr"))]
    Err(ServerFnError::new(message))
}

/// A reader of the address's query, each value decoded once
/// (`domain::percent::query_get`); leptos_router's `use_query_map` decodes
/// twice, which changed any value holding a `%`. Reactive, as that map is.
pub fn use_query() -> impl Fn(&str) -> Option<String> + Copy + Send + Sync + 'static {
    let search = leptos_router::hooks::use_location().search;
    move |key| search.with(|s| crate::domain::percent::query_get(s, key))
}
