//! Researcher page: models against humans and chance on a dataset,
//! overall, per type and per subtype, best value per column marked.
use super::compare_detail::{FailureDrillDown, ScoreChart, SubtypeTable};
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::{CompareReport, HumanRow};
use crate::domain::export::Stage;
use crate::domain::metrics::Scores;
use crate::domain::percent::query_value;
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn datasets_with_results() -> Result<Vec<String>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::models::compare::datasets_with_results(&state.db).await.map_err(session::sfn_error)
}

#[server(prefix = "/sfn")]
pub async fn load_comparison(dataset: String, stage: Option<String>) -> Result<CompareReport, ServerFnError> {
    use crate::error::ServiceError;
    let (state, _) = session::researcher().await?;
    let stage = stage
        .map(|s| Stage::parse(&s).map_err(|e| ServiceError::Invalid(format!("stage: {e}"))))
        .transpose()
        .map_err(session::sfn_error)?;
    let only = crate::datasets::audit::stage_instances(&state.db, &dataset, stage).await.map_err(session::sfn_error)?;
    crate::models::compare::compare(&state.db, state.kinds, &dataset, &[], only).await.map_err(session::sfn_error)
}

/// The stages a comparison may be limited to, as the page offers them
/// (`compare --stage`, docs/scoring.md): none is every candidate.
const STAGES: [(Option<Stage>, &str); 3] = [
    (None, "All candidates"),
    (Some(Stage::Step3), "Step 3 survivors"),
    (Some(Stage::Final), "Final stage (the released set)"),
];

/// A score column: its name and how to read it.
type Column = (&'static str, fn(&Scores) -> f64);

const COLUMNS: [Column; 7] = [
    ("I2T", |s| s.i2t),
    ("T2I", |s| s.t2i),
    ("Group", |s| s.group),
    ("Ipos2T", |s| s.ipos2t),
    ("Ineg2T", |s| s.ineg2t),
    ("Tpos2I", |s| s.tpos2i),
    ("Tneg2I", |s| s.tneg2i),
];

#[component]
pub fn ComparePage() -> impl IntoView {
    let query = super::shared::use_query();
    let dataset = move || query("dataset");
    let stage = move || query("stage");
    let datasets = Resource::new(|| (), |_| datasets_with_results());
    let report = Resource::new(
        move || (dataset(), stage()),
        |(d, stage)| async move {
            // Without a dataset named (the navigation's link), the first one listed (audit AS:
            // the page marked it current and showed nothing).
            let d = match d {
                Some(d) => Some(d),
                None => datasets_with_results().await?.into_iter().next(),
            };
            match d {
                Some(d) => load_comparison(d, stage.clone()).await.map(|r| Some((r, stage))),
                None => Ok(None),
            }
        },
    );
    view! {
        <leptos_meta::Title text="Model comparison"/>
        <h1>"Model comparison"</h1>
        <super::NeedsScript/>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                datasets.await.ok().map(|list| view! {
                    <nav class="datasets" aria-label="Datasets">
                        {if list.is_empty() { Some(view! { <p class="hint">"No model results yet: " <code>"hardneg results import --model NAME FILE.csv"</code></p> }) } else { None }}
                        <ul>{list.iter().enumerate().map(|(i, d)| {
                            let current = dataset().map_or(i == 0, |shown| shown == *d).then_some("page");
                            view! { <li><a href=format!("/research/compare?dataset={}", query_value(d)) aria-current=current>{d.clone()}</a></li> }
                        }).collect_view()}</ul>
                    </nav>
                })
            })}
        </Suspense>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match report.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(None) => ().into_any(),
                    Ok(Some((r, stage))) => view! { <StagePicker dataset=r.dataset.clone() stage/><Comparison report=r/> }.into_any(),
                }
            })}
        </Suspense>
        {kind_panels()}
    }
}

/// The kinds' panels on the comparison page (`ui_kit::card::Ui::compare`), in the registry's order.
fn kind_panels() -> impl IntoView {
    let panels = crate::kinds::KINDS.iter().filter_map(|&k| crate::kinds::ui(k)?.compare);
    panels.map(|panel| panel()).collect_view()
}

/// Which instances every row is measured on, models and people alike.
#[component]
fn StagePicker(dataset: String, stage: Option<String>) -> impl IntoView {
    view! {
        <nav class="stages" aria-label="Instances compared">
            <ul>{STAGES.iter().map(|(s, label)| {
                let href = match s {
                    Some(s) => format!("/research/compare?dataset={}&stage={}", query_value(&dataset), s.as_str()),
                    None => format!("/research/compare?dataset={}", query_value(&dataset)),
                };
                let current = (stage.as_deref() == s.map(Stage::as_str)).then_some("page");
                view! { <li><a href=href aria-current=current>{*label}</a></li> }
            }).collect_view()}</ul>
        </nav>
    }
}

