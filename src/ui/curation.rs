//! Researcher curation views: the funnel per dataset, the adjudication
//! queue of a study and the "Start Step 4" action.
use super::error_text;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::{Dispute, Settled, StudyStatus};
use crate::domain::audit::AuditResult;
use crate::domain::funnel::{Funnel, StageCounts};
use crate::domain::ids::{InstanceId, StudyId};
use crate::ui_kit::count_of;
use leptos::prelude::*;
use leptos_router::components::A;

/// Each dataset's funnel with its blind audits, in one call: a resource made
/// per dataset after the funnels arrive would take its serialisation id in
/// whatever order the page's two lists resolved on the server, and the
/// browser, hydrating in page order, would then read another resource's
/// data and fail to hydrate the page.
#[server(prefix = "/sfn")]
pub async fn dataset_funnels() -> Result<Vec<(Funnel, Vec<AuditResult>)>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    let funnels = crate::studies::pipeline::all_funnels(&state.db, state.kinds).await.map_err(session::sfn_error)?;
    let mut out = Vec::with_capacity(funnels.len());
    for f in funnels {
        let audits =
            crate::datasets::audit::stage_audits(&state.db, &f.dataset, None).await.map_err(session::sfn_error)?;
        out.push((f, audits));
    }
    Ok(out)
}

#[server(prefix = "/sfn")]
pub async fn study_disputes(study_id: StudyId) -> Result<Vec<Dispute>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    // Rendered into the page, a study that is not there makes the page a 404.
    crate::studies::adjudication::disputes(&state.db, state.kinds, study_id).await.map_err(session::subject_error)
}

/// A study's pipeline line as it stands now (the research card reads it
/// again whenever the live poll brings new counted answers).
#[server(prefix = "/sfn")]
pub async fn study_pipeline(study_id: StudyId) -> Result<StudyStatus, ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::studies::outcomes::study_status(&state.db, state.kinds, study_id).await.map_err(session::sfn_error)
}

/// Stops the final crowd model doubts: settled, decided here only by choice.
#[server(prefix = "/sfn")]
pub async fn study_doubtful(study_id: StudyId) -> Result<Vec<Dispute>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::studies::adjudication::doubtful(&state.db, state.kinds, study_id).await.map_err(session::sfn_error)
}

#[server(prefix = "/sfn")]
pub async fn settle(
    study_id: StudyId,
    instance_id: InstanceId,
    value: String,
    #[server(default)] text: Option<String>,
) -> Result<Vec<crate::api_types::MovedLabel>, ServerFnError> {
    let (state, user) = session::researcher().await?;
    crate::studies::adjudication::adjudicate(
        &state.db,
        state.kinds,
        &user,
        study_id,
        instance_id,
        &value,
        text.as_deref(),
    )
    .await
    .map_err(session::sfn_error)
}

#[server(prefix = "/sfn")]
pub async fn study_settled(study_id: StudyId) -> Result<Vec<Settled>, ServerFnError> {
    let (state, _) = session::researcher().await?;
    crate::studies::adjudication::settled(&state.db, state.kinds, study_id).await.map_err(session::sfn_error)
}

/// Undo: the decision is withdrawn (the history keeps it) and the item waits again.
#[server(prefix = "/sfn")]
pub async fn reopen_decision(
    study_id: StudyId,
    instance_id: InstanceId,
) -> Result<Vec<crate::api_types::MovedLabel>, ServerFnError> {
    let (state, user) = session::researcher().await?;
    crate::studies::adjudication::reopen(&state.db, state.kinds, &user, study_id, instance_id)
        .await
        .map_err(session::sfn_error)
}

/// Creates Step 4 over the survivors of a finished Step 3 study.
#[server(prefix = "/sfn")]
pub async fn start_step4(step3: StudyId) -> Result<i64, ServerFnError> {
    let (state, _) = session::researcher().await?;
    let (id, _) = crate::studies::create::create_step4(&state.db, &crate::kinds::REGISTRY, step3)
        .await
        .map_err(session::sfn_error)?;
    Ok(id.get())
}

/// One line under a study on the research page: items final / waiting /
/// disputed, with the links that move the pipeline on.
#[component]
pub fn StudyPipeline(status: StudyStatus) -> impl IntoView {
    // The human baseline measures people; it curates nothing.
    status.kind.curation().is_some().then(|| view! { <PipelineLine status/> })
}

