//! End-to-end tests in real headless Chromium against the real binary.
#[path = "../tests/common/mod.rs"]
mod common;
mod annotate_flow;
mod browser;
mod pipeline_flow;
