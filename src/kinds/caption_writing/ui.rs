//! HNC's writing card: the image, its assigned caption type, two text boxes
//! (positive, negative) with the words outside the study's vocabulary
//! marked as they are typed, a submit button and three skip buttons, all in
//! one plain form. Before the wasm has loaded (or without JavaScript) the
//! form posts to `form.rs`; hydrated, keys work: p / n focus a
//! box, Enter or Ctrl+Enter submits, Esc leaves a box, s focuses the skip
//! buttons and 1–3 skip with that reason.
use crate::domain::ids::{StudyId, TaskId};
use super::{read_prompt, SKIP_LABELS, SKIP_REASONS, TEXTS, WRITTEN};
use crate::api_types::TaskView;
use crate::domain::vocabulary::Vocabulary;
use crate::ui_kit::card::{Card, Ui};
#[cfg(feature = "ssr")]
use crate::ui_kit::caller;
use crate::ui_kit::card_head::CardHead;
use crate::ui_kit::{error_text, now_ms, Counter};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

pub const UI: Ui = Ui {
    card,
    compare: None,
    #[cfg(feature = "ssr")]
    forms: Some(super::form::routes),
};

fn card(c: Card) -> AnyView {
    view! { <WritingCard study_id=c.study_id task=c.task current=c.current counter=c.counter form_action=format!("{}/write", c.page)/> }
        .into_any()
}

/// What writing a pair led to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Written {
    /// Stored; the next task (None: all done).
    Next(Option<TaskView>),
    /// Nothing stored: each caption's words outside the vocabulary, and
    /// whether they must be replaced (else confirming keeps them).
    Unknown { words: Vec<(String, Vec<String>)>, strict: bool },
}

/// Stores the pair or skip unless unknown words stop it, then returns the next task.
#[server(prefix = "/sfn")]
pub async fn write_and_next(
    study_id: StudyId,
    task_id: TaskId,
    option: String,
    positive: String,
    negative: String,
    confirmed: bool,
    elapsed_ms: i64,
) -> Result<Written, ServerFnError> {
    use super::write::{write, WriteOutcome, WrittenAnswer};
    let (state, user) = caller::caller().await?;
    let a = WrittenAnswer { task_id, option, positive, negative, confirmed };
    match write(&state, &user, &a, Some(elapsed_ms)).await.map_err(caller::sfn_error)? {
        WriteOutcome::Unknown { words, strict } => Ok(Written::Unknown { words, strict }),
        WriteOutcome::Stored(_) => {
            let next =
                crate::studies::tasks::next_task(&state, &user, study_id).await.map_err(caller::sfn_error)?;
            Ok(Written::Next(next))
        }
    }
}

/// The study's vocabulary and whether it is strict (None: it has none),
/// for those who may take part in the study (and its researchers).
#[server(prefix = "/sfn")]
pub async fn study_vocabulary(study_id: StudyId) -> Result<Option<(Vec<String>, bool)>, ServerFnError> {
    let (state, user) = caller::caller().await?;
    let meta = crate::studies::meta::study_meta(&state, study_id).await.map_err(caller::sfn_error)?;
    crate::studies::tasks::may_take_part(&state, &user, &meta).await.map_err(caller::sfn_error)?;
    let v = crate::studies::vocabulary::of_study(&state.db, study_id).await.map_err(caller::sfn_error)?;
    Ok(v.map(|(v, strict)| (v.words().map(str::to_string).collect(), strict)))
}

