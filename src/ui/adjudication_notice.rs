//! On the adjudication page: what the latest decision (or reopening) moved
//! elsewhere. A crowd-model `resolve` weighs people by the decided items
//! too, so its refit can settle other items otherwise (docs/api.md, "Crowd
//! models"); the page says so rather than leave it to be found.
use crate::ui_kit::count_of;
use leptos::prelude::*;

/// One line per moved item, by instance id: its label before and after.
#[component]
pub fn MovedNotice(moved: Vec<crate::api_types::MovedLabel>) -> impl IntoView {
    let label = |v: &Option<String>| v.clone().unwrap_or_else(|| "waiting for a decision".into());
    view! {
        <div class="notice moved" role="status">
            <p>{format!(
                "The crowd model, refitted after this change, now settles {} otherwise:",
                count_of(moved.len() as i64, "other item", "other items")
            )}</p>
            <ul>{moved.iter().map(|m| view! {
                <li data-instance=m.instance_id.to_string()>{format!("item {}: {} → {}", m.instance_id, label(&m.before), label(&m.after))}</li>
            }).collect_view()}</ul>
        </div>
    }
}
