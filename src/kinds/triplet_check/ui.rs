//! The triplet check's task: the image, P1, P2 and N, a verdict, an error
//! tag and a text box for the corrected P2, all in one plain form. Before the
//! wasm has loaded (or without JavaScript) it posts to the shared answer
//! route (`{page}/answer`, `http::survey_form`: verdict as `option`, `tag`,
//! `text`); hydrated, keys fill it in: v / n the verdict,
//! 1–5 the tag (0 none), e edits P2 (Esc leaves the box), Enter submits.
use super::{compose, read_prompt, TAGS, TAG_LABELS};
use crate::api_types::TaskView;
use crate::ui_kit::card::{Card, Ui};
use crate::ui_kit::card_head::{CardHead, Prefetch};
use crate::ui_kit::Counter;
use leptos::prelude::*;

pub const UI: Ui = Ui {
    card,
    compare: None,
    #[cfg(feature = "ssr")]
    forms: None,
};

fn card(c: Card) -> AnyView {
    let submit = c.submit;
    let send = move |value: String, correction: Option<String>| submit.run((value, correction));
    view! { <TripletCard task=c.task pending=c.pending submit=send counter=c.counter form_action=format!("{}/answer", c.page)/> }
        .into_any()
}

#[component]
fn TripletCard(
    task: TaskView,
    pending: Memo<bool>,
    /// Sends (value, correction).
    submit: impl Fn(String, Option<String>) + Copy + Send + Sync + 'static,
    counter: Counter,
    /// Where the form posts without JavaScript.
    form_action: String,
) -> impl IntoView {
    let progress = task.progress;
    let (p1, p2, n) = read_prompt(&task.prompt.text)
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .unwrap_or_else(|| (task.prompt.text.clone(), String::new(), String::new()));
    let original = StoredValue::new(p2.clone());
    let verdict = RwSignal::new(None::<bool>);
    let tag = RwSignal::new(None::<usize>);
    let text = RwSignal::new(String::new());
    let hint = RwSignal::new(None::<&'static str>);
    // Whether the text box has the focus: then keys type, they choose nothing.
    let in_box = RwSignal::new(false);
    let input = NodeRef::<leptos::html::Input>::new();
    let card = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if let Some(el) = card.get() {
            let _ = el.focus();
        }
    });
    let send = move || {
        let Some(valid) = verdict.get_untracked() else {
            hint.set(Some("Choose Valid (v) or Not valid (n) first."));
            return;
        };
        hint.set(None);
        // An unchanged P2 is no correction.
        let typed = text.get_untracked();
        let correction = Some(typed.trim().to_string()).filter(|t| !t.is_empty() && *t != original.get_value());
        submit(compose(valid, tag.get_untracked().map(|i| TAGS[i])), correction);
    };
    let edit = move || {
        if text.get_untracked().is_empty() {
            text.set(original.get_value());
        }
        if let Some(el) = input.get_untracked() {
            let _ = el.focus();
        }
    };
    let handle = triplet_keys(in_box, card, verdict, tag, edit, send);
    on_cleanup(move || handle.remove());

    view! {
        <section class="survey triplet-check" tabindex="-1" node_ref=card aria-busy=move || pending.get().to_string() data-task=task.task_id.to_string()>
            <CardHead progress counter instructions=task.instructions.clone()/>
            {task.prompt.image_url.clone().map(|src| view! { <img class="prompt-image" src=src alt="The image the triplet describes"/> })}
            <dl class="triplet">
                <dt>"P1"</dt><dd class="p1">{p1}</dd>
                <dt>"P2"</dt><dd class="p2">{p2}</dd>
                <dt>"N"</dt><dd class="negative">{n}</dd>
            </dl>
            <form class="triplet-form" method="post" action=form_action
                on:submit=move |ev| { ev.prevent_default(); send(); }>
                <input type="hidden" name="task_id" value=task.task_id.to_string()/>
                {verdict_and_tags(verdict, tag)}
                <label class="correction">
                    <span>"Corrected P2 (only when P2 is wrong; needs a tag) " <kbd>"e"</kbd></span>
                    <input type="text" name="text" maxlength="300" autocomplete="off" node_ref=input aria-keyshortcuts=move || crate::ui_kit::hydrated().then_some("e")
                        on:focus=move |_| in_box.set(true) on:blur=move |_| in_box.set(false)
                        prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))/>
                </label>
                <button type="submit" class="primary submit-check" disabled=move || pending.get()>"Submit " <kbd>"Enter"</kbd></button>
            </form>
            <p class="hint" role="status">{move || hint.get()}</p>
            <Prefetch urls=task.prefetch/>
        </section>
    }
}

/// The card's keys: v/n the verdict, 0-9 the tag, e the correction box (Esc
/// leaves it), Enter sends.
fn triplet_keys(
    in_box: RwSignal<bool>,
    card: NodeRef<leptos::html::Section>,
    verdict: RwSignal<Option<bool>>,
    tag: RwSignal<Option<usize>>,
    edit: impl Fn() + 'static,
    send: impl Fn() + 'static,
) -> WindowListenerHandle {
    window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.repeat() {
            return;
        }
        let key = ev.key();
        if in_box.get_untracked() {
            // Typing goes to the box; Enter submits the form by itself, Esc leaves.
            if key == "Escape" {
                if let Some(el) = card.get_untracked() {
                    let _ = el.focus();
                }
            }
            return;
        }
        match key.as_str() {
            "v" | "V" => verdict.set(Some(true)),
            "n" | "N" => verdict.set(Some(false)),
            "0" => tag.set(None),
            "e" | "E" => edit(),
            "Enter" if crate::ui_kit::aimed_at_other_control(&ev) => return,
            "Enter" => send(),
            k => match k.parse::<usize>() {
                Ok(d) if (1..=TAGS.len()).contains(&d) => tag.set(Some(d - 1)),
                _ => return,
            },
        }
        ev.prevent_default();
    })
}

/// The verdict's two radio buttons and the error tags' (none, then one per tag).
fn verdict_and_tags(verdict: RwSignal<Option<bool>>, tag: RwSignal<Option<usize>>) -> impl IntoView {
    view! {
        <fieldset class="verdict">
            <legend>"Verdict"</legend>
            {[(true, "valid", "Valid", "v"), (false, "not_valid", "Not valid", "n")].into_iter().map(|(valid, value, label, key)| view! {
                <label>
                    <input type="radio" name="option" value=value required=true aria-keyshortcuts=move || crate::ui_kit::hydrated().then_some(key)
                        prop:checked=move || verdict.get() == Some(valid)
                        on:change=move |_| verdict.set(Some(valid))/>
                    {label} " " <kbd>{key}</kbd>
                </label>
            }).collect_view()}
        </fieldset>
        <fieldset class="tags">
            <legend>"Error tag"</legend>
            <label>
                <input type="radio" name="tag" value="" prop:checked=move || tag.get().is_none() on:change=move |_| tag.set(None)/>
                "None " <kbd>"0"</kbd>
            </label>
            {TAGS.iter().enumerate().map(|(i, &value)| view! {
                <label>
                    <input type="radio" name="tag" value=value aria-keyshortcuts=move || crate::ui_kit::hydrated().then(|| (i + 1).to_string())
                        prop:checked=move || tag.get() == Some(i) on:change=move |_| tag.set(Some(i))/>
                    {TAG_LABELS[i]} " " <kbd>{i + 1}</kbd>
                </label>
            }).collect_view()}
        </fieldset>
    }
}