#[component]
fn WritingCard(
    study_id: StudyId,
    task: TaskView,
    /// The survey's current task: set to the next one once this is stored.
    current: RwSignal<Option<TaskView>>,
    counter: Counter,
    /// Where the form posts without JavaScript.
    form_action: String,
) -> impl IntoView {
    let progress = task.progress;
    let task_id = task.task_id;
    let caption_type = read_prompt(&task.prompt.text).unwrap_or(&task.prompt.text).to_string();
    let shown_at = StoredValue::new(now_ms());
    let positive = RwSignal::new(String::new());
    let negative = RwSignal::new(String::new());
    let confirmed = RwSignal::new(false);
    let reported = RwSignal::new(None::<Reported>);
    let error = RwSignal::new(None::<String>);
    let vocab = vocabulary_of(study_id);
    let action = ServerAction::<WriteAndNext>::new();
    Effect::new(move |_| match action.value().get() {
        Some(Ok(Written::Next(next))) => current.set(next),
        Some(Ok(Written::Unknown { words, strict })) => {
            error.set(None);
            reported.set(Some((words, strict)));
        }
        Some(Err(e)) => error.set(Some(error_text(&e))),
        None => {}
    });
    let send = move |option: String| {
        if action.pending().get_untracked() {
            return;
        }
        let elapsed_ms = (now_ms() - shown_at.get_value()).max(0.0) as i64;
        let (positive, negative) = match option == WRITTEN {
            true => (positive.get_untracked(), negative.get_untracked()),
            false => (String::new(), String::new()),
        };
        let confirmed = confirmed.get_untracked();
        action.dispatch(WriteAndNext { study_id, task_id, option, positive, negative, confirmed, elapsed_ms });
    };
    let boxes = [NodeRef::<leptos::html::Input>::new(), NodeRef::<leptos::html::Input>::new()];
    let first_skip = NodeRef::<leptos::html::Button>::new();
    let card = NodeRef::<leptos::html::Section>::new();
    let in_box = RwSignal::new(false);
    Effect::new(move |_| {
        if let Some(el) = boxes[0].get() {
            crate::ui_kit::focus_once_shown(el.into());
        }
    });
    let handle = writing_keys(send, in_box, card, boxes, first_skip);
    on_cleanup(move || handle.remove());
    let text_box = move |i: usize, text: RwSignal<String>, key: &'static str| {
        text_box(TextBox { i, text, key, node: boxes[i], in_box, reported, vocab })
    };

    view! {
        <section class="survey caption-writing" tabindex="-1" node_ref=card aria-busy=move || action.pending().get().to_string() data-task=task_id.to_string()>
            <CardHead progress counter instructions=task.instructions.clone()/>
            {task.prompt.image_url.clone().map(|src| view! { <img class="prompt-image" src=src alt="The image to write captions for"/> })}
            <p class="caption-type">"Assigned type: " <strong>{caption_type}</strong></p>
            <form class="writing-form" method="post" action=form_action>
                <input type="hidden" name="task_id" value=task_id.to_string()/>
                {text_box(0, positive, "p")}
                {text_box(1, negative, "n")}
                {move || reported.get().map(|(words, strict)| unknown_report(words, strict, confirmed))}
                // The first submit button is the form's default: Enter in a box writes the pair.
                <button type="submit" class="primary submit-pair" name="option" value=WRITTEN disabled=move || action.pending().get()
                    on:click=move |ev| { ev.prevent_default(); send(WRITTEN.to_string()) }>
                    "Submit pair " <kbd>"Enter"</kbd>
                </button>
                {skip_buttons(first_skip, send)}
            </form>
            <p class="error" role="alert">{move || error.get()}</p>
            <div hidden>
                {task.prefetch.into_iter().map(|src| view! { <img src=src alt=""/> }).collect_view()}
            </div>
        </section>
    }
}

/// The card's keys: Ctrl+Enter sends the pair, p/n go to a box (Esc leaves
/// it), s to the skip buttons, 1-3 skip with a reason.
fn writing_keys(
    send: impl Fn(String) + Copy + 'static,
    in_box: RwSignal<bool>,
    card: NodeRef<leptos::html::Section>,
    boxes: [NodeRef<leptos::html::Input>; 2],
    first_skip: NodeRef<leptos::html::Button>,
) -> WindowListenerHandle {
    window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.meta_key() || ev.alt_key() || ev.repeat() {
            return;
        }
        let key = ev.key();
        if key == "Enter" && ev.ctrl_key() {
            send(WRITTEN.to_string());
        } else if ev.ctrl_key() {
            return;
        } else if in_box.get_untracked() {
            // Typing goes to the box; Enter submits the form by itself, Esc leaves.
            if key == "Escape" {
                if let Some(el) = card.get_untracked() {
                    let _ = el.focus();
                }
            }
            return;
        } else {
            match key.as_str() {
                "p" | "P" | "n" | "N" => {
                    let i = usize::from(key.eq_ignore_ascii_case("n"));
                    if let Some(el) = boxes[i].get_untracked() {
                        let _ = el.focus();
                    }
                }
                "s" | "S" => {
                    if let Some(el) = first_skip.get_untracked() {
                        let _ = el.focus();
                    }
                }
                "1" | "2" | "3" => {
                    let i = key.parse::<usize>().unwrap_or(1) - 1;
                    send(format!("skip:{}", SKIP_REASONS[i]));
                }
                _ => return,
            }
        }
        ev.prevent_default();
    })
}

