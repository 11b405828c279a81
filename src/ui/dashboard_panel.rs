//! On the research page, a link study's dashboard: places, participants,
//! rate, ETA and cost, with SVG charts (no chart library); the flagged
//! participants with a button that discards a copy; and the approve list's
//! download link. Its figures come, with the rest of the live section, from
//! one polled read (`live_panel.rs`).
#[cfg(feature = "ssr")]
use super::session;
use crate::domain::crowd::figures::{duration_text as minutes, polyline, Dashboard, HISTOGRAM_BINS};
use crate::domain::ids::{ParticipantId, StudyId};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

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

/// The approve list's rows that are flagged or not simply approved.
#[cfg(feature = "ssr")]
pub async fn flagged(db: &sqlx::AnyPool, study_id: StudyId) -> Result<Vec<FlaggedView>, crate::error::ServiceError> {
    use crate::domain::crowd::flags::Decision;
    let rows = crate::crowd::approve_list(db, crate::kinds::KINDS, study_id).await?;
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

/// The dashboard's figures and charts as of `d.now`.
#[component]
pub fn DashboardCard(d: Dashboard, study_id: StudyId) -> impl IntoView {
    let now = d.now;
    view! {
        <div class="dashboard" data-updated=now>
            <h3>"Dashboard"</h3>
            <Figures d=d.clone()/>
            <Charts d/>
            <p><a class="approve-list" href=format!("/api/v1/studies/{study_id}/approve-list.csv") download="">"Download the approve list (CSV)"</a></p>
        </div>
    }
    .into_any()
}

#[component]
fn Figures(d: Dashboard) -> impl IntoView {
    let p = d.participants.clone();
    let cost = d.cost;
    let ended_early = (p.ended_uninformative > 0).then(|| format!(" ({} ended early)", p.ended_uninformative));
    // Adaptive overlap's later rounds are not in any bundle yet: the ETA is a floor.
    let floor = d.adaptive.as_ref().is_some_and(|a| a.stopped.collecting > 0);
    let eta = d.eta_secs.map(|s| if floor { format!("at least {}", minutes(s)) } else { minutes(s) });
    let eta_title = match floor {
        true => {
            format!("{} answers to go in the bundles made so far; follow-up rounds will add more", d.remaining_answers)
        }
        false => format!("{} answers to go", d.remaining_answers),
    };
    view! {
        <table class="data figures" tabindex="0">
            <caption>"Places and participants"</caption>
            <thead><tr>
                <th scope="col">"Free"</th><th scope="col">"Leased"</th><th scope="col">"Completed"</th>
                <th scope="col">"Arrived"</th><th scope="col">"Finished"</th><th scope="col">"Timed out"</th>
                <th scope="col">"Returned"</th><th scope="col">"Screened out"</th><th scope="col">"Discarded"</th>
            </tr></thead>
            <tbody><tr>
                <td data-figure="free">{d.free}</td>
                <td data-figure="leased" title="places held by someone working now">{d.leased}</td>
                <td data-figure="completed" title="counted copies">{d.completed}</td>
                <td data-figure="started" title="everyone who arrived by the link">{p.started}</td>
                <td data-figure="finished" data-ended-uninformative=p.ended_uninformative
                    title="completed plus finished late; ended early: places adaptive overlap ended because the answers carried no information (approve them: they were promised payment)">
                    {p.completed + p.extra}{ended_early}
                </td>
                <td data-figure="timed-out">{p.timed_out}</td>
                <td data-figure="returned">{p.returned}</td>
                <td data-figure="screened-out" title="by attention checks or by the comprehension check">{p.screened_out}</td>
                <td data-figure="discarded">{p.discarded}</td>
            </tr></tbody>
        </table>
        <table class="data figures" tabindex="0">
            <caption>"Pace and cost"</caption>
            <thead><tr>
                <th scope="col">"All answers"</th><th scope="col">"Answers per minute"</th><th scope="col">"ETA"</th>
                <th scope="col">"Median per item"</th><th scope="col">"Median per bundle"</th>
                <th scope="col">"Estimated cost"</th><th scope="col" title="the spec's hourly wage, with the fee, times the median bundle time and the places finished: hardneg's estimate of a fair pay, not a payment (on Prolific, its panel's spent is what Prolific charged, in the study's currency)">"Estimated for finished places"</th>
            </tr></thead>
            <tbody><tr>
                <td data-figure="answers" title="every stored answer: check items and uncounted copies included">{d.answers}</td>
                <td data-figure="rate">{or_dash(d.answers_per_minute.map(|r| format!("{r:.1}")))}</td>
                <td data-figure="eta" title=eta_title>{or_dash(eta)}</td>
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

/// The plot area; the axes' labels go in the margins around it.
const W: f64 = 320.0;
const H: f64 = 120.0;
const LEFT: f64 = 44.0;
const BOTTOM: f64 = 34.0;
const TOP: f64 = 8.0;
const RIGHT: f64 = 12.0;

/// A chart's frame: the plot at (LEFT, TOP), axis lines, the ends of each
/// axis and its title (with its unit).
fn axes(x_ends: (String, String), y_max: i64, x_title: &'static str, y_title: &'static str) -> impl IntoView {
    let (x0, x1) = x_ends;
    view! {
        <g class="axes" fill="currentColor" font-size="11">
            <line x1=LEFT y1=TOP x2=LEFT y2={TOP + H} stroke="currentColor"/>
            <line x1=LEFT y1={TOP + H} x2={LEFT + W} y2={TOP + H} stroke="currentColor"/>
            <text x={LEFT - 4.0} y={TOP + H} text-anchor="end" dominant-baseline="middle">"0"</text>
            <text x={LEFT - 4.0} y={TOP + 4.0} text-anchor="end" dominant-baseline="middle">{y_max}</text>
            <text x=LEFT y={TOP + H + 13.0} text-anchor="start">{x0}</text>
            <text x={LEFT + W} y={TOP + H + 13.0} text-anchor="end">{x1}</text>
            <text class="x-title" x={LEFT + W / 2.0} y={TOP + H + 28.0} text-anchor="middle">{x_title}</text>
            <text class="y-title" x=12.0 y={TOP + H / 2.0} text-anchor="middle"
                transform=format!("rotate(-90 12 {})", TOP + H / 2.0)>{y_title}</text>
        </g>
    }
}

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
    let peak_count = d.time_per_item.iter().copied().max().unwrap_or(0);
    let peak = peak_count.max(1) as f64;
    let bar = W / (HISTOGRAM_BINS + 1) as f64;
    let summary = format!("{} arrivals and {} finished bundles so far", y_max, d.completions.last().map_or(0, |p| p.1));
    let span = format!("{} min", (x.1 - x.0 + 59) / 60);
    let (box_w, box_h) = (LEFT + W + RIGHT, TOP + H + BOTTOM);
    let plot = format!("translate({LEFT} {TOP})");
    view! {
        <div class="charts">
            <figure>
                <svg class="chart arrivals" viewBox=format!("0 0 {box_w} {box_h}") width=box_w height=box_h role="img" aria-label=summary.clone()>
                    <title>{summary.clone()}</title>
                    {axes(("0 min".into(), span), y_max, "minutes since the first arrival", "people")}
                    <g transform=plot.clone()>
                        <polyline class="arrivals-line" points=arrivals fill="none" stroke="#1f5fbf" stroke-width="2"/>
                        <polyline class="completions-line" points=completions fill="none" stroke="#2e7d32" stroke-width="2" stroke-dasharray="5 3"/>
                    </g>
                </svg>
                <figcaption>"Arrivals (solid) and finished bundles (dashed): people, over minutes since the first arrival"</figcaption>
            </figure>
            <figure>
                <svg class="chart time-per-item" viewBox=format!("0 0 {box_w} {box_h}") width=box_w height=box_h role="img"
                    aria-label="Answers by seconds per item, 1-second bins from 0 to 30 s and over">
                    <title>"Answers by seconds per item"</title>
                    {axes(("0 s".into(), "30 s and more".into()), peak_count, "seconds per item", "answers")}
                    <g transform=plot>
                        {d.time_per_item.iter().enumerate().map(|(i, &n)| {
                            let h = n as f64 / peak * H;
                            view! { <rect x=format!("{:.1}", i as f64 * bar) y=format!("{:.1}", H - h) width=format!("{:.1}", bar - 1.0) height=format!("{h:.1}") fill="#555" data-count=n/> }
                        }).collect_view()}
                    </g>
                </svg>
                <figcaption>"Time per item: answers per second of time taken, 0 to 30 s, one bar a second, the last bar 30 s and more"</figcaption>
            </figure>
        </div>
    }
}

#[component]
pub fn FlaggedTable(
    rows: Vec<FlaggedView>,
    study_id: StudyId,
    discard: ServerAction<DiscardParticipant>,
    armed: RwSignal<Option<i64>>,
) -> impl IntoView {
    view! {
        <table class="data flagged" tabindex="0">
            <caption>"Flagged participants"</caption>
            <thead><tr>
                <th scope="col">"Participant"</th><th scope="col">"Status"</th><th scope="col">"Flags"</th>
                <th scope="col">"Suggested"</th><th scope="col">"Discard"</th>
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
                                // Discarding cannot be undone: the first click asks, a second,
                                // separate click discards. The second click of a double click
                                // (its `detail` counts 2) does not confirm (audit AS).
                                <button type="button" class="discard" class:armed=move || armed.get() == Some(number)
                                    aria-label=move || if armed.get() == Some(number) { format!("Confirm: discard the copy of {} for good", r.username) } else { format!("Discard the copy of {}", r.username) }
                                    on:click=move |ev: leptos::ev::MouseEvent| {
                                        if ev.detail() > 1 {
                                            return;
                                        }
                                        if armed.get_untracked() == Some(number) {
                                            armed.set(None);
                                            discard.dispatch(DiscardParticipant { study_id, number: ParticipantId::new(number) });
                                        } else {
                                            armed.set(Some(number));
                                        }
                                    }>
                                    {move || if armed.get() == Some(number) { "Confirm discard" } else { "Discard" }}
                                </button>
                            })}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
