//! hardneg: human curation of vision-language compositionality benchmarks.
//! `domain` is the pure core; around it, ssr only, `store` (the database,
//! files and caches), the feature services (`studies`, `crowd`, `datasets`,
//! `models`, `scoring`), the JSON API and forms (`http`) and the command line
//! (`cli`); `ui` the pages, rendered on the server and hydrated in the
//! browser. Dependencies point down only (README, "Layers, one way").
pub mod api_types;
pub mod domain;
pub mod kinds;
pub mod ui;
pub mod ui_kit;

#[cfg(feature = "ssr")]
pub mod accounts;
#[cfg(feature = "ssr")]
pub mod cli;
#[cfg(feature = "ssr")]
pub mod crowd;
#[cfg(feature = "ssr")]
pub mod datasets;
#[cfg(feature = "ssr")]
pub mod demo;
#[cfg(feature = "ssr")]
pub mod error;
#[cfg(feature = "ssr")]
pub mod http;
#[cfg(feature = "ssr")]
pub mod login_limits;
#[cfg(feature = "ssr")]
pub mod models;
#[cfg(feature = "ssr")]
pub mod prolific;
#[cfg(feature = "ssr")]
pub mod scoring;
#[cfg(feature = "ssr")]
pub mod state;
#[cfg(feature = "ssr")]
pub mod store;
#[cfg(feature = "ssr")]
pub mod studies;

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(ui::App);
}
