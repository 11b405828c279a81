//! The clock leases expire by. In production it is the system clock; for
//! tests only, `HARDNEG_TEST_CLOCK_FILE` names a file holding seconds to add
//! (read on every call), so a test can move a running server an hour on
//! without sleeping. Never set it in production.
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

    /// Unix seconds.
    pub fn now(&self) -> i64 {
        crate::store::db::now_secs() + self.offset()
    }

    fn offset(&self) -> i64 {
        let Some(path) = &self.offset_file else { return 0 };
        // A missing or half-written file means no shift.
        std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
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
        assert!((Clock::default().now() - real).abs() <= 1);
    }
}
