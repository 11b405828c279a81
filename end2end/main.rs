//! End-to-end tests in real headless Chromium against the real binary.
//! A binary of their own: they need the wasm site (./scripts/build-site.sh)
//! and a browser, which the API tests (tests/api) do not.
mod annotate_flow;
mod browser;
mod crowd_checks_flow;
mod crowd_flow;
#[allow(dead_code)]
#[path = "../tests/api/crowd_kit.rs"]
mod crowd_kit;
#[path = "../tests/api/helpers.rs"]
mod helpers;
mod hnc_flow;
mod page_weight;
mod pages;
mod participant_pages;
mod pipeline_flow;
#[path = "../tests/api/prolific_fake.rs"]
mod prolific_fake;
mod prolific_panel;
mod protocols_flow;
mod research_live;
mod take_pages;
mod touch_take;
mod triplet_flow;
