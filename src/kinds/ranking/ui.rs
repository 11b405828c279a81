//! The ranking kind's task: the prompt's images in a list the annotator
//! reorders, best first, by dragging, by tapping an image's ↑ / ↓ buttons
//! (a phone has no drag and drop), or with keys: a digit selects an image,
//! the arrow keys (or u / d) move it up or down, Enter submits the order.
//! Each move is said in a status line, for screen readers. The answer is the shown letters in the chosen order ("C,A,B").
//! Before hydration each image has a place to choose instead, posted as one
//! form (`form.rs`). Its comparison-page panel is `compare_panel.rs`.
use crate::api_types::{OptionView, TaskView};
use crate::ui_kit::card::{Card, Ui};
use crate::ui_kit::card_head::{CardHead, Prefetch};
use crate::ui_kit::Counter;
use leptos::prelude::*;

pub const UI: Ui = Ui {
    card,
    compare: Some(super::compare_panel::panel),
    #[cfg(feature = "ssr")]
    forms: Some(super::form::routes),
};

fn card(c: Card) -> AnyView {
    let submit = c.submit;
    let choose = move |order: String| submit.run((order, None));
    view! { <RankingCard task=c.task pending=c.pending choose counter=c.counter form_action=format!("{}/rank", c.page)/> }
        .into_any()
}

fn move_item(order: RwSignal<Vec<usize>>, from: usize, to: usize) {
    order.update(|o| {
        if from < o.len() && to < o.len() {
            let item = o.remove(from);
            o.insert(to, item);
        }
    });
}

#[component]
fn RankingCard(
    task: TaskView,
    pending: Memo<bool>,
    choose: impl Fn(String) + Copy + Send + Sync + 'static,
    counter: Counter,
    /// Where the places post before the wasm has loaded (`form.rs`).
    form_action: String,
) -> impl IntoView {
    let progress = task.progress;
    let count = task.options.len();
    // Effects run only in the browser: until this one has, each image has a
    // place to choose, and the form posts them (with or without JavaScript).
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    let options = StoredValue::new(task.options.clone());
    let order = RwSignal::new((0..task.options.len()).collect::<Vec<usize>>());
    // The selected image, by its index in `options`.
    let selected = RwSignal::new(None::<usize>);
    let dragged = RwSignal::new(None::<usize>);
    let status = RwSignal::new(String::new());
    let submit = move || {
        let ids: Vec<String> =
            order.with_untracked(|o| options.with_value(|opts| o.iter().map(|&i| opts[i].id.clone()).collect()));
        choose(ids.join(","));
    };
    let step = move |up: bool| {
        let Some(item) = selected.get_untracked() else { return };
        let Some(pos) = order.with_untracked(|o| o.iter().position(|&i| i == item)) else { return };
        let to = if up { pos.checked_sub(1) } else { Some(pos + 1) };
        if let Some(to) = to.filter(|&to| to < count) {
            move_item(order, pos, to);
            status.set(options.with_value(|opts| moved(&opts[item].label, to, count)));
        }
    };
    let handle = ranking_keys(options, selected, step, submit);
    on_cleanup(move || handle.remove());

    // Its own (type-erased) view: one nested type for the whole card is too deep for the wasm build.
    let form = view! {
    <form class="rank-form" method="post" action=form_action
        on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); submit() }>
    <input type="hidden" name="task_id" value=task.task_id.to_string()/>
    <ol class="rank-list" aria-label="Images, best match first">
        {move || order.get().into_iter().enumerate().map(|(pos, i)| {
            let o = options.with_value(|opts| opts[i].clone());
            let item = Item { pos, i, count, live, selected, dragged, order, status };
            rank_item(o, item)
        }).collect_view()}
    </ol>
    <p class="visually-hidden" role="status">{move || status.get()}</p>
    <p class="keys">{move || if live.get() {
        "Drag an image, or tap its ↑ / ↓. Keys: a digit selects an image, ↑/↓ (or u/d) move it, Enter submits."
    } else {
        "Choose each image's place (1 = best match), then submit."
    }}</p>
    <button type="submit" class="submit-order" disabled=move || pending.get()>"Submit this order"</button>
    </form>
    }
    .into_any();
    // Each new item takes the focus (the last one's button went with its card).
    let card = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if let Some(el) = card.get() {
            let _ = el.focus();
        }
    });
    view! {
        <section class="survey ranking" tabindex="-1" node_ref=card aria-busy=move || pending.get().to_string() data-task=task.task_id.to_string()>
            <CardHead progress counter instructions=task.instructions.clone()/>
            <blockquote class="prompt">{task.prompt.text.clone()}</blockquote>
            {form}
            <Prefetch urls=task.prefetch/>
        </section>
    }
}

