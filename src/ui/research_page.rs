//! Researcher page: every study with progress per annotator and the answer
//! distribution.
use super::adaptive_panel::AdaptivePanel;
use super::curation::{FunnelTables, StudyPipeline};
use super::dashboard_panel::StudyDashboard;
use super::error_text;
use super::link_panel::LinkPanel;
use super::prolific_panel::ProlificPanel;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::{AgreementSummary, StudyOverview, StudyProgress, StudyStatus};
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn research_overview() -> Result<Vec<StudyOverview>, ServerFnError> {
    let (state, user) = session::researcher().await?;
    crate::studies::overview::research_overview(&state, &user).await.map_err(session::sfn_error)
}

#[component]
pub fn ResearchPage() -> impl IntoView {
    view! {
        <leptos_meta::Title text="Studies"/>
        <h1>"Studies"</h1>
        <p><a href="/research/compare">"Model comparison"</a> " · " <a href="/research/import">"Import candidates"</a></p>
        <StudiesOverview/>
        <FunnelTables/>
    }
}

/// Also shown on the admin page.
#[component]
pub fn StudiesOverview() -> impl IntoView {
    let studies = Resource::new(|| (), |_| research_overview());
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match studies.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => view! { <p>"No studies yet."</p> }.into_any(),
                    Ok(list) => list.into_iter().map(|o| view! { <StudyCard study=o.progress agreement=o.agreement status=o.status/> }).collect_view().into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn StudyCard(study: StudyProgress, agreement: Vec<AgreementSummary>, status: StudyStatus) -> impl IntoView {
    let fmt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into());
    let none_share = study.none_share.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_else(|| "—".into());
    // Only kinds with a None answer (Step 3) have a None share.
    let has_none = study.kind.values().contains(&"none");
    view! {
        <section class="study" data-study=study.study_id>
            <h2>{study.name.clone()}</h2>
            <p>{study.kind.name()} " · " {study.items} " items · " <span class="answers">{study.answers}</span> " answers"</p>
            <StudyPipeline status/>
            <LinkPanel study_id=study.study_id/>
            <ProlificPanel study_id=study.study_id/>
            <AdaptivePanel study_id=study.study_id/>
            <StudyDashboard study_id=study.study_id/>
            <table class="data annotators">
                <caption>"Progress per annotator"</caption>
                <thead><tr><th scope="col">"Annotator"</th><th scope="col">"Done"</th><th scope="col">"Total"</th></tr></thead>
                <tbody>
                    {study.annotators.into_iter().map(|a| { let name = a.username.clone(); view! {
                        <tr data-annotator=name>
                            <th scope="row">{a.username}</th>
                            <td class="done">{a.done}</td>
                            <td class="total">{a.total}</td>
                        </tr>
                    }}).collect_view()}
                </tbody>
            </table>
            <table class="data distribution">
                <caption>"Answers per shown option"</caption>
                <thead><tr>
                    {study.distribution.iter().map(|c| view! { <th scope="col">{c.option.clone()}</th> }).collect_view()}
                    {has_none.then(|| view! { <th scope="col">"None share"</th> })}
                </tr></thead>
                <tbody><tr>
                    {study.distribution.iter().map(|c| view! { <td data-option=c.option.clone()>{c.count}</td> }).collect_view()}
                    {has_none.then(|| view! { <td class="none-share">{none_share}</td> })}
                </tr></tbody>
            </table>
            <table class="data agreement">
                <caption>"Agreement (" <a class="agreement-json" download=format!("agreement-study-{}.json", study.study_id)
                    href=format!("/api/v1/studies/{}/agreement", study.study_id)>"full report, JSON download"</a> ")"</caption>
                <thead><tr>
                    <th scope="col">"Mapping"</th><th scope="col">"Pairs"</th><th scope="col">"Mean Cohen's κ"</th>
                    <th scope="col">"Fleiss' κ"</th><th scope="col">"Krippendorff's α"</th>
                </tr></thead>
                <tbody>
                    {agreement.into_iter().map(|a| view! {
                        <tr data-mapping=a.mapping.clone() data-question=a.question.clone()>
                            <th scope="row">{a.question.as_ref().map_or_else(|| a.mapping.clone(), |q| format!("{} · {q}", a.mapping))}</th>
                            <td>{a.pairs}</td>
                            <td class="mean-kappa" title=a.reason.clone().unwrap_or_default()>{fmt(a.mean_kappa)}</td>
                            <td>{fmt(a.fleiss_kappa)}</td>
                            <td>{fmt(a.krippendorff_alpha)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="hint kappa-note">"Full compares the exact answers; binary only whether each item is kept or discarded. \
                κ corrects for the agreement chance alone gives, so when nearly every answer is the same (e.g. all kept) \
                binary κ falls to 0 or below even though the annotators agree, while full κ, with more answers to tell apart, stays high."</p>
        </section>
    }
}
