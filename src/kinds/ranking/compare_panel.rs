//! The ranking studies on the comparison page, beside the BiVLC tables: per
//! study, the annotators' agreement (Kendall's W) and each imported model's
//! Spearman's ρ and Kendall's τ with the people's order.
use super::stats::RankingStats;
#[cfg(feature = "ssr")]
use crate::ui_kit::caller;
use crate::ui_kit::error_text;
use leptos::prelude::*;

/// Every ranking study's name and statistics.
#[server(prefix = "/sfn")]
pub async fn ranking_reports() -> Result<Vec<(String, RankingStats)>, ServerFnError> {
    use crate::studies::report::study_report;
    let (state, _) = caller::researcher().await?;
    let kind = super::KIND.name;
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM studies WHERE kind = $1 ORDER BY id")
        .bind(kind)
        .fetch_all(&state.db)
        .await
        .map_err(|e| caller::sfn_error(e.into()))?;
    let mut out = Vec::new();
    for id in ids {
        let r = study_report(&state.db, &crate::kinds::REGISTRY, id.into()).await.map_err(caller::sfn_error)?;
        if let Some(stats) = r.stats.as_any().downcast_ref::<RankingStats>() {
            out.push((r.head.study, stats.clone()));
        }
    }
    Ok(out)
}

fn show(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |v| format!("{v:.3}"))
}

/// The panel: nothing while no ranking study exists.
pub fn panel() -> AnyView {
    view! { <RankingTables/> }.into_any()
}

#[component]
fn RankingTables() -> impl IntoView {
    let reports = Resource::new(|| (), |_| ranking_reports());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match reports.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => ().into_any(),
                    Ok(list) => view! {
                        <h2>"Ranking generated images"</h2>
                        {list.into_iter().map(|(study, s)| view! {
                            <table class="data ranking-models" data-study=study.clone() tabindex="0">
                                <caption>{format!("{study}: {} prompts, {} rankings; Kendall's W {} (over {} prompts)", s.prompts, s.rankings, show(s.kendalls_w), s.w_prompts)}</caption>
                                <thead><tr><th scope="col">"Model"</th><th scope="col">"Spearman's ρ"</th><th scope="col">"Kendall's τ"</th><th scope="col">"Prompts"</th></tr></thead>
                                <tbody>
                                    {s.models.into_iter().map(|m| view! {
                                        <tr data-model=m.model.clone()><th scope="row">{m.model.clone()}</th><td>{show(m.spearman)}</td><td>{show(m.kendall_tau)}</td><td>{m.prompts}</td></tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }).collect_view()}
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}
