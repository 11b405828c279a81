//! On the research page, a link study on Prolific (docs/prolific.md):
//! before publishing, the draft's reward, places and cost with a button
//! (a draft first, showing Prolific's cost; then publish); afterwards,
//! Prolific's counts beside hardneg's places, spent / committed / cap,
//! the mismatches with what to do, and the outbox rows still open.
#[cfg(feature = "ssr")]
use super::session;
use crate::domain::ids::StudyId;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProlificPanelView {
    pub study_id: StudyId,
    /// None until the study is on Prolific.
    pub prolific_id: Option<String>,
    pub status: Option<String>,
    pub reward: String,
    pub places: i64,
    /// hardneg's figures before publishing: places × reward with the fee.
    pub estimated: Option<String>,
    /// Prolific's counts by status, as last synced.
    pub counts: Vec<(String, i64)>,
    pub hardneg: (i64, i64, i64, i64),
    pub spent: String,
    pub committed: String,
    pub cap: Option<String>,
    pub propose_more_places: Option<u64>,
    pub mismatches: Vec<(String, String, String)>,
    pub open_outbox: Vec<String>,
}

/// None for a study without a `[prolific]` table, or no link study.
#[server(prefix = "/sfn")]
pub async fn prolific_panel(study_id: StudyId) -> Result<Option<ProlificPanelView>, ServerFnError> {
    use crate::domain::prolific::money::cents;
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    let money = |c: u64| cents(c);
    match crate::prolific::status::status(&state.db, study_id).await {
        Ok(s) => Ok(Some(ProlificPanelView {
            study_id,
            prolific_id: s.prolific_id,
            status: s.status,
            reward: money(s.reward_cents.max(0) as u64),
            places: s.places,
            estimated: None,
            counts: s
                .counts
                .as_object()
                .map(|o| o.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()? as i64))).collect())
                .unwrap_or_default(),
            hardneg: (s.hardneg_places, s.hardneg_completed, s.hardneg_working, s.hardneg_free),
            spent: money(s.budget.spent),
            committed: money(s.budget.committed),
            cap: s.budget.cap.map(money),
            propose_more_places: s.propose_more_places,
            mismatches: s
                .mismatches
                .into_iter()
                .map(|m| {
                    let who =
                        m.participant.map(|p| format!("participant {p}")).unwrap_or_else(|| "not in hardneg".into());
                    (m.kind.words().to_string(), who, m.advice)
                })
                .collect(),
            open_outbox: s
                .outbox
                .into_iter()
                .map(|l| format!("{} {}: {}", l.action, l.state, l.last_error.unwrap_or_default()))
                .collect(),
        })),
        Err(ServiceError::NotFound(_)) => {
            let plan = crate::prolific::publish::plan(&state.db, study_id, "", &Default::default(), &[]).await;
            match plan {
                Ok(p) => Ok(Some(ProlificPanelView {
                    study_id,
                    prolific_id: None,
                    status: None,
                    reward: money(p.reward_cents),
                    places: p.places as i64,
                    estimated: Some(money(p.estimated_cents)),
                    counts: Vec::new(),
                    hardneg: (0, 0, 0, 0),
                    spent: money(0),
                    committed: money(0),
                    cap: p.budget_cap_cents.map(money),
                    propose_more_places: None,
                    mismatches: Vec::new(),
                    open_outbox: Vec::new(),
                })),
                // Not a link study, or no [prolific] table: nothing to show.
                Err(ServiceError::NotFound(_) | ServiceError::Invalid(_)) => Ok(None),
                Err(e) => Err(session::sfn_error(e)),
            }
        }
        Err(e) => Err(session::sfn_error(e)),
    }
}

/// `confirm = false`: make (or find) the draft and say Prolific's cost;
/// `true`: publish it. Researchers and admins only.
#[server(prefix = "/sfn")]
pub async fn publish_on_prolific(study_id: StudyId, confirm: bool) -> Result<String, ServerFnError> {
    use crate::domain::prolific::money::cents;
    let (state, _) = session::researcher().await?;
    let client = crate::prolific::connect(&state.db).map_err(session::sfn_error)?;
    let origin = std::env::var("HARDNEG_PUBLIC_ORIGIN").ok().unwrap_or_else(|| {
        let parts: Option<axum::http::request::Parts> = use_context();
        let host = parts.and_then(|p| p.headers.get("host").and_then(|h| h.to_str().ok()).map(str::to_string));
        format!("http://{}", host.unwrap_or_else(|| "127.0.0.1:3000".into()))
    });
    let over = Default::default();
    if confirm {
        let p =
            crate::prolific::publish::publish(&client, study_id, &origin, &over).await.map_err(session::sfn_error)?;
        return Ok(format!("Published: {} is {}", p.prolific_id, p.status));
    }
    let (plan, pid, cost) =
        crate::prolific::publish::prepare(&client, study_id, &origin, &over).await.map_err(session::sfn_error)?;
    let total = crate::domain::prolific::money::ProlificCost::read(&cost)
        .map(|c| format!("{} (fees and tax included)", cents(c.total())))
        .unwrap_or_else(|| "not given".into());
    Ok(format!(
        "Draft {pid}: {} places at {}; Prolific's cost {total}. Publish to open it.",
        plan.places,
        cents(plan.reward_cents)
    ))
}

