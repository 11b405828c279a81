//! SQLite's process-wide settings, made once before SQLite first runs.
use std::os::raw::c_int;

/// Turns off SQLite's memory statistics, which nothing here reads: with them
/// on, every allocation and free inside SQLite takes one process-wide mutex
/// (about 2 % of the answer round trip's instructions, `docs/performance.md`).
/// Only possible before SQLite starts, so `main` calls it first, before any
/// connection opens; afterwards SQLite refuses and this returns false.
pub fn tune() -> bool {
    // SAFETY: SQLite checks that it has not started and refuses otherwise;
    // `main` calls this before any thread could open a connection.
    let rc = unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) };
    rc == rusqlite::ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    #[test]
    fn once_sqlite_runs_the_setting_is_refused_and_sqlite_keeps_working() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        assert!(!super::tune(), "SQLite has started: the setting must be refused, not half-applied");
        let n: i64 = conn.query_row("SELECT count(*) FROM (SELECT 1 UNION SELECT 2)", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2);
    }
}
