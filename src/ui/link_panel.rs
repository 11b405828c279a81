//! On the research page, a link study's join link (with Prolific's
//! placeholders) to copy, its codes, and how its places stand. The figures
//! come with the rest of the live section (`live_panel.rs`).
use super::take::browser::{copy_text, origin};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkPanelView {
    /// `/join/{token}?PROLIFIC_PID=…`; the browser puts its origin in front.
    pub path: String,
    pub open: bool,
    pub completion_code: String,
    pub completion_url: String,
    pub full_code: Option<String>,
    pub time_limit_minutes: u32,
    pub places: Places,
}

/// How the places stand: the same figures as the dashboard's, from the same read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Places {
    pub bundles: i64,
    /// Bundles times copies: free, leased (someone working), completed.
    pub total: i64,
    pub free: i64,
    pub leased: i64,
    pub completed: i64,
    /// Everyone who arrived (the dashboard's "Arrived").
    pub arrived: i64,
    /// Those who held a place whose answers do not count: timed out,
    /// returned, finished late, screened out by attention checks, discarded.
    pub not_counted: i64,
}

/// What the "Not counted" cell counts, as its tooltip says it.
pub const NOT_COUNTED: &str = "held a place, but their answers do not count: timed out, returned, \
    finished after their place was reclaimed, screened out by attention checks, or discarded";

/// The link study's panel from its link and dashboard (None: not a link study).
#[cfg(feature = "ssr")]
pub async fn link_panel_view(
    state: &crate::state::AppState,
    study: crate::domain::ids::StudyId,
    d: &crate::domain::crowd::figures::Dashboard,
) -> Result<LinkPanelView, crate::error::ServiceError> {
    let info = crate::crowd::link(&state.db, study).await?;
    let people = crate::crowd::participants(&state.db, study, false).await?;
    // A lease whose state does not count; no lease (still arriving, or
    // through the comprehension check without a place) is no copy at all.
    let not_counted = people.iter().filter(|p| p.state.is_some_and(|s| !s.counted())).count() as i64;
    Ok(LinkPanelView {
        path: format!("{}?{}", info.path, info.prolific_query),
        open: info.open,
        completion_code: info.completion_code,
        completion_url: info.completion_url,
        full_code: info.full_code,
        time_limit_minutes: info.time_limit_minutes,
        places: Places {
            bundles: d.bundles,
            total: d.places,
            free: d.free,
            leased: d.leased,
            completed: d.completed,
            arrived: d.participants.started,
            not_counted,
        },
    })
}

/// The link and codes, rendered once; `places` follows the live figures.
#[component]
pub fn LinkCard(panel: LinkPanelView, places: Memo<Places>) -> impl IntoView {
    let path = panel.path.clone();
    // The origin is the browser's: behind a proxy the server cannot know it.
    let url = RwSignal::new(path.clone());
    Effect::new(move |_| {
        if let Some(o) = origin() {
            url.set(format!("{o}{path}"));
        }
    });
    let copied = RwSignal::new(None::<&'static str>);
    view! {
        <div class="link-panel">
            <h3>"Study link" {(!panel.open).then_some(" (closed)")}</h3>
            <div class="copy-row">
                <input class="join-url" type="text" readonly aria-label="Study link for participants" prop:value=move || url.get()/>
                <button type="button" on:click=move |_| copied.set(Some(if copy_text(&url.get_untracked()) { "Copied" } else { "Select and copy the link" }))>"Copy"</button>
                <span class="hint">{move || copied.get()}</span>
            </div>
            <p>
                "Completion code " <strong class="code completion-code">{panel.completion_code}</strong>
                " · completion URL " <code>{panel.completion_url}</code>
                {panel.full_code.map(|c| view! { " · full code " <strong class="code">{c}</strong> })}
                " · time limit " {panel.time_limit_minutes} " min"
            </p>
            {move || { let p = places.get(); view! { <PlacesTable p/> }.into_any() }}
        </div>
    }
    .into_any()
}

#[component]
fn PlacesTable(p: Places) -> impl IntoView {
    view! {
        <table class="data places" tabindex="0">
            <caption>{super::count_of(p.bundles, "bundle", "bundles")}</caption>
            <thead><tr>
                <th scope="col">"Places"</th><th scope="col">"Free"</th><th scope="col">"Leased"</th>
                <th scope="col">"Completed"</th><th scope="col">"Arrived"</th><th scope="col">"Not counted"</th>
            </tr></thead>
            <tbody><tr>
                <td class="places-total" title="bundles × copies wanted">{p.total}</td>
                <td class="free">{p.free}</td>
                <td class="leased" title="held by someone working now">{p.leased}</td>
                <td class="completed" title="counted copies">{p.completed}</td>
                <td class="participants" title="everyone who arrived by the link">{p.arrived}</td>
                <td class="not-counted" title=NOT_COUNTED>{p.not_counted}</td>
            </tr></tbody>
        </table>
    }
}
