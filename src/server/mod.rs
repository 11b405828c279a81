//! The server shell around the pure core: database, auth, images, HTTP.
pub mod agreement;
pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod compare;
pub mod db;
pub mod demo_seed;
pub mod error;
pub mod images;
pub mod media;
pub mod progress;
pub mod results;
pub mod state;
pub mod studies;
pub mod tasks;
pub mod writer;