#[component]
fn PipelineLine(status: StudyStatus) -> impl IntoView {
    let id = status.study_id;
    let start = ServerAction::<StartStep4>::new();
    let next = status.kind.next_step();
    let can_start = next.is_some() && status.waiting == 0 && status.disputed == 0 && status.step4.is_none();
    let next_label = next.map_or("next step", |k| k.label());
    view! {
        <p class="pipeline" data-final=status.final_items data-waiting=status.waiting data-disputed=status.disputed>
            // Final: every answer the plan asks for is in and settles the item.
            {count_of(status.final_items as i64, "item settled", "items settled")} " · " {status.waiting} " waiting for more answers · "
            {if status.disputed > 0 {
                view! { <A href=format!("/research/studies/{id}/adjudicate") attr:class="adjudicate">{status.disputed} " to adjudicate"</A> }.into_any()
            } else {
                view! { <span>"0 disputed"</span> }.into_any()
            }}
            {status.step4.map(|s| view! { " · " {next_label} ": " {s} })}
            // Gone once the step is made: a second click could only be refused.
            {move || (can_start && !matches!(start.value().get(), Some(Ok(_)))).then(|| view! {
                " · "
                <button type="button" class="start-step4" disabled=move || start.pending().get()
                    on:click=move |_| { start.dispatch(StartStep4 { step3: id }); }>"Start " {next_label}</button>
            })}
            {move || match start.value().get() {
                Some(Ok(new_id)) => view! { <span class="started" role="status">" " {next_label} " created (study " {new_id} "): "
                    <a href="/research" rel="external">"reload to see its card"</a></span> }.into_any(),
                Some(Err(e)) => view! { <span class="error" role="alert">" " {error_text(&e)}</span> }.into_any(),
                None => ().into_any(),
            }}
        </p>
    }
}

#[component]
pub fn FunnelTables() -> impl IntoView {
    let funnels = Resource::new(|| (), |_| dataset_funnels());
    view! {
        <h2>"Datasets"</h2>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match funnels.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) => list.into_iter().map(|(f, audits)| view! { <FunnelTable funnel=f audits/> }).collect_view().into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn FunnelTable(funnel: Funnel, audits: Vec<AuditResult>) -> impl IntoView {
    let row = |name: String, c: StageCounts, class: &'static str| {
        view! {
            <tr class=class data-row=name.clone()>
                <th scope="row">{name.clone()}</th>
                <td class="candidates">{c.candidates}</td>
                <td class="s3-kept">{c.step3_kept}</td><td class="s3-discarded">{c.step3_discarded}</td><td class="s3-open">{c.step3_open}</td>
                <td class="s4-kept">{c.step4_kept}</td><td class="s4-ambiguous">{c.step4_ambiguous}</td><td class="s4-both">{c.step4_both}</td><td class="s4-open">{c.step4_open}</td>
                <td>{c.removed_percent().map(|p| format!("{p:.0}%")).unwrap_or_default()}</td>
            </tr>
        }
    };
    // The final export is the Step 4 survivors: none before Step 4 has settled them.
    let final_ready = funnel.step4_study.is_some() && funnel.overall.step4_open == 0;
    let studies = format!(
        "Step 3: {} · Step 4: {}",
        funnel.step3_study.clone().unwrap_or_else(|| "none yet".into()),
        funnel.step4_study.clone().unwrap_or_else(|| "none yet".into())
    );
    view! {
        <section class="dataset" data-dataset=funnel.dataset.clone()>
            <h3>{funnel.dataset.clone()}</h3>
            <p>{studies}</p>
            {if final_ready {
                view! {
                    <p class="downloads">"Download the curated (final) instances: "
                        {["csv", "jsonl", "parquet"].map(|f| view! {
                            <a class="download" data-format=f download
                                href=format!("/api/v1/datasets/{}/export?format={f}&stage=final", funnel.dataset)>{f.to_uppercase()}</a>" "
                        }).into_iter().collect_view()}
                        " (a tar with the rows, images/ and a README.md dataset card)"
                    </p>
                }.into_any()
            } else {
                view! { <p class="downloads pending">"The curated export appears here once a Step 4 study has settled every item."</p> }.into_any()
            }}
            <table class="data funnel" tabindex="0">
                <caption>"Funnel: candidates → Step 3 → Step 4"</caption>
                <thead>
                    <tr><td></td><td></td><th colspan="3" scope="colgroup">"Step 3"</th><th colspan="4" scope="colgroup">"Step 4"</th><td></td></tr>
                    <tr>
                        <th scope="col">"Category"</th><th scope="col">"Candidates"</th>
                        <th scope="col">"Kept"</th><th scope="col">"Discarded (None)"</th><th scope="col">"Open"</th>
                        <th scope="col">"Kept"</th><th scope="col">"Ambiguous"</th><th scope="col">"Both"</th><th scope="col">"Open"</th>
                        <th scope="col" title="Discarded by Step 3, or ambiguous or both in Step 4; open items are not counted">"Removed so far"</th>
                    </tr>
                </thead>
                <tbody>
                    {row("all".into(), funnel.overall, "overall")}
                    {funnel.by_type.into_iter().map(|(k, c)| row(k, c, "type")).collect_view()}
                    {funnel.by_subtype.into_iter().map(|(k, c)| row(k, c, "subtype")).collect_view()}
                </tbody>
            </table>
            <super::audit_panel::AuditSection audits/>
        </section>
    }
}

