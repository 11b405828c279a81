//! End-to-end tests in real headless Chromium against the real binary.
mod annotate_flow;
mod browser;
#[path = "../tests/common/mod.rs"]
mod common;
mod pipeline_flow;
