//! On the research page, a link study on Prolific (docs/prolific.md):
//! before publishing, the draft's reward, places and cost with a button
//! (a draft first, showing Prolific's cost; then publish), or why the spec
//! cannot be published; afterwards, Prolific's counts beside hardneg's
//! places, spent / committed / cap, the mismatches with what to do, and
//! the outbox rows still open. Part of the live section's polled read.
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
    /// Not published yet (no draft, or a draft): the publish buttons show.
    pub draft: bool,
    /// Why the study cannot be published as its spec stands.
    pub problem: Option<String>,
    pub reward: String,
    pub places: i64,
    /// hardneg's figures before publishing: places × reward, and with which fee.
    pub estimated: Option<String>,
    /// Prolific's counts by status, as last synced.
    pub counts: Vec<(String, i64)>,
    pub hardneg: (i64, i64, i64, i64),
    pub spent: String,
    pub committed: String,
    pub cap: Option<String>,
    /// How many places to add, and the new total.
    pub propose_more_places: Option<(u64, u64)>,
    /// Why those places cannot be bought (the budget cap).
    #[serde(default)]
    pub over_cap: Option<String>,
    pub mismatches: Vec<(String, String, String)>,
    pub open_outbox: Vec<String>,
    /// Bonuses by state, once there are any (as `prolific status` says them).
    #[serde(default)]
    pub bonuses: Option<String>,
}

/// The panel of a link study with a `[prolific]` table; None for any other
/// study. Read with the live section (`live_panel.rs`), so its hardneg
/// figures tick with the dashboard's.
#[cfg(feature = "ssr")]
pub async fn prolific_panel_view(
    state: &crate::state::AppState,
    study_id: StudyId,
) -> Result<Option<ProlificPanelView>, crate::error::ServiceError> {
    use crate::domain::prolific::money::cents;
    use crate::error::ServiceError;
    // No [prolific] table (or not a link study): nothing to show.
    match crate::prolific::settings::settings(&state.db, study_id).await {
        Ok(_) => {}
        Err(ServiceError::NotFound(_) | ServiceError::Invalid(_)) => return Ok(None),
        Err(e) => return Err(e),
    }
    match crate::prolific::status::status(&state.db, study_id).await {
        Ok(s) => Ok(Some(ProlificPanelView {
            study_id,
            draft: s.status.as_deref() == Some("UNPUBLISHED"),
            // A draft carries Prolific's own fee: over the cap, publishing can only be refused.
            problem: s.budget.cap.filter(|&cap| s.status.as_deref() == Some("UNPUBLISHED") && s.budget.committed > cap).map(
                |cap| {
                    format!(
                        "Prolific's cost of the draft, {}, is over the budget cap of {}: raise budget_cap or lower the places",
                        cents(s.budget.committed),
                        cents(cap)
                    )
                },
            ),
            prolific_id: s.prolific_id,
            status: s.status,
            reward: cents(s.reward_cents.max(0) as u64),
            places: s.places,
            estimated: None,
            counts: s
                .counts
                .as_object()
                .map(|o| o.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()? as i64))).collect())
                .unwrap_or_default(),
            hardneg: (s.hardneg_places, s.hardneg_completed, s.hardneg_working, s.hardneg_free),
            spent: cents(s.budget.spent),
            committed: cents(s.budget.committed),
            cap: s.budget.cap.map(cents),
            propose_more_places: s.propose_more_places.zip(s.propose_total),
            over_cap: s.over_cap,
            mismatches: s
                .mismatches
                .into_iter()
                .map(|m| {
                    // The submission id is what Prolific's pages find a participant by.
                    let who =
                        m.participant.map(|p| format!("participant {p}")).unwrap_or_else(|| "not in hardneg".into());
                    let on_prolific = match (&m.submission, &m.prolific_status) {
                        (Some(sub), Some(st)) => format!("; submission {sub} ({st} on Prolific)"),
                        (Some(sub), None) => format!("; submission {sub}"),
                        _ => "; no submission on Prolific".into(),
                    };
                    (m.kind.words().to_string(), format!("{who}{on_prolific}"), m.advice)
                })
                .collect(),
            bonuses: bonus_words(s.bonuses),
            open_outbox: s
                .outbox
                .into_iter()
                .map(|l| l.sentence())
                .collect(),
        })),
        Err(ServiceError::NotFound(_)) => {
            let mut view = ProlificPanelView {
                study_id,
                prolific_id: None,
                status: None,
                draft: true,
                reward: String::new(),
                places: 0,
                estimated: None,
                problem: None,
                counts: Vec::new(),
                hardneg: (0, 0, 0, 0),
                spent: cents(0),
                committed: cents(0),
                cap: None,
                propose_more_places: None,
                over_cap: None,
                mismatches: Vec::new(),
                open_outbox: Vec::new(),
                bonuses: None,
            };
            // A study Prolific would refuse (under its minimum pay, over the
            // budget cap) still gets its panel, saying why it cannot go out.
            match crate::prolific::publish::plan(&state.db, study_id, "", &Default::default(), &[]).await {
                Ok(p) => {
                    view.reward = cents(p.reward_cents);
                    view.places = p.places as i64;
                    view.estimated = Some(if p.fee > 0.0 {
                        format!("{} with a {:.1} % fee", cents(p.estimated_cents), p.fee * 100.0)
                    } else {
                        format!("{} before Prolific's fee (the draft shows its cost)", cents(p.estimated_cents))
                    });
                    view.cap = p.budget_cap_cents.map(cents);
                }
                Err(ServiceError::Invalid(why)) => {
                    let (reward, places, cap) = crate::prolific::publish::spec_figures(&state.db, study_id).await?;
                    view.reward = reward.map(cents).unwrap_or_else(|| "—".into());
                    view.places = places as i64;
                    view.cap = cap.map(cents);
                    view.problem = Some(why);
                }
                Err(e) => return Err(e),
            }
            Ok(Some(view))
        }
        Err(e) => Err(e),
    }
}