/// A list below the disputes: empty for an address that names no study,
/// which the disputes' list says once.
async fn listed<T, F>(id: Result<StudyId, String>, load: impl FnOnce(StudyId) -> F) -> Result<Vec<T>, ServerFnError>
where
    F: std::future::Future<Output = Result<Vec<T>, ServerFnError>>,
{
    match id {
        Ok(id) => load(id).await,
        Err(_) => Ok(Vec::new()),
    }
}

#[component]
pub fn AdjudicatePage() -> impl IntoView {
    let study_id = super::shared::study_in_path();
    let settle = ServerAction::<Settle>::new();
    let reopen = ServerAction::<ReopenDecision>::new();
    // Refetched after each decision or reopening: the item moves between the lists.
    let changed = move || settle.version().get() + reopen.version().get();
    // What the latest of them moved elsewhere (a crowd model's refit).
    let moved = RwSignal::new(Vec::new());
    Effect::new(move |_| {
        if let Some(Ok(m)) = settle.value().get() {
            moved.set(m);
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(m)) = reopen.value().get() {
            moved.set(m);
        }
    });
    // An address that names no study says so once, in the first list.
    let disputes = Resource::new(
        move || (study_id(), changed()),
        |(id, _)| async move {
            match id {
                Ok(id) => study_disputes(id).await,
                Err(raw) => super::shared::no_such_study(raw).await,
            }
        },
    );
    let decided = Resource::new(move || (study_id(), changed()), |(id, _)| listed(id, study_settled));
    let doubtful = Resource::new(move || (study_id(), changed()), |(id, _)| listed(id, study_doubtful));
    view! {
        <leptos_meta::Title text="Adjudication"/>
        <h1>"Adjudication"</h1>
        <super::NeedsScript/>
        <p><A href="/research">"Back to studies"</A></p>
        {move || settle.value().get().and_then(|r| r.err()).map(|e| view! { <p class="error" role="alert">{error_text(&e)}</p> })}
        {move || Some(moved.get()).filter(|m| !m.is_empty()).map(|moved| view! { <super::adjudication_notice::MovedNotice moved/> })}
        {move || reopen.value().get().and_then(|r| r.err()).map(|e| view! { <p class="error" role="alert">{error_text(&e)}</p> })}
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match disputes.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => view! { <p class="empty">"Nothing to adjudicate."</p> }.into_any(),
                    Ok(list) => view! {
                        <p>{count_of(list.len() as i64, "item waits", "items wait")} " for a decision. Pick the answer that stands."</p>
                        {list.into_iter().map(|d| view! { <DisputeCard dispute=d settle/> }).collect_view()}
                    }.into_any(),
                }
            })}
        </Suspense>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match doubtful.await {
                    // The first list has said it already when it failed too.
                    Err(_) if disputes.await.is_err() => ().into_any(),
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => ().into_any(),
                    Ok(list) => view! {
                        <h2 id="doubtful">"Stops the crowd model doubts"</h2>
                        <p>"Adaptive overlap stopped these items on the value their answers agreed on, and that value stands. "
                            "The final crowd model, fitted on every answer, is nearly certain they are something else. "
                            "Decide any of them if you wish; the rest stay as they are."</p>
                        {list.into_iter().map(|d| view! { <DisputeCard dispute=d settle/> }).collect_view()}
                    }.into_any(),
                }
            })}
        </Suspense>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match decided.await {
                    // The first list has said it already when it failed too.
                    Err(_) if disputes.await.is_err() => ().into_any(),
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) if list.is_empty() => ().into_any(),
                    Ok(list) => view! {
                        <h2>"Settled"</h2>
                        {match list[0].built_into.clone() {
                            Some(name) => view! { <p class="final">"These decisions are final: study " {name} " was built from them."</p> }.into_any(),
                            None => view! { <p>"Reopen an item to take its decision back; it waits for a decision again, and its history keeps both."</p> }.into_any(),
                        }}
                        {list.into_iter().map(|s| view! { <SettledCard settled=s reopen/> }).collect_view()}
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn SettledCard(settled: Settled, reopen: ServerAction<ReopenDecision>) -> impl IntoView {
    let (study_id, instance_id) = (settled.study_id, settled.instance_id);
    view! {
        <section class="settled" data-instance=instance_id.to_string() data-value=settled.value.clone()>
            <blockquote class="prompt">{settled.prompt}</blockquote>
            <p>"Settled as " <strong>{settled.label}</strong> " "
                {settled.built_into.is_none().then(|| view! {
                    <button type="button" class="reopen" disabled=move || reopen.pending().get()
                        on:click=move |_| { reopen.dispatch(ReopenDecision { study_id, instance_id }); }>"Reopen"</button>
                })}
            </p>
            <ol class="history" aria-label="History of this item">
                {settled.history.into_iter().map(|e| view! {
                    <li data-action=e.action.clone()>{format!("{} {} by {}", e.action, e.label, e.by)}</li>
                }).collect_view()}
            </ol>
        </section>
    }
}

#[component]
fn DisputeCard(dispute: Dispute, settle: ServerAction<Settle>) -> impl IntoView {
    let (study_id, instance_id) = (dispute.study_id, dispute.instance_id);
    // A click only picks; the decision is stored once confirmed.
    let picked = RwSignal::new(None::<(String, String)>);
    // The final text, for kinds whose answers carry one (a correction to pick, or written anew).
    let text = RwSignal::new(String::new());
    let texts = dispute.texts.clone();
    let text_label = dispute.text_label.clone();
    view! {
        <section class="dispute" data-instance=instance_id.to_string()>
            <blockquote class="prompt">{dispute.prompt}</blockquote>
            <div class="options">
                {dispute.choices.into_iter().map(|c| {
                    let (value, label) = (c.value.clone(), c.label.clone());
                    let this = c.value.clone();
                    let class = if c.image_url.is_some() { "option image" } else { "option plain" };
                    let chosen = if c.chosen_by.is_empty() { String::new() } else { format!("chosen by {}", c.chosen_by.join(", ")) };
                    view! {
                        <button type="button" class=class data-value=c.value.clone()
                            aria-pressed=move || picked.with(|p| p.as_ref().is_some_and(|(v, _)| *v == this)).to_string()
                            on:click=move |_| picked.set(Some((value.clone(), label.clone())))>
                            {c.image_url.map(|src| view! { <img src=src alt=format!("Answer {}", c.label)/> })}
                            <span class="label">{c.label.clone()}</span>
                            <span class="chosen-by">{chosen}</span>
                        </button>
                    }
                }).collect_view()}
            </div>
            {text_label.map(|label| view! {
                <div class="dispute-text">
                    {texts.into_iter().map(|t| {
                        let chosen = t.text.clone();
                        view! {
                            <button type="button" class="option plain use-text" on:click=move |_| text.set(chosen.clone())>
                                {format!("{}'s ({}): ", t.annotator, t.value)} <q>{t.text.clone()}</q>
                            </button>
                        }
                    }).collect_view()}
                    <label>{label} " (final) "
                        <input type="text" name="text" class="final-text" maxlength="300"
                            prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))/>
                    </label>
                </div>
            })}
            {move || picked.get().map(|(value, label)| view! {
                <p class="confirm" role="status">
                    "Settle this item as " <strong>{label}</strong> "? "
                    <button type="button" class="primary confirm-settle" disabled=move || settle.pending().get()
                        on:click=move |_| { settle.dispatch(Settle { study_id, instance_id, value: value.clone(), text: Some(text.get_untracked()) }); }>"Confirm"</button>
                    " "
                    <button type="button" class="link" on:click=move |_| picked.set(None)>"Cancel"</button>
                </p>
            })}
        </section>
    }
}
