//! On the research page, a link study's live dashboard: places,
//! participants, rate, ETA and cost, with SVG charts (no chart library),
//! refreshed every few seconds without a reload; the flagged participants
//! with a button that discards a copy; and the approve list's download link.
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::domain::crowd::figures::{duration_text as minutes, polyline, Dashboard, HISTOGRAM_BINS};
use crate::domain::ids::{ParticipantId, StudyId};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How often the hydrated page asks for new figures.
const POLL: Duration = Duration::from_secs(3);

/// None for a study that is not a link study.
#[server(prefix = "/sfn")]
pub async fn study_dashboard(study_id: StudyId) -> Result<Option<Dashboard>, ServerFnError> {
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    match crate::crowd::dashboard(&state.db, study_id, state.crowd.clock.now()).await {
        Err(ServiceError::NotFound(_)) => Ok(None),
        other => other.map(Some).map_err(session::sfn_error),
    }
}

/// A participant the approve list does not simply approve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlaggedView {
    pub participant: i64,
    pub username: String,
    pub status: String,
    pub flags: String,
    pub decision: String,
    pub reason: String,
    /// A finished copy (completed or extra) may be discarded.
    pub can_discard: bool,
}

#[server(prefix = "/sfn")]
pub async fn flagged_participants(study_id: StudyId) -> Result<Vec<FlaggedView>, ServerFnError> {
    use crate::domain::crowd::flags::Decision;
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    // Not a link study: nobody to flag. An error would not be sent with the
    // page, so the browser would ask again for every such study.
    let rows = match crate::crowd::approve_list(&state.db, study_id).await {
        Err(ServiceError::NotFound(_)) => return Ok(Vec::new()),
        other => other.map_err(session::sfn_error)?,
    };
    Ok(rows
        .into_iter()
        .filter(|r| !r.flags.is_empty() || matches!(r.decision, Decision::Reject | Decision::Review))
        .map(|r| FlaggedView {
            participant: r.participant,
            can_discard: matches!(r.status.as_str(), "completed" | "extra"),
            username: r.username,
            status: r.status,
            flags: r.flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", "),
            decision: r.decision.as_str().to_string(),
            reason: r.reason,
        })
        .collect())
}

#[server(prefix = "/sfn")]
pub async fn discard_participant(study_id: StudyId, number: ParticipantId) -> Result<(), ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::crowd::discard(&state.db, study_id, number).await.map(|_| ()).map_err(session::sfn_error)
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

#[component]
pub fn StudyDashboard(study_id: i64) -> impl IntoView {
    let tick = RwSignal::new(0u64);
    let discard = ServerAction::<DiscardParticipant>::new();
    // Only in the browser: the server renders the figures once.
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(move || tick.update(|t| *t += 1), POLL) {
            on_cleanup(move || handle.clear());
        }
    });
    let figures = Resource::new(
        move || (study_id, tick.get(), discard.version().get()),
        |(id, _, _)| study_dashboard(StudyId::new(id)),
    );
    let flagged =
        Resource::new(move || (study_id, discard.version().get()), |(id, _)| flagged_participants(StudyId::new(id)));
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match figures.await {
                    Err(e) => Some(view! { <p class="error">{error_text(&e)}</p> }.into_any()),
                    Ok(None) => None,
                    Ok(Some(d)) => Some({ let now = d.now; view! {
                        <div class="dashboard" data-updated=now>
                            <h3>"Dashboard"</h3>
                            <Figures d=d.clone()/>
                            <Charts d/>
                            <p><a class="approve-list" href=format!("/api/v1/studies/{study_id}/approve-list.csv") download="">"Download the approve list (CSV)"</a></p>
                        </div>
                    }.into_any() }),
                }
            })}
        </Transition>
        {move || discard.value().get().and_then(|r| r.err()).map(|e| view! { <p class="error" role="alert">{error_text(&e)}</p> })}
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match flagged.await {
                    Err(_) => None,
                    Ok(rows) if rows.is_empty() => None,
                    Ok(rows) => Some(view! { <FlaggedTable rows study_id discard/> }),
                }
            })}
        </Transition>
    }
}

