//! On the research page, a link study's live section: its link and places,
//! the dashboard, the flagged participants (with Discard), the Prolific
//! panel, and the card's answer count and progress per annotator. All of it
//! comes from one server function, read once with the page, polled every
//! few seconds and after every action, so no part of the card describes an
//! older moment than another.
use super::dashboard_panel::{DashboardCard, DiscardParticipant, FlaggedTable, FlaggedView};
use super::error_text;
use super::link_panel::{LinkCard, LinkPanelView};
use super::prolific_panel::{ProlificActions, ProlificCard, ProlificPanelView};
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::StudyProgress;
use crate::domain::crowd::figures::Dashboard;
use crate::domain::ids::StudyId;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How often the hydrated page asks for new figures.
const POLL: Duration = Duration::from_secs(3);

/// Everything on a link study's card that changes while people arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrowdNow {
    /// Counted answers and progress per participant, as the card's header and table show them.
    pub progress: StudyProgress,
    pub link: LinkPanelView,
    pub dashboard: Dashboard,
    pub flagged: Vec<FlaggedView>,
    /// The Prolific panel, for a study with a `[prolific]` table.
    pub prolific: Option<ProlificPanelView>,
}

/// None for a study that is not a link study.
#[server(prefix = "/sfn")]
pub async fn live_crowd(study_id: StudyId) -> Result<Option<CrowdNow>, ServerFnError> {
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    let mut dashboard = match crate::crowd::dashboard(&state.db, study_id, state.crowd.clock.now()).await {
        Err(ServiceError::NotFound(_)) => return Ok(None),
        other => other.map_err(session::sfn_error)?,
    };
    let link = super::link_panel::link_panel_view(&state, study_id, &dashboard).await.map_err(session::sfn_error)?;
    let flagged = super::dashboard_panel::flagged(&state.db, study_id).await.map_err(session::sfn_error)?;
    let mut progress = crate::studies::progress::study_progress(&state, study_id).await.map_err(session::sfn_error)?;
    crate::studies::progress::for_page(&mut progress);
    let prolific = super::prolific_panel::prolific_panel_view(&state, study_id).await.map_err(session::sfn_error)?;
    // A study its budget cap stops has no time of arrival: the Prolific panel beside it says why.
    if prolific.as_ref().is_some_and(|p| p.over_cap.is_some()) {
        dashboard.eta_secs = None;
    }
    Ok(Some(CrowdNow { progress, link, dashboard, flagged, prolific }))
}

/// The live section of a link study's card; nothing for other studies.
/// `progress` is the card's own (its header and per-annotator table), kept
/// in step with the rest.
#[component]
pub fn LiveCrowdPanel(study_id: StudyId, progress: RwSignal<StudyProgress>) -> impl IntoView {
    let first = Resource::new(move || study_id, live_crowd);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match first.await {
                    Err(e) => Some(view! { <p class="error">{error_text(&e)}</p> }.into_any()),
                    Ok(None) => None,
                    Ok(Some(live)) => Some(view! { <Live study_id first=live progress/> }.into_any()),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Live(study_id: StudyId, first: CrowdNow, progress: RwSignal<StudyProgress>) -> impl IntoView {
    let card = first.link.clone();
    let live = RwSignal::new(first);
    let discard = ServerAction::<DiscardParticipant>::new();
    // The participant whose Discard was clicked once, waiting for its confirmation.
    let armed = RwSignal::new(None::<i64>);
    // One read at a time: a slow answer is not overtaken by the next tick's.
    let busy = RwSignal::new(false);
    let refresh = move || {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        leptos::task::spawn_local(async move {
            if let Ok(Some(now)) = live_crowd(study_id).await {
                let _ = live.try_set(now);
            }
            let _ = busy.try_set(false);
        });
    };
    // Only in the browser: the server renders the figures once.
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(refresh, POLL) {
            on_cleanup(move || handle.clear());
        }
    });
    // The discarded row's button goes with the redraw: the focus moves to
    // the line saying it was done, not to the page's top.
    let discarded = NodeRef::<leptos::html::P>::new();
    Effect::watch(move || discard.version().get(), move |_, _, _| refresh(), false);
    Effect::watch(
        move || discard.value().get(),
        move |done, _, _| {
            if let (Some(Ok(())), Some(el)) = (done, discarded.get_untracked()) {
                let _ = el.focus();
            }
        },
        false,
    );
    let actions = ProlificActions::default();
    Effect::watch(move || actions.ended(), move |_, _, _| refresh(), false);
    Effect::new(move |_| {
        let now = live.with(|l| l.progress.clone());
        if progress.with_untracked(|p| *p != now) {
            progress.set(now);
        }
    });
    // Each part re-renders only when its own figures change, so a Discard
    // button keeps its focus while the dashboard ticks.
    let places = Memo::new(move |_| live.with(|l| l.link.places));
    let dashboard = Memo::new(move |_| live.with(|l| l.dashboard.clone()));
    let flagged = Memo::new(move |_| live.with(|l| l.flagged.clone()));
    let prolific = Memo::new(move |_| live.with(|l| l.prolific.clone()));
    // Erased types: the nested view's type is too deep for the compiler otherwise.
    view! {
        {view! { <LinkCard panel=card places/> }.into_any()}
        {move || view! { <DashboardCard d=dashboard.get() study_id/> }.into_any()}
        {move || discard.value().get().and_then(|r| r.err()).map(|e| view! { <p class="error" role="alert">{error_text(&e)}</p> })}
        <p class="discarded" role="status" tabindex="-1" node_ref=discarded>
            {move || matches!(discard.value().get(), Some(Ok(()))).then_some("Discarded: the place is free again.")}
        </p>
        {move || {
            let rows = flagged.get();
            (!rows.is_empty()).then(|| view! { <FlaggedTable rows study_id discard armed/> }.into_any())
        }}
        {move || prolific.get().map(|panel| view! { <ProlificCard panel actions/> }.into_any())}
    }
}
