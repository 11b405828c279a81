//! On the research page, an adaptive-overlap study's spending: how many
//! answers items took and why they stopped, against a fixed overlap of `max`.
#[cfg(feature = "ssr")]
use super::session;
use crate::domain::adaptive::{AdaptiveReport, Reason, Stop};
use crate::domain::ids::StudyId;
use leptos::prelude::*;

/// None for a study with a fixed overlap; an error for no such study.
#[server(prefix = "/sfn")]
pub async fn adaptive_panel(study_id: StudyId) -> Result<Option<AdaptiveReport>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    let meta = crate::studies::meta::load_study_meta(&state.db, state.kinds, study_id).await;
    if meta.map_err(session::sfn_error)?.adaptive.is_none() {
        return Ok(None);
    }
    crate::studies::adaptive_report::report(&state.db, state.kinds, study_id)
        .await
        .map(Some)
        .map_err(session::sfn_error)
}

/// Read with the page, and again whenever `answers` (the card's counted
/// answers, which the live poll moves) changes; the old figures stay up
/// while the new ones load.
#[component]
pub fn AdaptivePanel(study_id: StudyId, answers: Memo<i64>) -> impl IntoView {
    let report = Resource::new(move || (study_id, answers.get()), |(id, _)| adaptive_panel(id));
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match report.await {
                    Err(e) => Some(view! { <p class="error">{super::error_text(&e)}</p> }.into_any()),
                    Ok(None) => None,
                    Ok(Some(r)) => Some(view! { <AdaptiveCard report=r/> }.into_any()),
                }
            })}
        </Transition>
    }
}

fn reason_text(r: Option<Reason>) -> &'static str {
    r.map_or("collecting", Reason::as_str)
}

#[component]
fn AdaptiveCard(report: AdaptiveReport) -> impl IntoView {
    let s = report.settings;
    let stop = match s.stop {
        Stop::Agree => "agree".to_string(),
        Stop::Posterior { threshold } => format!("posterior ≥ {threshold}"),
    };
    // Nothing is saved before an item stops: no share to show yet.
    let saved = report.saved_share.map(|x| format!("{:.1}%", x * 100.0));
    // How many items took n answers, per n from 1 to max.
    let taken: Vec<(usize, usize)> =
        (1..=s.max).map(|n| (n, report.items.iter().filter(|i| i.answers as usize == n).count())).collect();
    let c = report.stopped.clone();
    let doubtful = report.doubtful.clone();
    let warning = report.calibration_warning.clone();
    let left_out = report.ended_uninformative;
    let study = report.study_id;
    view! {
        <div class="adaptive-panel">
            <h3>"Adaptive overlap"</h3>
            <p>
                "min " {s.min} " · max " {s.max} " · stop " {stop} " · "
                <span class="answers-spent">{report.answers_spent}</span> " answers spent against "
                <span class="fixed-answers">{report.fixed_answers}</span> " at a fixed overlap of " {s.max}
                {saved.map(|saved| view! { " (" <span class="saved">{saved}</span> " fewer on stopped items)" })}
            </p>
            <p class="stopped">
                "Stopped: agreed " {c.agreed} " · confident " {c.confident} " · reached max " {c.max}
                " · still collecting " {c.collecting}
            </p>
            {warning.map(|w| view! { <p class="notice calibration-warning" role="note">"Threshold not calibrated here: " {w}</p> })}
            {(left_out.places > 0).then(|| view! {
                <p class="ended-uninformative">
                    {crate::ui_kit::count_of(left_out.answers, "counted answer comes", "counted answers come")} " from "
                    {crate::ui_kit::count_of(left_out.places, "place", "places")}
                    " ended as carrying no information (the approve list's ended = uninformative): counted above and in "
                    "agreement, left out of the crowd model and of the export's answers file."
                </p>
            })}
            <table class="data answers-taken" tabindex="0">
                <caption>"Items by answers taken"</caption>
                <thead><tr>{taken.iter().map(|(n, _)| view! { <th scope="col">{*n}</th> }).collect_view()}</tr></thead>
                <tbody><tr>{taken.iter().map(|(_, k)| view! { <td>{*k}</td> }).collect_view()}</tr></tbody>
            </table>
            {(!doubtful.is_empty()).then(|| view! {
                <table class="data doubtful-stops" tabindex="0">
                    <caption>
                        {doubtful.len()} " stopped " {if doubtful.len() == 1 { "item" } else { "items" }}
                        " the final crowd model doubts (the stop stands; "
                        <a href=format!("/research/studies/{study}/adjudicate#doubtful")>"adjudicate by choice"</a> ")"
                    </caption>
                    <thead><tr>
                        <th scope="col">"Instance"</th><th scope="col">"Stop rule's value"</th>
                        <th scope="col">"Model"</th><th scope="col">"Model's value"</th><th scope="col">"Its posterior"</th>
                    </tr></thead>
                    <tbody>
                        {doubtful.into_iter().map(|d| view! {
                            <tr data-instance=d.instance_id>
                                <th scope="row">{d.instance_id}</th>
                                <td>{d.rule_value}</td>
                                <td>{d.model.as_str()}</td>
                                <td>{d.model_value}</td>
                                <td>{format!("{:.3}", d.model_posterior)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
            <details>
                <summary>"Per item"</summary>
                <table class="data adaptive-items" tabindex="0">
                    <thead><tr>
                        <th scope="col">"Instance"</th><th scope="col">"Answers"</th>
                        <th scope="col">"Why it stopped"</th><th scope="col">"Settled value"</th>
                        <th scope="col">"Posterior"</th><th scope="col">"Posterior's model"</th>
                    </tr></thead>
                    <tbody>
                        {report.items.into_iter().map(|i| view! {
                            <tr data-instance=i.instance_id>
                                <th scope="row">{i.instance_id}</th>
                                <td>{i.answers}</td>
                                <td>{reason_text(i.reason)}</td>
                                <td>{i.value.unwrap_or_default()}</td>
                                <td>{i.posterior.map(|p| format!("{p:.3}")).unwrap_or_default()}</td>
                                <td>{i.posterior_model.map(|m| m.as_str()).unwrap_or_default()}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </details>
        </div>
    }
}
