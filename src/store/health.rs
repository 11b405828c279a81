//! Whether the database can be written right now. A full disk (SQLite's
//! SQLITE_FULL, PostgreSQL's `disk_full`, ENOSPC) refuses every write until
//! space is freed; nothing acknowledged is lost, but every request that
//! writes fails. Such a failure is told apart from other internal errors
//! (a 503 with `Retry-After`, not a 500), logged once when writes start
//! failing and once when they succeed again (not per request), and shown
//! on the research page while it lasts.
use std::error::Error;
use std::sync::atomic::{AtomicI64, Ordering};

/// Unix seconds of the first refused write of the current spell; 0: writes succeed.
static FAILING_SINCE: AtomicI64 = AtomicI64::new(0);

/// Whether `e` (or any cause under it) says the storage is full.
pub fn storage_full(e: &(dyn Error + 'static)) -> bool {
    let mut cause: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(e) = cause {
        if says_full(e) {
            return true;
        }
        cause = e.source();
    }
    false
}

fn says_full(e: &(dyn Error + 'static)) -> bool {
    if let Some(rusqlite::Error::SqliteFailure(f, _)) = e.downcast_ref::<rusqlite::Error>() {
        return f.code == rusqlite::ErrorCode::DiskFull;
    }
    if let Some(sqlx::Error::Database(d)) = e.downcast_ref::<sqlx::Error>() {
        // SQLITE_FULL (13), or PostgreSQL's disk_full class 53100.
        if matches!(d.code().as_deref(), Some("13" | "53100")) {
            return true;
        }
    }
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        if io.raw_os_error() == Some(libc::ENOSPC) || io.kind() == std::io::ErrorKind::StorageFull {
            return true;
        }
    }
    let text = e.to_string();
    text.contains("database or disk is full") || text.contains("No space left on device")
}

/// Whether `e` says no connection could be had or kept (PostgreSQL down or
/// restarting, every connection busy past the pool's wait, a connection
/// PostgreSQL terminated): the client may try again.
pub fn out_of_reach(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|code| connection_ended(&code)),
        _ => false,
    }
}

/// PostgreSQL's SQLSTATE classes for a connection that ended: 08 (connection
/// exception) and 57P (operator intervention: `pg_terminate_backend`, a
/// shutdown, a restart not yet taking connections). The statement in
/// flight was not carried out. SQLite's codes are numbers: never these.
fn connection_ended(code: &str) -> bool {
    code.starts_with("08") || code.starts_with("57P")
}

/// A write was refused for want of space: logs the cause once per spell.
pub fn write_refused(cause: &(dyn Error + 'static)) {
    let now = crate::store::db::now_secs().max(1);
    if FAILING_SINCE.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        tracing::error!(
            "writes are failing: the storage is full ({cause}); answers are refused with 503 and nothing \
             acknowledged is lost; this is logged once, until writes succeed again"
        );
    }
}

/// A write succeeded: ends a spell of refused writes, saying so once.
pub fn write_succeeded() {
    // A plain load first: the answer path pays no atomic write while healthy.
    if FAILING_SINCE.load(Ordering::Acquire) == 0 {
        return;
    }
    let since = FAILING_SINCE.swap(0, Ordering::AcqRel);
    if since != 0 {
        let secs = crate::store::db::now_secs() - since;
        tracing::warn!("writes succeed again, after {secs} s of refused writes (storage full)");
    }
}

/// Since when writes are refused (unix seconds), if they are.
pub fn failing_since() -> Option<i64> {
    Some(FAILING_SINCE.load(Ordering::Acquire)).filter(|&s| s != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_told_apart_from_other_errors() {
        let full =
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(13), Some("database or disk is full".into()));
        assert!(storage_full(&full));
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(5), Some("database is locked".into()));
        assert!(!storage_full(&busy));
        let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(storage_full(&std::io::Error::other(enospc)), "found under a wrapper");
        assert!(!storage_full(&std::io::Error::from_raw_os_error(libc::EACCES)));
    }

    #[test]
    fn a_connection_postgresql_ended_is_out_of_reach_and_other_refusals_are_not() {
        for code in ["57P01", "57P02", "57P03", "08006", "08003"] {
            assert!(connection_ended(code), "{code}");
        }
        // A unique violation, a serialization failure, a statement timeout, SQLite's busy and full.
        for code in ["23505", "40001", "57014", "5", "13", "2067"] {
            assert!(!connection_ended(code), "{code}");
        }
        assert!(out_of_reach(&sqlx::Error::PoolTimedOut));
        assert!(!out_of_reach(&sqlx::Error::RowNotFound));
    }

    #[test]
    fn a_spell_of_refused_writes_starts_once_and_ends_on_success() {
        write_succeeded();
        assert_eq!(failing_since(), None);
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        write_refused(&full);
        let since = failing_since().expect("failing");
        write_refused(&full);
        assert_eq!(failing_since(), Some(since), "the spell keeps its start");
        write_succeeded();
        assert_eq!(failing_since(), None);
    }
}
