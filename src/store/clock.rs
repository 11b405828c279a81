//! The clock leases expire by. In production it is the system clock; for
//! tests only, `HARDNEG_TEST_CLOCK_FILE` names a file holding seconds to add
//! (read on every call), so a test can move a running server an hour on
//! without sleeping, or `=T` to stop the clock at Unix second T (answers
//! that must share a second). Never set it in production.
use std::path::PathBuf;

pub const TEST_CLOCK_ENV: &str = "HARDNEG_TEST_CLOCK_FILE";

#[derive(Clone, Default, Debug)]
pub struct Clock {
    offset_file: Option<PathBuf>,
}

impl Clock {
    /// The system clock, shifted by the test offset file when the environment names one.
    pub fn from_env() -> Clock {
        let offset_file = std::env::var_os(TEST_CLOCK_ENV).map(PathBuf::from);
        if let Some(f) = &offset_file {
            tracing::warn!(file = %f.display(), "test clock: lease times are shifted by the file's seconds");
        }
        Clock { offset_file }
    }

    pub fn with_offset_file(path: PathBuf) -> Clock {
        Clock { offset_file: Some(path) }
    }

    /// The clock as the environment sets it, without a word in the log:
    /// for lease times written where no server state is at hand (the
    /// Prolific sync, run by the server or the CLI).
    pub fn quiet_from_env() -> Clock {
        Clock { offset_file: std::env::var_os(TEST_CLOCK_ENV).map(PathBuf::from) }
    }

    /// Unix seconds.
    pub fn now(&self) -> i64 {
        let real = crate::store::db::now_secs();
        let Some(path) = &self.offset_file else { return real };
        // A missing or half-written file means no shift.
        let text = std::fs::read_to_string(path).unwrap_or_default();
        match text.trim().strip_prefix('=') {
            Some(fixed) => fixed.parse().unwrap_or(real),
            None => real + text.trim().parse::<i64>().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_file_shifts_the_clock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("offset");
        let clock = Clock::with_offset_file(file.clone());
        let real = crate::store::db::now_secs();
        assert!((clock.now() - real).abs() <= 1, "no file: no shift");
        std::fs::write(&file, "3600\n").unwrap();
        assert!((clock.now() - real - 3600).abs() <= 1);
        std::fs::write(&file, "not a number").unwrap();
        assert!((clock.now() - real).abs() <= 1);
        std::fs::write(&file, "=1800000000\n").unwrap();
        assert_eq!(clock.now(), 1_800_000_000, "a stopped clock");
        assert!((Clock::default().now() - real).abs() <= 1);
    }
}
