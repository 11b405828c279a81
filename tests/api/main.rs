//! Every integration test in one binary, a module per area: each test binary
//! links the whole crate, so one binary instead of ten links once. The tests
//! run the real `hardneg` binary on temporary data dirs over real HTTP
//! (helpers.rs); the browser tests are their own binary (end2end/).
mod access;
mod agreement;
mod answers;
mod baseline;
mod cli;
mod demo_models;
mod durability;
mod errors;
mod export;
mod hardening;
mod helpers;
mod import;
mod pipeline;
mod placeholders;
mod results;
mod scoring;
mod site_files;
mod upload;
