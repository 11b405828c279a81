//! How a person's keys and taps reach an answer on the survey page: keys
//! naming an option choose it, and a double click's second click is dropped.
use crate::api_types::TaskView;
use leptos::prelude::*;

/// From the first survey on, the second click of a double click or tap on a
/// button (its `detail` above 1) is dropped before any handler sees it: the
/// first click answered the item, and by the second the next item's option
/// is under the pointer (an audit: a double tap answered two items). One
/// listener for the page's life, in the capture phase so no card runs first.
pub fn drop_double_clicks() {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{closure::Closure, JsCast};
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let drop = Closure::<dyn Fn(leptos::ev::MouseEvent)>::new(|ev: leptos::ev::MouseEvent| {
                let on_button = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .is_some_and(|e| e.closest("button").ok().flatten().is_some());
                if ev.detail() > 1 && on_button {
                    ev.prevent_default();
                    ev.stop_immediate_propagation();
                }
            });
            if let Some(w) = web_sys::window() {
                let _ = w.add_event_listener_with_callback_and_bool("click", drop.as_ref().unchecked_ref(), true);
            }
            drop.forget();
        });
    }
}

/// While this component lives, a key that names one of the shown task's
/// options chooses it (no modifier keys, no auto-repeat). A kind with a card
/// of its own reads its keys itself (a ranking's digits select an image to
/// move, they answer nothing).
pub fn answer_by_keys(task: RwSignal<Option<TaskView>>, choose: impl Fn(String) + 'static) {
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.repeat() {
            return;
        }
        let key = ev.key().to_lowercase();
        let picked = task.with_untracked(|t| {
            let t = t.as_ref().filter(|t| crate::kinds::ui(t.kind).is_none())?;
            t.options.iter().find(|o| o.keys.contains(&key)).map(|o| o.id.clone())
        });
        if let Some(id) = picked {
            ev.prevent_default();
            choose(id);
        }
    });
    on_cleanup(move || handle.remove());
}