#[component]
fn Figures(d: Dashboard) -> impl IntoView {
    let p = d.participants.clone();
    let cost = d.cost;
    let ended_early = (p.ended_uninformative > 0).then(|| format!(" ({} ended early)", p.ended_uninformative));
    view! {
        <table class="data figures">
            <caption>"Places and participants"</caption>
            <thead><tr>
                <th scope="col">"Free"</th><th scope="col">"Leased"</th><th scope="col">"Completed"</th>
                <th scope="col">"Started"</th><th scope="col">"Finished"</th><th scope="col">"Timed out"</th>
                <th scope="col">"Returned"</th><th scope="col">"Screened out"</th><th scope="col">"Discarded"</th>
            </tr></thead>
            <tbody><tr>
                <td data-figure="free">{d.free}</td>
                <td data-figure="leased">{d.leased}</td>
                <td data-figure="completed">{d.completed}</td>
                <td data-figure="started">{p.started}</td>
                <td data-figure="finished" data-ended-uninformative=p.ended_uninformative
                    title="completed plus finished late; ended early: places adaptive overlap ended because the answers carried no information (approve them: they were promised payment)">
                    {p.completed + p.extra}{ended_early}
                </td>
                <td data-figure="timed-out">{p.timed_out}</td>
                <td data-figure="returned">{p.returned}</td>
                <td data-figure="screened-out">{p.screened_out}</td>
                <td data-figure="discarded">{p.discarded}</td>
            </tr></tbody>
        </table>
        <table class="data figures">
            <caption>"Pace and cost"</caption>
            <thead><tr>
                <th scope="col">"Answers"</th><th scope="col">"Per minute"</th><th scope="col">"ETA"</th>
                <th scope="col">"Median per item"</th><th scope="col">"Median per bundle"</th>
                <th scope="col">"Estimated cost"</th><th scope="col">"Spent"</th>
            </tr></thead>
            <tbody><tr>
                <td data-figure="answers">{d.answers}</td>
                <td data-figure="rate">{or_dash(d.answers_per_minute.map(|r| format!("{r:.1}")))}</td>
                <td data-figure="eta" title=format!("{} answers to go", d.remaining_answers)>{or_dash(d.eta_secs.map(minutes))}</td>
                <td data-figure="median-item">{or_dash(d.median_secs_per_item.map(|s| format!("{s:.1} s")))}</td>
                <td data-figure="median-bundle">{or_dash(d.median_bundle_secs.map(minutes))}</td>
                <td data-figure="cost" title=format!("US${:.2}/h with a {:.1}% fee", d.hourly_wage, d.platform_fee * 100.0)>
                    {or_dash(cost.map(|c| format!("US${:.2}", c.estimated_total)))}
                </td>
                <td data-figure="spent">{or_dash(cost.map(|c| format!("US${:.2}", c.spent)))}</td>
            </tr></tbody>
        </table>
        {d.adaptive.map(|a| view! {
            <p class="adaptive-savings">
                "Adaptive overlap: " <span data-figure="answers-spent">{a.answers_spent}</span>
                " answers spent against " <span data-figure="fixed-answers">{a.fixed_answers}</span>
                " at a fixed overlap of " {a.max}
                {a.saved_share.map(|s| format!(" ({:.1}% fewer on stopped items)", s * 100.0))}
            </p>
        })}
    }
}

const W: f64 = 320.0;
const H: f64 = 120.0;

#[component]
fn Charts(d: Dashboard) -> impl IntoView {
    let start = d.arrivals.first().map(|p| p.0).unwrap_or(d.now);
    let x = (start, d.now.max(start + 1));
    let y_max = d.arrivals.last().map(|p| p.1).unwrap_or(0);
    // Step ends at "now", so a flat stretch shows as flat.
    let extend = |s: &[(i64, i64)]| {
        let mut v = s.to_vec();
        if let Some(&(_, n)) = s.last() {
            v.push((d.now, n));
        }
        v
    };
    let arrivals = polyline(&extend(&d.arrivals), x, y_max, W, H);
    let completions = polyline(&extend(&d.completions), x, y_max, W, H);
    let peak = d.time_per_item.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bar = W / (HISTOGRAM_BINS + 1) as f64;
    let summary = format!("{} arrivals and {} finished bundles so far", y_max, d.completions.last().map_or(0, |p| p.1));
    view! {
        <div class="charts">
            <figure>
                <svg class="chart arrivals" viewBox=format!("0 0 {W} {H}") width=W height=H role="img" aria-label=summary.clone()>
                    <title>{summary.clone()}</title>
                    <polyline class="arrivals-line" points=arrivals fill="none" stroke="#1f5fbf" stroke-width="2"/>
                    <polyline class="completions-line" points=completions fill="none" stroke="#2e7d32" stroke-width="2" stroke-dasharray="5 3"/>
                </svg>
                <figcaption>"Arrivals (solid) and finished bundles (dashed) over time"</figcaption>
            </figure>
            <figure>
                <svg class="chart time-per-item" viewBox=format!("0 0 {W} {H}") width=W height=H role="img"
                    aria-label="Answers by seconds per item, 1-second bins from 0 to 30 s and over">
                    <title>"Answers by seconds per item"</title>
                    {d.time_per_item.iter().enumerate().map(|(i, &n)| {
                        let h = n as f64 / peak * H;
                        view! { <rect x=format!("{:.1}", i as f64 * bar) y=format!("{:.1}", H - h) width=format!("{:.1}", bar - 1.0) height=format!("{h:.1}") fill="#555" data-count=n/> }
                    }).collect_view()}
                </svg>
                <figcaption>"Time per item: 0 to 30 s, one bar a second, the last bar 30 s and more"</figcaption>
            </figure>
        </div>
    }
}

#[component]
fn FlaggedTable(rows: Vec<FlaggedView>, study_id: i64, discard: ServerAction<DiscardParticipant>) -> impl IntoView {
    view! {
        <table class="data flagged">
            <caption>"Flagged participants"</caption>
            <thead><tr>
                <th scope="col">"Participant"</th><th scope="col">"Status"</th><th scope="col">"Flags"</th>
                <th scope="col">"Suggested"</th><th scope="col">"Copy"</th>
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|r| {
                    let number = r.participant;
                    view! {
                        <tr data-participant=number>
                            <th scope="row">{r.username.clone()}</th>
                            <td class="status">{r.status}</td>
                            <td class="flags">{r.flags}</td>
                            <td class="decision" title=r.reason>{r.decision}</td>
                            <td>{r.can_discard.then(|| view! {
                                <button type="button" class="discard" aria-label=format!("Discard the copy of {}", r.username)
                                    on:click=move |_| { discard.dispatch(DiscardParticipant { study_id: StudyId::new(study_id), number: ParticipantId::new(number) }); }>
                                    "Discard"
                                </button>
                            })}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