/// The card's keys: an image's key selects it, arrows (or u/d) move it,
/// Enter submits the order.
fn ranking_keys(
    options: StoredValue<Vec<OptionView>>,
    selected: RwSignal<Option<usize>>,
    step: impl Fn(bool) + 'static,
    submit: impl Fn() + 'static,
) -> WindowListenerHandle {
    window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let key = ev.key();
        let handled = match key.as_str() {
            "ArrowUp" | "ArrowLeft" | "u" => {
                step(true);
                true
            }
            "ArrowDown" | "ArrowRight" | "d" => {
                step(false);
                true
            }
            "Enter" if ev.repeat() || crate::ui_kit::aimed_at_other_control(&ev) => false,
            "Enter" => {
                submit();
                true
            }
            k => match options.with_value(|opts| opts.iter().position(|o| o.keys.iter().any(|x| x == k))) {
                Some(i) => {
                    selected.set(Some(i));
                    true
                }
                None => false,
            },
        };
        if handled {
            ev.prevent_default();
        }
    })
}

/// Where one image stands in the list, and the signals its row moves.
#[derive(Clone, Copy)]
struct Item {
    /// Its place (0 = best match).
    pos: usize,
    /// Its index in the task's options.
    i: usize,
    count: usize,
    live: RwSignal<bool>,
    selected: RwSignal<Option<usize>>,
    dragged: RwSignal<Option<usize>>,
    order: RwSignal<Vec<usize>>,
    /// What the last move did, in words.
    status: RwSignal<String>,
}

/// A move, as the status line says it.
fn moved(label: &str, to: usize, count: usize) -> String {
    format!("Image {label} is now at place {} of {count}", to + 1)
}

/// One image's row: select by click or key, drag to a place; before the
/// wasm runs, a place to choose for the form.
fn rank_item(o: OptionView, item: Item) -> AnyView {
    let Item { pos, i, count, live, selected, dragged, order, status } = item;
    let key = o.keys.first().cloned().unwrap_or_default();
    let (place, place_label) = (format!("rank_{}", o.id), format!("Place of image {}", o.label));
    let (label, id) = (o.label.clone(), o.id.clone());
    let shift = move |to: usize| {
        move_item(order, pos, to);
        selected.set(Some(i));
        status.set(moved(&label, to, count));
        // The list is drawn anew: the focus follows the moved image's button.
        let id = id.clone();
        request_animation_frame(move || refocus(&id, to < pos));
    };
    let (up, down) = (format!("Move image {} up", o.label), format!("Move image {} down", o.label));
    view! {
        <li class="rank-item" draggable="true" data-option=o.id.clone()
            // aria-current, not aria-selected: a plain list item has no selection role.
            aria-current=move || (selected.get() == Some(i)).to_string()
            tabindex=move || live.get().then_some("0")
            on:click=move |_| selected.set(Some(i))
            on:focus=move |_| selected.set(Some(i))
            on:dragstart=move |_| dragged.set(Some(pos))
            on:dragover=move |ev| ev.prevent_default()
            on:drop=move |ev| {
                ev.prevent_default();
                if let Some(from) = dragged.get_untracked() {
                    move_item(order, from, pos);
                }
                dragged.set(None);
            }>
            <span class="rank">{pos + 1}</span>
            {o.image_url.clone().map(|src| view! { <img src=src alt=format!("Image {}", o.label)/> })}
            <span class="label">{o.label.clone()} " " <kbd>{key}</kbd></span>
            {move || (!live.get()).then(|| view! {
                <select class="place" name=place.clone() aria-label=place_label.clone()>
                    {(1..=count).map(|p| view! { <option value=p selected=p == pos + 1>{p}</option> }).collect_view()}
                </select>
            })}
            {move || live.get().then(|| {
                let (up, down, shift) = (up.clone(), down.clone(), shift.clone());
                view! {
                    <span class="moves">
                        <button type="button" class="move" data-dir="up" aria-label=up disabled=pos == 0
                            on:click={ let shift = shift.clone(); move |_| shift(pos.saturating_sub(1)) }>"↑"</button>
                        <button type="button" class="move" data-dir="down" aria-label=down disabled=pos + 1 == count
                            on:click=move |_| shift(pos + 1)>"↓"</button>
                    </span>
                }
            })}
        </li>
    }
    .into_any()
}

/// Focuses the moved image's button of the same direction, or its other
/// one where that is disabled now (it reached an end).
fn refocus(id: &str, up: bool) {
    let (dir, other) = if up { ("up", "down") } else { ("down", "up") };
    let find = |d: &str| {
        let css = format!("li.rank-item[data-option='{id}'] button.move[data-dir='{d}']:not([disabled])");
        document().query_selector(&css).ok().flatten()
    };
    if let Some(b) = find(dir).or_else(|| find(other)) {
        use leptos::wasm_bindgen::JsCast;
        if let Ok(b) = b.dyn_into::<leptos::web_sys::HtmlElement>() {
            let _ = b.focus();
        }
    }
}
