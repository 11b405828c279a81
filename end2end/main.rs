//! End-to-end tests in real headless Chromium against the real binary.
//! A binary of their own: they need the wasm site (./scripts/build-site.sh)
//! and a browser, which the API tests (tests/api) do not.
mod annotate_flow;
mod browser;
#[path = "../tests/api/helpers.rs"]
mod helpers;
mod page_weight;
mod pipeline_flow;
