//! HTTP: the JSON API v1 by area (docs/api.md), stored images, the page
//! guard and the extractors every route shares. Handlers check the caller,
//! then call the same service functions as the UI's server functions.
pub mod accounts;
pub mod adaptive;
pub mod crowd;
pub mod datasets;
pub mod export;
pub mod extract;
pub mod guard;
pub mod import;
pub mod join;
pub mod limits;
pub mod media;
pub mod models;
pub mod origin;
pub mod prolific;
pub mod proxy;
pub mod quality;
pub mod studies;
pub mod survey_form;
pub mod take_form;
pub mod task_json;
pub mod users;

use crate::state::AppState;
use axum::Router;

/// Every API route and the image route; the app adds pages and static files.
pub fn routes() -> Router<AppState> {
    Router::new()
        .merge(accounts::routes())
        .merge(studies::routes())
        .merge(adaptive::routes())
        .merge(crowd::routes())
        .merge(quality::routes())
        .merge(join::routes())
        .merge(datasets::routes())
        .merge(models::routes())
        .merge(prolific::routes())
        .merge(users::routes())
        .merge(media::routes())
        .merge(survey_form::routes())
        .merge(take_form::routes())
        .merge(kind_forms())
}

/// Every registered kind's no-JavaScript form routes (`ui_kit::card::Ui::forms`).
fn kind_forms() -> Router<AppState> {
    let forms = crate::kinds::KINDS.iter().filter_map(|&k| crate::kinds::ui(k)?.forms);
    forms.fold(Router::new(), |routes, forms| routes.merge(forms()))
}