#[server(prefix = "/sfn")]
pub async fn sync_prolific(study_id: StudyId) -> Result<String, ServerFnError> {
    let (state, _) = session::researcher().await?;
    let client = crate::prolific::connect(&state.db).map_err(session::sfn_error)?;
    let r = crate::prolific::sync::sync(&client, study_id).await.map_err(session::sfn_error)?;
    let (raised, stopped) = crate::prolific::after_sync(&client, study_id).await.map_err(session::sfn_error)?;
    let raised = raised.map(|t| format!("; places raised to {t} (auto_increase)")).unwrap_or_default();
    let stopped = if stopped { "; stopped on Prolific: hardneg needs nobody more" } else { "" };
    Ok(format!("Synced {} submissions ({} pages); {} places freed{raised}{stopped}", r.submissions, r.pages, r.freed))
}

#[component]
pub fn ProlificPanel(study_id: StudyId) -> impl IntoView {
    super::study_panel(study_id, prolific_panel, |p| view! { <ProlificCard panel=p/> })
}

#[component]
fn ProlificCard(panel: ProlificPanelView) -> impl IntoView {
    let study_id = panel.study_id;
    let publish = ServerAction::<PublishOnProlific>::new();
    let sync = ServerAction::<SyncProlific>::new();
    let said = move || {
        let text =
            |r: Option<Result<String, ServerFnError>>| r.map(|r| r.unwrap_or_else(|e| crate::ui_kit::error_text(&e)));
        text(sync.value().get()).or_else(|| text(publish.value().get()))
    };
    let id = study_id;
    let (places, completed, working, free) = panel.hardneg;
    view! {
        <div class="prolific-panel">
            <h3>"Prolific " {panel.prolific_id.clone().map(|p| format!("study {p}"))} " " {panel.status.clone()}</h3>
            <p>
                "Reward " {panel.reward.clone()} " · " {panel.places} " places"
                {panel.estimated.clone().map(|e| format!(" · estimated {e} with the fee"))}
                " · spent " <span class="spent">{panel.spent.clone()}</span>
                " · committed " <span class="committed">{panel.committed.clone()}</span>
                " · cap " {panel.cap.clone().unwrap_or_else(|| "none".into())}
            </p>
            {panel.prolific_id.is_none().then(|| view! {
                <p>
                    <button type="button" on:click=move |_| { publish.dispatch(PublishOnProlific { study_id: id, confirm: false }); }>"Make the draft and show its cost"</button>
                    " "
                    <button type="button" on:click=move |_| { publish.dispatch(PublishOnProlific { study_id: id, confirm: true }); }>"Publish on Prolific"</button>
                </p>
            })}
            {panel.prolific_id.is_some().then(|| view! {
                <table class="data prolific-counts">
                    <caption>"Prolific's submissions beside hardneg's places (" {places} " wanted: " {completed} " completed, " {working} " working, " {free} " free)"</caption>
                    <thead><tr>{panel.counts.iter().map(|(k, _)| view! { <th scope="col">{k.clone()}</th> }).collect_view()}</tr></thead>
                    <tbody><tr>{panel.counts.iter().map(|(_, v)| view! { <td>{*v}</td> }).collect_view()}</tr></tbody>
                </table>
                <p><button type="button" on:click=move |_| { sync.dispatch(SyncProlific { study_id: id }); }>"Sync now"</button></p>
            })}
            {panel.propose_more_places.map(|n| view! { <p class="proposal">"hardneg needs " {n} " more places than Prolific has left: " <code>{format!("hardneg prolific places {study_id} {}", panel.places as u64 + n)}</code></p> })}
            <p class="said" role="status">{said}</p>
            {(!panel.mismatches.is_empty()).then(|| view! {
                <table class="data mismatches">
                    <caption>"Mismatches"</caption>
                    <thead><tr><th scope="col">"Kind"</th><th scope="col">"Who"</th><th scope="col">"What to do"</th></tr></thead>
                    <tbody>{panel.mismatches.iter().map(|(k, w, a)| view! { <tr><td>{k.clone()}</td><td>{w.clone()}</td><td>{a.clone()}</td></tr> }).collect_view()}</tbody>
                </table>
            })}
            {(!panel.open_outbox.is_empty()).then(|| view! {
                <ul class="outbox">{panel.open_outbox.iter().map(|l| view! { <li>{l.clone()}</li> }).collect_view()}</ul>
            })}
        </div>
    }
}
