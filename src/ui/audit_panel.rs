//! The blind text-only audit on a dataset's section of the research page:
//! how often the captions alone give the positive away (docs/audit.md).
use crate::domain::audit::AuditResult;
use leptos::prelude::*;

/// The built-in baselines and stored external scorers on the furthest
/// stage the dataset reached; fetched with the funnels (see `FunnelTables`).
#[component]
pub fn AuditSection(audits: Vec<AuditResult>) -> impl IntoView {
    (!audits.iter().all(|a| a.rows.is_empty())).then(|| view! { <AuditTable audits/> })
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

#[component]
fn AuditTable(audits: Vec<AuditResult>) -> impl IntoView {
    let stage = audits.first().map(|a| a.stage.clone()).unwrap_or_default();
    let rows = audits
        .into_iter()
        .flat_map(|a| {
            let (scorer, source) = (a.scorer, a.source);
            a.rows.into_iter().filter(|r| r.subset == "all" || !r.subset.contains('/')).map(move |r| {
                view! {
                    <tr data-scorer=scorer.clone() data-subset=r.subset.clone()>
                        <th scope="row"><abbr title=source.clone()>{scorer.clone()}</abbr></th>
                        <td>{r.subset.clone()}</td>
                        <td>{r.instances}</td>
                        <td class="rate">{percent(r.rate)}</td>
                        <td>{format!("{} – {}", percent(r.low), percent(r.high))}</td>
                    </tr>
                }
            })
        })
        .collect_view();
    view! {
        <table class="data audit" tabindex="0">
            <caption>"Blind text-only audit (stage " {stage} "): how often the captions alone pick the positive; near 50% is no blind bias"</caption>
            <thead>
                <tr><th scope="col">"Scorer"</th><th scope="col">"Subset"</th><th scope="col">"Instances"</th><th scope="col">"Picks positive"</th><th scope="col">"95% CI (Wilson)"</th></tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
