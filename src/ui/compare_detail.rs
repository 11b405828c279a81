//! Comparison details: an SVG chart of I2T vs T2I per model with the human
//! level marked, the per-subtype table, and the drill-down into the
//! instances a model fails.
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::{CompareReport, Failure};
use crate::domain::metrics::Scores;
use crate::domain::percent::query_value;
use leptos::prelude::*;
use leptos_router::components::A;

#[server(prefix = "/sfn")]
pub async fn model_failures(
    dataset: String,
    model: String,
    score: String,
    neg_type: Option<String>,
) -> Result<Vec<Failure>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::models::failures::failures(&state.db, state.kinds, &dataset, &model, &score, neg_type.as_deref())
        .await
        .map_err(session::sfn_error)
}

const CHART_W: f64 = 640.0;
const CHART_H: f64 = 240.0;
const LEFT: f64 = 40.0;

/// Grouped bars (I2T, T2I) per model, 0–100 %, dashed lines at the human level.
#[component]
pub fn ScoreChart(models: Vec<(String, Scores)>, human: Option<Scores>) -> impl IntoView {
    let plot_w = CHART_W - LEFT - 10.0;
    let slot = plot_w / models.len().max(1) as f64;
    let bar = (slot / 3.0).min(40.0);
    let y = |v: f64| 10.0 + (CHART_H - 40.0) * (1.0 - v / 100.0);
    let base = y(0.0);
    let bars = models.iter().enumerate().map(|(k, (name, s))| {
        let x0 = LEFT + k as f64 * slot + (slot - 2.0 * bar) / 2.0;
        view! {
            <g class="model" data-model=name.clone()>
                <rect class="i2t" x=x0 y=y(s.i2t) width=bar height=base - y(s.i2t)><title>{format!("{name} I2T {:.2}", s.i2t)}</title></rect>
                <rect class="t2i" x=x0 + bar y=y(s.t2i) width=bar height=base - y(s.t2i)><title>{format!("{name} T2I {:.2}", s.t2i)}</title></rect>
                <text x=x0 + bar y=base + 16.0 text-anchor="middle">{name.clone()}</text>
            </g>
        }
    }).collect_view();
    let human_lines = human.map(|h| view! {
        <line class="human i2t" x1=LEFT x2=CHART_W - 10.0 y1=y(h.i2t) y2=y(h.i2t)><title>{format!("Human I2T {:.2}", h.i2t)}</title></line>
        <line class="human t2i" x1=LEFT x2=CHART_W - 10.0 y1=y(h.t2i) y2=y(h.t2i)><title>{format!("Human T2I {:.2}", h.t2i)}</title></line>
    });
    let ticks = [0.0, 25.0, 50.0, 75.0, 100.0].map(|v| {
        view! {
            <line class="grid" x1=LEFT x2=CHART_W - 10.0 y1=y(v) y2=y(v)/>
            <text x=LEFT - 6.0 y=y(v) + 4.0 text-anchor="end">{format!("{v:.0}")}</text>
        }
    });
    view! {
        <figure class="chart">
            <svg viewBox=format!("0 0 {CHART_W} {CHART_H}") role="img" aria-label="I2T and T2I per model, human level dashed">
                {ticks.into_iter().collect_view()}
                {bars}
                {human_lines}
            </svg>
            <figcaption>
                <span class="key i2t">"I2T"</span> " " <span class="key t2i">"T2I"</span>
                {human.map(|_| " · dashed lines: human I2T and T2I")}
            </figcaption>
        </figure>
    }
}