#[component]
fn Comparison(report: CompareReport) -> impl IntoView {
    let mut rows: Vec<(String, Option<Scores>)> =
        report.models.iter().map(|m| (m.name.clone(), Some(m.report.overall))).collect();
    for h in &report.humans {
        rows.push((h.title(), h.report.as_ref().map(|r| r.overall)));
    }
    let types = ["replace", "swap", "add"];
    let per_type = |name: &str, r: &crate::domain::metrics::Report| {
        let per = types.iter().map(|t| r.by_type.iter().find(|(k, _)| k.as_str() == *t).map(|(_, v)| *v)).collect();
        (name.to_string(), per)
    };
    let mut type_rows: Vec<(String, Vec<Option<Scores>>)> =
        report.models.iter().map(|m| per_type(&m.name, &m.report)).collect();
    for h in &report.humans {
        if let Some(r) = &h.report {
            type_rows.push(per_type(&h.title(), r));
        }
    }
    view! {
        <section class="compare" data-dataset=report.dataset.clone()>
            <h2>{format!("Dataset {}", report.dataset)}</h2>
            <ScoreTable rows random=report.random/>
            {report.models.iter().filter_map(|m| Some(view! {
                <p class="notice left-out" data-model=m.name.clone()>{m.left_out_note()?}</p>
            })).collect_view()}
            <ScoreChart models=report.models.iter().map(|m| (m.name.clone(), m.report.overall)).collect() human=HumanRow::headline(&report.humans).and_then(|h| h.report.as_ref()).map(|r| r.overall)/>
            <h3>"Per type (I2T / T2I / Group)"</h3>
            <table class="data by-type" tabindex="0">
                <thead><tr><th scope="col">"Model"</th>{types.iter().map(|t| view! { <th scope="col">{t.to_uppercase()}</th> }).collect_view()}</tr></thead>
                <tbody>
                    {type_rows.into_iter().map(|(name, per)| view! {
                        <tr data-model=name.clone()><th scope="row">{name.clone()}</th>
                            {per.into_iter().map(|s| view! {
                                <td>{s.map(|s| format!("{:.2} / {:.2} / {:.2}", s.i2t, s.t2i, s.group)).unwrap_or_else(|| "—".into())}</td>
                            }).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <SubtypeTable report=report.clone()/>
            <FailureDrillDown dataset=report.dataset.clone() models=report.models.iter().map(|m| (m.name.clone(), m.left_out)).collect()/>
        </section>
    }
}

/// `rows` are measured (models, people); `random` is chance, last, whose
/// figures stand though it counts no instance.
#[component]
fn ScoreTable(rows: Vec<(String, Option<Scores>)>, random: Scores) -> impl IntoView {
    let rows: Vec<(String, Option<Scores>, bool)> = rows
        .into_iter()
        .map(|(name, s)| (name, s, false))
        .chain([("Random".to_string(), Some(random), true)])
        .collect();
    let best: Vec<f64> = COLUMNS
        .iter()
        .map(|(_, f)| {
            // A row on no instance shows "—", never the best.
            let shown = rows.iter().filter(|(_, s, chance)| *chance || s.is_some_and(|s| !s.is_empty()));
            shown.flat_map(|(_, s, _)| s.as_ref().map(f)).fold(f64::MIN, f64::max)
        })
        .collect();
    view! {
        <table class="data scores" tabindex="0">
            <caption>"Overall (%); best per column in bold"</caption>
            <thead><tr><th scope="col">"Model"</th><th scope="col">"n"</th>{COLUMNS.iter().map(|(c, _)| view! { <th scope="col">{*c}</th> }).collect_view()}</tr></thead>
            <tbody>
                {rows.into_iter().map(|(name, s, chance)| {
                    let label = name.clone();
                    // A baseline study nobody has completed an instance of yet.
                    let Some(s) = s else {
                        return view! { <tr data-model=name><th scope="row">{label}</th><td>"0"</td><td colspan=COLUMNS.len()>"no complete answers yet"</td></tr> }.into_any();
                    };
                    let n = if s.n == 0 { "—".to_string() } else { s.n.to_string() };
                    let cells = COLUMNS.iter().zip(&best).map(|((c, f), b)| {
                        let v = f(&s);
                        let (class, text) = if s.is_empty() && !chance {
                            ("", "—".to_string())
                        } else {
                            (if v == *b { "best" } else { "" }, format!("{v:.2}"))
                        };
                        view! { <td class=class data-col=*c>{text}</td> }
                    }).collect_view();
                    view! { <tr data-model=name><th scope="row">{label}</th><td>{n}</td>{cells}</tr> }.into_any()
                }).collect_view()}
            </tbody>
        </table>
    }
}