/// The words outside the vocabulary; when they only warn, a box to keep them.
fn unknown_report(words: Vec<(String, Vec<String>)>, strict: bool, confirmed: RwSignal<bool>) -> impl IntoView {
    let named = words.into_iter().map(|(f, w)| format!("{f}: {}", w.join(", "))).collect::<Vec<_>>().join("; ");
    view! {
        <div class="unknown-report" role="alert">
            <p>{if strict { "Replace the words outside the vocabulary: " } else { "Outside the vocabulary: " }} {named}</p>
            {(!strict).then(|| view! {
                <label class="confirm"><input type="checkbox" name="confirmed" value="1"
                    prop:checked=move || confirmed.get() on:change=move |ev| confirmed.set(event_target_checked(&ev))/>
                    " Keep these words"</label>
            })}
        </div>
    }
}

/// One submit button per reason to skip the image (keys 1-3).
fn skip_buttons(first_skip: NodeRef<leptos::html::Button>, send: impl Fn(String) + Copy + 'static) -> impl IntoView {
    view! {
        <fieldset class="skip-reasons">
            <legend>"Skip this image " <kbd>"s"</kbd></legend>
            {SKIP_REASONS.iter().zip(SKIP_LABELS).enumerate().map(|(i, (&reason, label))| {
                let value = format!("skip:{reason}");
                let sent = value.clone();
                let node = if i == 0 { first_skip } else { NodeRef::new() };
                view! {
                    <button type="submit" class="option plain" name="option" value=value node_ref=node
                        aria-keyshortcuts=move || crate::ui_kit::hydrated().then(|| (i + 1).to_string())
                        on:click=move |ev| { ev.prevent_default(); send(sent.clone()) }>
                        {label} " " <kbd>{i + 1}</kbd>
                    </button>
                }
            }).collect_view()}
        </fieldset>
    }
}

/// The words outside the vocabulary the server reported, per field, and
/// whether they refuse the pair.
type Reported = (Vec<(String, Vec<String>)>, bool);

/// One of the card's two text boxes, and what it says of the words outside
/// the vocabulary.
#[derive(Clone, Copy)]
struct TextBox {
    i: usize,
    text: RwSignal<String>,
    key: &'static str,
    node: NodeRef<leptos::html::Input>,
    in_box: RwSignal<bool>,
    reported: RwSignal<Option<Reported>>,
    vocab: Memo<Option<(Vocabulary, bool)>>,
}

fn text_box(b: TextBox) -> impl IntoView {
    let TextBox { i, text, key, node, in_box, reported, vocab } = b;
    let field = &TEXTS[i];
    let unknown = move || vocab.with(|v| v.as_ref().map(|(v, _)| v.unknown(&text.get())).unwrap_or_default());
    view! {
        <label class="caption-box">
            <span>{field.label} " " <kbd>{key}</kbd></span>
            <input type="text" name=field.name maxlength=field.max_chars autocomplete="off" node_ref=node
                aria-keyshortcuts=move || crate::ui_kit::hydrated().then_some(key) data-field=field.name
                on:focus=move |_| in_box.set(true) on:blur=move |_| in_box.set(false)
                prop:value=move || text.get() on:input=move |ev| { text.set(event_target_value(&ev)); reported.set(None); }/>
        </label>
        {move || {
            let words = unknown();
            (!words.is_empty()).then(|| view! {
                <p class="unknown-words" data-field=field.name>"Outside the vocabulary: " <mark>{words.join(", ")}</mark></p>
            })
        }}
    }
}

/// The study's vocabulary, once its server function has answered (None
/// while it has not, or when the study has none).
fn vocabulary_of(study_id: StudyId) -> Memo<Option<(Vocabulary, bool)>> {
    let vocabulary = Resource::new(move || study_id, study_vocabulary);
    Memo::new(move |_| match vocabulary.get() {
        Some(Ok(Some((words, strict)))) => Some((Vocabulary::new(words), strict)),
        _ => None,
    })
}
