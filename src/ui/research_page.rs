//! Researcher page: every study with progress per annotator and the answer
//! distribution.
use super::adaptive_panel::AdaptivePanel;
use super::curation::{study_pipeline, FunnelTables, StudyPipeline};
use super::live_panel::LiveCrowdPanel;
#[cfg(feature = "ssr")]
use super::session;
use super::{count_of, error_text};
use crate::api_types::{AgreementSummary, StudyOverview, StudyProgress, StudyStatus};
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn research_overview() -> Result<Vec<StudyOverview>, ServerFnError> {
    let (state, user) = session::researcher().await?;
    let mut list = crate::studies::overview::research_overview(&state, &user).await.map_err(session::sfn_error)?;
    list.iter_mut().for_each(|o| crate::studies::progress::for_page(&mut o.progress));
    Ok(list)
}

#[component]
pub fn ResearchPage() -> impl IntoView {
    view! {
        <leptos_meta::Title text="Studies"/>
        <h1>"Studies"</h1>
        <super::NeedsScript/>
        <super::health_banner::WritesFailing/>
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
    // Only kinds with a None answer (Step 3) have a None share.
    let has_none = study.kind.discarding_value().is_some();
    let (id, kind, items, name) = (study.study_id, study.kind, study.items, study.name.clone());
    // A link study's live section keeps these in step with its dashboard.
    let progress = RwSignal::new(study);
    let answers = Memo::new(move |_| progress.with(|p| p.answers));
    let annotators = Memo::new(move |_| progress.with(|p| p.annotators.clone()));
    let not_shown = Memo::new(move |_| progress.with(|p| p.annotators_not_shown));
    let distribution = Memo::new(move |_| progress.with(|p| (p.distribution.clone(), p.none_share)));
    let counted = "answers on real items that count: no check items, no uncounted copies (places adaptive overlap \
        ended as carrying no information included: its panel says how many)";
    // In the browser, each new count of answers (the live poll's, a
    // discard's) reads the pipeline line again: what it says settles the
    // study, so it must not describe the moment the page loaded.
    let status = RwSignal::new(status);
    Effect::watch(
        move || answers.get(),
        move |_, _, _| {
            leptos::task::spawn_local(async move {
                if let Ok(now) = study_pipeline(id).await {
                    if status.with_untracked(|s| *s != now) {
                        let _ = status.try_set(now);
                    }
                }
            })
        },
        false,
    );
    view! {
        <section class="study" data-study=id.to_string()>
            <h2>{name}</h2>
            <p>{kind.name()} " · " {count_of(items, "item", "items")} " · "
                <span class="answers" title=counted>{move || answers.get()}</span>
                {move || if answers.get() == 1 { " counted answer" } else { " counted answers" }}</p>
            {move || view! { <StudyPipeline status=status.get()/> }}
            <LiveCrowdPanel study_id=id progress/>
            <AdaptivePanel study_id=id answers/>
            {move || view! {
                <table class="data annotators" tabindex="0">
                    <caption title="tasks done of those planned, check items included; the counted answers above leave them out">"Progress per annotator (tasks, check items included)"</caption>
                    <thead><tr><th scope="col">"Annotator"</th><th scope="col">"Done"</th><th scope="col">"Total"</th></tr></thead>
                    <tbody>
                        {annotators.get().into_iter().map(|a| { let name = a.username.clone(); view! {
                            <tr data-annotator=name>
                                <th scope="row">{a.username}</th>
                                <td class="done">{a.done}</td>
                                <td class="total">{a.total}</td>
                            </tr>
                        }}).collect_view()}
                    </tbody>
                </table>
            }}
            {move || not_shown.get().map(|n| view! {
                <p class="more-annotators">"… and " {count_of(n as i64, "more", "more")} ": "
                    <a href=format!("/api/v1/studies/{id}/progress")>"every row (JSON)"</a></p>
            })}
            {move || {
                let (counts, none_share) = distribution.get();
                let none_share = none_share.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_else(|| "—".into());
                view! {
                    // Wide for kinds with many options: it scrolls inside the card.
                    <table class="data distribution" tabindex="0">
                        <caption>"Answers per shown option"</caption>
                        <thead><tr>
                            {counts.iter().map(|c| view! { <th scope="col">{c.option.clone()}</th> }).collect_view()}
                            {has_none.then(|| view! { <th scope="col">"None share"</th> })}
                        </tr></thead>
                        <tbody><tr>
                            {counts.iter().map(|c| view! { <td data-option=c.option.clone()>{c.count}</td> }).collect_view()}
                            {has_none.then(|| view! { <td class="none-share">{none_share}</td> })}
                        </tr></tbody>
                    </table>
                }
            }}
            <table class="data agreement" tabindex="0">
                <caption>"Agreement (" <a class="agreement-json" download=format!("agreement-study-{}.json", id)
                    href=format!("/api/v1/studies/{}/agreement", id)>"full report, JSON download"</a> ")"</caption>
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
                            <td class="fleiss" title=a.fleiss_reason.clone().unwrap_or_default()>{fmt(a.fleiss_kappa)}</td>
                            <td class="alpha" title=a.alpha_reason.clone().unwrap_or_default()>{fmt(a.krippendorff_alpha)}</td>
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
