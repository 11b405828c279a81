//! What several pages share: whether the page has hydrated, and a research
//! page's panel that only some studies have.
use crate::ui_kit::error_text;
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

/// A research-page panel that only some studies have (a study link, adaptive
/// overlap): `fetch` answers None for the others, which show nothing.
pub fn study_panel<T, Fut, V>(
    study_id: crate::domain::ids::StudyId,
    fetch: fn(crate::domain::ids::StudyId) -> Fut,
    card: fn(T) -> V,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    Fut: std::future::Future<Output = Result<Option<T>, ServerFnError>> + Send + 'static,
    V: IntoView + 'static,
{
    let panel = Resource::new(move || study_id, fetch);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match panel.await {
                    Err(e) => Some(view! { <p class="error">{error_text(&e)}</p> }.into_any()),
                    Ok(None) => None,
                    Ok(Some(p)) => Some(card(p).into_any()),
                }
            })}
        </Suspense>
    }
}
