//! Storage shared by the server and scoring: the database (SQLite or PostgreSQL), the
//! content-addressed image store, the answer writer and model runs, and
//! the in-memory handles over them that `AppState` holds (the lease clock,
//! the caches of items and shown tasks).
pub mod addresses;
pub mod backup;
mod batch;
pub mod clock;
pub mod dataset_rows;
pub mod db;
pub mod dialect;
mod gathered_wal;
pub mod health;
pub mod ids;
pub mod images;
pub mod item_cache;
pub mod leftovers;
pub mod local_reads;
pub mod migrations;
pub mod negatives;
pub mod pages;
pub mod recent;
pub mod rows;
pub mod runs;
pub mod session_table;
pub mod sessions;
pub mod sqlite_process;
mod sqlite_writer;
pub mod statements;
pub mod task_cache;
#[cfg(test)]
mod test_postgres;
pub mod writer;
