//! Every integration test in one binary, a module per area: each test binary
//! links the whole crate, so one binary instead of ten links once. The tests
//! run the real `hardneg` binary on temporary data dirs over real HTTP
//! (helpers.rs); the browser tests are their own binary (end2end/).
mod ab_tie;
mod access;
mod adaptive;
mod adaptive_trust;
mod adjudication_undo;
mod agreement;
mod answers;
mod audit;
mod baseline;
mod cli;
mod crowd;
mod crowd_check_kit;
mod crowd_checks;
mod crowd_comprehension;
mod crowd_expiry;
mod crowd_kit;
mod crowd_load;
mod demo_crowd;
mod demo_models;
mod durability;
mod errors;
mod export;
mod export_abandoned;
mod hardening;
mod helpers;
mod hnc;
mod import;
mod import_beside_server;
mod logins;
mod odd_one_out;
mod page_headers;
mod pipeline;
mod placeholders;
mod quality;
mod ranking;
mod ranking_score;
mod results;
mod scoring;
mod site_files;
mod study_start;
mod survey_form;
mod take_form;
mod triplet_check;
mod upload;
