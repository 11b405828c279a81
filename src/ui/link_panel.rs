//! On the research page, a link study's join link (with Prolific's
//! placeholders) to copy, its codes, and how its places stand.
#[cfg(feature = "ssr")]
use super::session;
use super::take::browser::{copy_text, origin};
use crate::domain::ids::StudyId;
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
    pub bundles: usize,
    /// Places are bundles times copies: free, held by someone working, completed.
    pub places: i64,
    pub leased: i64,
    pub completed: i64,
    pub participants: usize,
    /// Timed out, returned or finished late: kept, not counted.
    pub not_counted: usize,
}

/// None for a study that is not a link study.
#[server(prefix = "/sfn")]
pub async fn link_panel(study_id: StudyId) -> Result<Option<LinkPanelView>, ServerFnError> {
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    let info = match crate::crowd::link(&state.db, study_id).await {
        Err(ServiceError::NotFound(_)) => return Ok(None),
        other => other.map_err(session::sfn_error)?,
    };
    let bundles = crate::crowd::bundles(&state.db, study_id).await.map_err(session::sfn_error)?;
    let people = crate::crowd::participants(&state.db, study_id, false).await.map_err(session::sfn_error)?;
    Ok(Some(LinkPanelView {
        path: format!("{}?{}", info.path, info.prolific_query),
        open: info.open,
        completion_code: info.completion_code,
        completion_url: info.completion_url,
        full_code: info.full_code,
        time_limit_minutes: info.time_limit_minutes,
        bundles: bundles.len(),
        places: bundles.iter().map(|b| b.copies_wanted).sum(),
        leased: bundles.iter().map(|b| b.active).sum(),
        completed: bundles.iter().map(|b| b.completed).sum(),
        participants: people.len(),
        not_counted: people.iter().filter(|p| !p.state.is_some_and(|s| s.counted())).count(),
    }))
}

#[component]
pub fn LinkPanel(study_id: i64) -> impl IntoView {
    super::study_panel(study_id, link_panel, |p| view! { <LinkCard panel=p/> })
}

#[component]
fn LinkCard(panel: LinkPanelView) -> impl IntoView {
    let path = panel.path.clone();
    // The origin is the browser's: behind a proxy the server cannot know it.
    let url = RwSignal::new(path.clone());
    Effect::new(move |_| {
        if let Some(o) = origin() {
            url.set(format!("{o}{path}"));
        }
    });
    let copied = RwSignal::new(None::<&'static str>);
    let free = panel.places - panel.leased - panel.completed;
    view! {
        <div class="link-panel">
            <h3>"Study link" {(!panel.open).then_some(" (closed)")}</h3>
            <div class="copy-row">
                <input class="join-url" type="text" readonly aria-label="Study URL for Prolific" prop:value=move || url.get()/>
                <button type="button" on:click=move |_| copied.set(Some(if copy_text(&url.get_untracked()) { "Copied" } else { "Select and copy the link" }))>"Copy"</button>
                <span class="hint">{move || copied.get()}</span>
            </div>
            <p>
                "Completion code " <strong class="code completion-code">{panel.completion_code}</strong>
                " · completion URL " <code>{panel.completion_url}</code>
                {panel.full_code.map(|c| view! { " · full code " <strong class="code">{c}</strong> })}
                " · time limit " {panel.time_limit_minutes} " min"
            </p>
            <table class="data places">
                <caption>{panel.bundles} " bundles"</caption>
                <thead><tr>
                    <th scope="col">"Places"</th><th scope="col">"Free"</th><th scope="col">"Working"</th>
                    <th scope="col">"Completed"</th><th scope="col">"Participants"</th><th scope="col">"Not counted"</th>
                </tr></thead>
                <tbody><tr>
                    <td class="places-total">{panel.places}</td>
                    <td class="free">{free}</td>
                    <td class="leased">{panel.leased}</td>
                    <td class="completed">{panel.completed}</td>
                    <td class="participants">{panel.participants}</td>
                    <td class="not-counted" title="timed out, returned or finished late">{panel.not_counted}</td>
                </tr></tbody>
            </table>
        </div>
    }
}
