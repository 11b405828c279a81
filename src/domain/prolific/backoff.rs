//! Back-off with jitter between retries of a call Prolific throttled (429),
//! failed (5xx) or never answered: "equal jitter", half fixed and half
//! random, so many senders do not retry in step.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first delay's ceiling, in ms.
    pub base_ms: u64,
    /// No delay exceeds this, in ms.
    pub cap_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { base_ms: 500, cap_ms: 60_000 }
    }
}

impl Backoff {
    /// The delay before retry number `attempt` (1 = the first retry);
    /// `jitter` is a uniform draw from [0, 1); `retry_after_ms` is
    /// Prolific's `Retry-After`, which is never undercut.
    pub fn delay_ms(&self, attempt: u32, jitter: f64, retry_after_ms: Option<u64>) -> u64 {
        let exp = self.base_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(32));
        let ceiling = exp.min(self.cap_ms);
        let half = ceiling / 2;
        let j = if jitter.is_finite() { jitter.clamp(0.0, 1.0) } else { 0.0 };
        let d = half + ((ceiling - half) as f64 * j) as u64;
        d.max(retry_after_ms.unwrap_or(0).min(self.cap_ms.max(1) * 10))
    }

    /// The wait before reading back again an action whose effect is not
    /// known yet, sent `since_sent_ms` ago: a quarter of that age (so the
    /// reads thin out as it waits: a bonus pay's 15-minute grace costs
    /// dozens of reads, not thousands), at least the back-off's, at most its cap.
    pub fn reread_ms(&self, attempt: u32, since_sent_ms: i64, jitter: f64) -> u64 {
        let quarter = (since_sent_ms.max(0) as u64 / 4).min(self.cap_ms);
        self.delay_ms(attempt, jitter, None).max(quarter)
    }
}

/// The wait before looking again at an action that waits on something
/// else (a submission not yet submitted, finishers whose approvals
/// Prolific has not applied yet), written `waited_ms` ago: a quarter of
/// that age, at least a second, at most `cap_ms`. So `prolific decide`
/// adds its finishers to their group seconds after Prolific applies the
/// approvals, and a submission that stays open is looked at every
/// `cap_ms`, not every second.
pub fn waiting_ms(waited_ms: i64, cap_ms: u64) -> u64 {
    (waited_ms.max(0) as u64 / 4).max(1_000).min(cap_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_with_the_time_waited_from_a_second_to_the_cap() {
        assert_eq!(waiting_ms(0, 30_000), 1_000, "a fresh row is looked at again a second later");
        assert_eq!(waiting_ms(-5_000, 30_000), 1_000, "a clock stepped back is no age");
        assert_eq!(waiting_ms(4_000, 30_000), 1_000);
        assert_eq!(waiting_ms(8_000, 30_000), 2_000);
        assert_eq!(waiting_ms(100_000, 30_000), 25_000);
        assert_eq!(waiting_ms(i64::MAX, 30_000), 30_000, "never past the cap");
        assert_eq!(waiting_ms(0, 200), 200, "a cap under a second is kept");
    }

    #[test]
    fn delays_grow_to_the_cap_and_stay_within_half_and_whole() {
        let b = Backoff { base_ms: 100, cap_ms: 5_000 };
        let mut last = 0;
        for attempt in 1..=12 {
            let ceiling = (100u64 << (attempt - 1)).min(5_000);
            let lo = b.delay_ms(attempt, 0.0, None);
            let hi = b.delay_ms(attempt, 0.999_999, None);
            assert_eq!(lo, ceiling / 2, "attempt {attempt}");
            assert!(hi <= ceiling && hi >= ceiling - 1, "attempt {attempt}: {hi}");
            assert!(lo >= last / 2);
            last = lo;
        }
        assert_eq!(b.delay_ms(1000, 0.5, None), 3_750, "no overflow far past the cap");
        assert_eq!(b.delay_ms(0, 0.0, None), 50, "attempt 0 is the first");
    }

    #[test]
    fn read_backs_thin_out_as_an_action_waits() {
        let b = Backoff { base_ms: 500, cap_ms: 60_000 };
        assert_eq!(b.reread_ms(1, 0, 0.0), 250, "at first, the back-off's");
        assert_eq!(b.reread_ms(1, 40_000, 0.0), 10_000);
        assert_eq!(b.reread_ms(1, 3_600_000, 0.0), 60_000, "never past the cap");
        assert_eq!(b.reread_ms(1, -5, 0.0), 250, "a clock step back");
        // A bonus pay's 15-minute grace: read back dozens of times, not thousands.
        let (mut t, mut reads) = (0i64, 0);
        while t < 900_000 {
            t += b.reread_ms(1, t, 0.5) as i64;
            reads += 1;
        }
        assert!((10..60).contains(&reads), "{reads} reads");
    }

    #[test]
    fn jitter_spreads_and_retry_after_is_honoured() {
        let b = Backoff::default();
        let spread: std::collections::BTreeSet<u64> = (0..10).map(|i| b.delay_ms(3, i as f64 / 10.0, None)).collect();
        assert_eq!(spread.len(), 10);
        assert_eq!(b.delay_ms(1, 0.0, Some(7_000)), 7_000);
        assert_eq!(b.delay_ms(1, 0.0, Some(10)), 250);
        assert_eq!(b.delay_ms(1, f64::NAN, None), 250);
        assert_eq!(b.delay_ms(1, 7.0, None), 500, "jitter is clamped");
        assert_eq!(b.delay_ms(1, 0.0, Some(u64::MAX)), 600_000, "a silly Retry-After is bounded");
    }
}
