//! Log lines an anonymous client can cause, one a minute with their count:
//! a line each let a flood grow the log without bound (audits AO, AZ).

/// When a line was last written (seconds) and the events since.
#[derive(Debug, Clone, Copy)]
pub struct Tally {
    last: i64,
    count: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new()
    }
}

impl Tally {
    pub const fn new() -> Tally {
        Tally { last: i64::MIN, count: 0 }
    }

    /// Counts one event at `now`; Some(events since the last line, this one
    /// included) when a line is due (the first at once, then once a minute).
    pub fn count(&mut self, now: i64) -> Option<u64> {
        self.count += 1;
        if now.saturating_sub(self.last) < 60 {
            return None;
        }
        let due = self.count;
        *self = Tally { last: now, ..Tally::new() };
        Some(due)
    }
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn a_line_at_once_then_once_a_minute_with_the_events_held_back() {
        let mut t = Tally::new();
        assert_eq!(t.count(1000), Some(1), "the first at once");
        assert_eq!((2..=5).filter_map(|i| t.count(1000 + i)).count(), 0);
        assert_eq!(t.count(1059), None);
        assert_eq!(t.count(1060), Some(6), "the five held back and this one");
    }
}
