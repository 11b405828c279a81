//! The pure core: no IO, no framework types. Everything here is unit-tested
//! and shared by the server, the CLI and the browser client.
pub mod ab_pairs;
pub mod accuracy;
pub mod adaptive;
pub mod aggregate;
pub mod agreement;
pub mod assignment;
pub mod audit;
pub mod candidates;
pub mod category;
pub mod crowd;
pub mod export;
pub mod funnel;
pub mod metrics;
pub mod names;
pub mod normalize;
pub mod preference;
pub mod ranking_stats;
pub mod rankings;
pub mod resolution;
pub mod results;
pub mod rng;
pub mod role;
pub mod study;
pub mod survey;
pub mod triplets;