#[component]
pub fn SubtypeTable(report: CompareReport) -> impl IntoView {
    let mut rows: Vec<(String, crate::domain::metrics::Report)> =
        report.models.iter().map(|m| (m.name.clone(), m.report.clone())).collect();
    for h in &report.humans {
        if let Some(r) = &h.report {
            rows.push((h.title(), r.clone()));
        }
    }
    let cats = crate::domain::category::Category::ALL;
    view! {
        <h3>"Per subtype (I2T / T2I / Group)"</h3>
        <div class="scroll" tabindex="0" role="region" aria-label="Per subtype">
            <table class="data by-subtype" tabindex="0">
                <thead><tr><th scope="col">"Model"</th>{cats.iter().map(|c| view! { <th scope="col">{c.to_string()}</th> }).collect_view()}</tr></thead>
                <tbody>
                    {rows.into_iter().map(|(name, r)| view! {
                        <tr data-model=name.clone()><th scope="row">{name.clone()}</th>
                            {cats.iter().map(|c| {
                                let cell = r.by_subtype.get(c).map(|s| format!("{:.2} / {:.2} / {:.2} (n={})", s.i2t, s.t2i, s.group, s.n)).unwrap_or_else(|| "—".into());
                                view! { <td data-cat=c.to_string()>{cell}</td> }
                            }).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Links that choose a model, a score and a type; the list follows the URL.
/// `models`: each run's name and how many of its outcomes the comparison
/// left out (computed on a negative Step 3 has since replaced), which the
/// list leaves out too and says so.
#[component]
pub fn FailureDrillDown(dataset: String, models: Vec<(String, usize)>) -> impl IntoView {
    let get = super::shared::use_query();
    let ds = dataset.clone();
    let left_out: std::collections::HashMap<String, usize> = models.iter().cloned().collect();
    let failures = Resource::new(
        move || (get("model"), get("fail").unwrap_or_else(|| "group".into()), get("type")),
        move |(model, score, neg_type)| {
            let dataset = ds.clone();
            let left_out = model.as_ref().and_then(|m| left_out.get(m).copied()).filter(|n| *n > 0);
            async move {
                match model {
                    Some(model) => model_failures(dataset, model, score, neg_type).await.map(|l| Some((l, left_out))),
                    None => Ok(None),
                }
            }
        },
    );
    let link = move |model: &str, fail: &str, t: Option<&str>| {
        let (dataset, model, fail) = (query_value(&dataset), query_value(model), query_value(fail));
        let mut url = format!("/research/compare?dataset={dataset}&model={model}&fail={fail}");
        if let Some(t) = t {
            url.push_str(&format!("&type={}", query_value(t)));
        }
        url
    };
    let chooser = models.into_iter().map(|(m, _)| {
        let links = ["i2t", "t2i", "group"].map(|f| view! { <A href=link(&m, f, None)>{format!("{} fails", f.to_uppercase())}</A> " " });
        let types = ["replace", "swap", "add"].map(|t| view! { <A href=link(&m, "group", Some(t))>{t}</A> " " });
        view! { <li><strong>{m.clone()}</strong> ": " {links.into_iter().collect_view()} " · group fails by type: " {types.into_iter().collect_view()}</li> }
    }).collect_view();
    view! {
        <h3>"Where models fail"</h3>
        <ul class="drill">{chooser}</ul>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match failures.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(None) => ().into_any(),
                    Ok(Some((list, left_out))) => view! {
                        <p class="failure-count">{list.len()} " instances listed (at most " {crate::api_types::FAILURE_LIMIT} ")"
                            {left_out.map(|n| format!("; {n} outcome(s) left out: computed on a negative image that Step 3 has since replaced"))}
                        </p>
                        <ol class="failures">{list.into_iter().map(|f| view! { <FailureItem f/> }).collect_view()}</ol>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn FailureItem(f: Failure) -> impl IntoView {
    let mark = |ok: bool| if ok { "✓" } else { "✗" };
    view! {
        <li class="failure" data-instance=f.instance_id.to_string()>
            <div class="pair">
                {f.positive_image_url.map(|src| view! { <img src=src alt="Real image" loading="lazy"/> })}
                {f.negative_image_url.map(|src| view! { <img src=src alt="Generated negative image" loading="lazy"/> })}
            </div>
            <p><span class="cat">{f.category}</span> " C0: " {f.caption}</p>
            <p>" C1: " {f.negative_caption}</p>
            <p class="flags">
                "Ipos2T " {mark(f.ipos2t)} " · Ineg2T " {mark(f.ineg2t)} " · Tpos2I " {mark(f.tpos2i)} " · Tneg2I " {mark(f.tneg2i)}
            </p>
        </li>
    }
}
