//! The hook contract of a kind's UI part: a card of its own for its tasks
//! (every other kind is answered on the shared option card), the
//! no-JavaScript form routes that card posts to, and a panel on the
//! comparison page. A kind lists its `ui` part in `register_kinds!`;
//! `kinds::ui` finds it, so the survey loop (`ui::annotate`), the router
//! (`http`) and the comparison page never name a kind. Here, below the
//! kinds and the shell, because both sides speak it.
use super::Counter;
use crate::api_types::TaskView;
use crate::domain::ids::StudyId;
use leptos::prelude::*;

/// What the survey loop hands a kind's card.
pub struct Card {
    pub study_id: StudyId,
    pub task: TaskView,
    /// The survey's shown task: a card that stores its answer through a
    /// server function of its own sets the next task here.
    pub current: RwSignal<Option<TaskView>>,
    /// Whether the survey's answer (`submit`) is on its way.
    pub pending: Memo<bool>,
    /// Answers through the survey's action: (value, free text).
    pub submit: Callback<(String, Option<String>)>,
    pub counter: Counter,
    /// The survey page's path (`/annotate/{id}`, `/take/{id}`): the card's
    /// no-JavaScript form posts below it (`{page}/answer`, the shared
    /// answer form, or a route of the kind's own `forms`).
    pub page: String,
}

/// A kind's UI part (`kinds/<kind>/ui.rs`, `pub const UI`). A kind with a
/// card of its own reads its keys itself: the survey loop's "a key names an
/// option" handler stays off for it.
pub struct Ui {
    pub card: fn(Card) -> AnyView,
    /// A panel on the comparison page (`/research/compare`).
    pub compare: Option<fn() -> AnyView>,
    /// The routes its card's no-JavaScript form posts to.
    #[cfg(feature = "ssr")]
    pub forms: Option<fn() -> axum::Router<crate::state::AppState>>,
}
