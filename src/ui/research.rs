//! Researcher page: every study with progress per annotator and the answer
//! distribution.
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::StudyProgress;
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn research_overview() -> Result<Vec<StudyProgress>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM studies ORDER BY id").fetch_all(&state.db).await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(crate::server::progress::study_progress(&state, id).await.map_err(session::sfn_error)?);
    }
    Ok(out)
}

#[component]
pub fn ResearchPage() -> impl IntoView {
    view! {
        <h1>"Studies"</h1>
        <p><a href="/research/compare">"Model comparison"</a></p>
        <StudiesOverview/>
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
                    Ok(list) => list.into_iter().map(|s| view! { <StudyCard study=s/> }).collect_view().into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn StudyCard(study: StudyProgress) -> impl IntoView {
    let none_share = study.none_share.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_else(|| "—".into());
    view! {
        <section class="study" data-study=study.study_id>
            <h2>{study.name.clone()}</h2>
            <p>{study.kind.clone()} " · " {study.items} " items · " <span class="answers">{study.answers}</span> " answers"</p>
            <table class="annotators">
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
            <table class="distribution">
                <caption>"Answers per shown option"</caption>
                <thead><tr>
                    {study.distribution.iter().map(|c| view! { <th scope="col">{c.option.clone()}</th> }).collect_view()}
                    <th scope="col">"None share"</th>
                </tr></thead>
                <tbody><tr>
                    {study.distribution.iter().map(|c| view! { <td data-option=c.option.clone()>{c.count}</td> }).collect_view()}
                    <td class="none-share">{none_share}</td>
                </tr></tbody>
            </table>
        </section>
    }
}