/// "Bonuses: 2 paid (1.00), 1 set up, not paid yet, 1 planned"; None before any.
#[cfg(feature = "ssr")]
fn bonus_words((planned, set_up, paid, paid_cents): (i64, i64, i64, i64)) -> Option<String> {
    use crate::domain::prolific::money::cents;
    let parts = [
        (paid > 0).then(|| format!("{paid} paid ({})", cents(paid_cents.max(0) as u64))),
        (set_up > 0).then(|| format!("{set_up} set up, not paid yet")),
        (planned > 0).then(|| format!("{planned} planned")),
    ];
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| format!("Bonuses: {}", parts.join(", ")))
}

/// `confirm = false`: make (or find) the draft and say Prolific's cost;
/// `true`: publish it. Researchers and admins only.
#[server(prefix = "/sfn")]
pub async fn publish_on_prolific(study_id: StudyId, confirm: bool) -> Result<String, ServerFnError> {
    use crate::domain::prolific::money::cents;
    let (state, _) = session::researcher().await?;
    let client = crate::prolific::connect(&state.db).map_err(session::sfn_error)?;
    let parts: Option<axum::http::request::Parts> = use_context();
    let origin = state.study_origin(&parts.map(|p| p.headers).unwrap_or_default());
    let over = Default::default();
    if confirm {
        let p =
            crate::prolific::publish::publish(&client, study_id, &origin, &over).await.map_err(session::sfn_error)?;
        return Ok(format!(
            "Published: {} is {}; Prolific sends participants to {}",
            p.prolific_id, p.status, p.study_url
        ));
    }
    let (plan, pid, cost) =
        crate::prolific::publish::prepare(&client, study_id, &origin, &over).await.map_err(session::sfn_error)?;
    let total = crate::domain::prolific::money::ProlificCost::read(&cost)
        .map(|c| format!("{} (fees and tax included)", cents(c.total())))
        .unwrap_or_else(|| "not given".into());
    let url = plan.body["external_study_url"].as_str().unwrap_or_default().to_string();
    Ok(format!(
        "Draft {pid}: {} places at {}; Prolific's cost {total}; participants go to {url}. Publish to open it.",
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
    use crate::ui_kit::count_of;
    let (subs, pages) =
        (count_of(r.submissions as i64, "submission", "submissions"), count_of(r.pages as i64, "page", "pages"));
    let freed = count_of(r.freed as i64, "place", "places");
    Ok(format!("Synced {subs} ({pages}); {freed} freed{raised}{stopped}"))
}

/// The Prolific panel's two actions: made by the live section, which reads
/// the panel again once either ends, so the card never shows what was
/// true before the click.
#[derive(Clone, Copy, Default)]
pub struct ProlificActions {
    pub publish: ServerAction<PublishOnProlific>,
    pub sync: ServerAction<SyncProlific>,
}

impl ProlificActions {
    /// Bumps whenever an action ends.
    pub fn ended(&self) -> (usize, usize) {
        (self.publish.version().get(), self.sync.version().get())
    }
}

#[component]
pub fn ProlificCard(panel: ProlificPanelView, actions: ProlificActions) -> impl IntoView {
    let ProlificActions { publish, sync } = actions;
    let study_id = panel.study_id;
    let said = move || {
        let text =
            |r: Option<Result<String, ServerFnError>>| r.map(|r| r.unwrap_or_else(|e| crate::ui_kit::error_text(&e)));
        text(sync.value().get()).or_else(|| text(publish.value().get()))
    };
    let busy = move || publish.pending().get() || sync.pending().get();
    let (places, completed, working, free) = panel.hardneg;
    // A draft's places are not bought yet: it would commit them once published.
    let committed = if panel.draft { " · would commit " } else { " · committed " };
    let can_publish = panel.draft && panel.problem.is_none();
    view! {
        <div class="prolific-panel" aria-busy=move || busy().to_string()>
            <h3>"Prolific " {panel.prolific_id.clone().map(|p| format!("study {p}"))} " " {panel.status.clone()}</h3>
            <p>
                "Reward " {panel.reward.clone()} " · " {panel.places} " places"
                {panel.estimated.clone().map(|e| format!(" · estimated {e}"))}
                " · spent " <span class="spent">{panel.spent.clone()}</span>
                {committed} <span class="committed">{panel.committed.clone()}</span>
                " · cap " {panel.cap.clone().unwrap_or_else(|| "none".into())}
            </p>
            {panel.bonuses.clone().map(|b| view! { <p class="bonuses">{b}</p> })}
            {panel.problem.clone().map(|why| view! { <p class="error problem">"Cannot be published as the spec stands: " {why}</p> })}
            {can_publish.then(|| view! {
                <p>
                    {panel.prolific_id.is_none().then(|| view! {
                        <button type="button" disabled=busy on:click=move |_| { publish.dispatch(PublishOnProlific { study_id, confirm: false }); }>"Make the draft and show its cost"</button>
                        " "
                    })}
                    <button type="button" disabled=busy on:click=move |_| { publish.dispatch(PublishOnProlific { study_id, confirm: true }); }>"Publish on Prolific"</button>
                    {move || publish.pending().get().then_some(" Talking to Prolific…")}
                </p>
            })}
            {(!panel.draft).then(|| view! {
                <table class="data prolific-counts" tabindex="0">
                    <caption>"Prolific's submissions beside hardneg's places (" {places} " wanted: " {completed} " completed, " {working} " working, " {free} " free)"</caption>
                    <thead><tr>{panel.counts.iter().map(|(k, _)| view! { <th scope="col">{k.clone()}</th> }).collect_view()}</tr></thead>
                    <tbody><tr>{panel.counts.iter().map(|(_, v)| view! { <td>{*v}</td> }).collect_view()}</tr></tbody>
                </table>
                <p>
                    <button type="button" disabled=busy on:click=move |_| { sync.dispatch(SyncProlific { study_id }); }>"Sync now"</button>
                    {move || sync.pending().get().then_some(" Syncing…")}
                </p>
            })}
            {match (panel.propose_more_places, panel.over_cap) {
                (Some((n, _)), Some(why)) => Some(view! {
                    <p class="proposal notice" role="note">"The budget cap stops this study: hardneg needs "
                        {crate::ui_kit::count_of(n as i64, "more place", "more places")} " than Prolific has left, but "
                        {why} ". The items still collecting will get no more answers."</p>
                }.into_any()),
                (Some((n, total)), None) => Some(view! { <p class="proposal">"hardneg needs " {crate::ui_kit::count_of(n as i64, "more place", "more places")} " than Prolific has left: " <code>{format!("hardneg prolific places {study_id} {total}")}</code></p> }.into_any()),
                _ => None,
            }}
            <p class="said" role="status">{said}</p>
            {(!panel.mismatches.is_empty()).then(|| view! {
                <table class="data mismatches" tabindex="0">
                    <caption>"Mismatches"</caption>
                    <thead><tr><th scope="col">"Kind"</th><th scope="col">"Who"</th><th scope="col">"What to do"</th></tr></thead>
                    <tbody>{panel.mismatches.iter().map(|(k, w, a)| view! { <tr><td class="text">{k.clone()}</td><td class="text">{w.clone()}</td><td class="text">{a.clone()}</td></tr> }).collect_view()}</tbody>
                </table>
            })}
            {(!panel.open_outbox.is_empty()).then(|| view! {
                <ul class="outbox">{panel.open_outbox.iter().map(|l| view! { <li>{l.clone()}</li> }).collect_view()}</ul>
            })}
        </div>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::bonus_words;

    #[test]
    fn the_panel_says_bonuses_by_state_once_there_are_any() {
        assert_eq!(bonus_words((0, 0, 0, 0)), None);
        assert_eq!(bonus_words((0, 0, 3, 150)).as_deref(), Some("Bonuses: 3 paid (1.50)"));
        assert_eq!(
            bonus_words((2, 1, 4, 1005)).as_deref(),
            Some("Bonuses: 4 paid (10.05), 1 set up, not paid yet, 2 planned")
        );
    }
}
