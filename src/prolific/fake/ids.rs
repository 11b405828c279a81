//! Ids, times and the one bound every file of the fake shares.

/// Bonus set-ups, pay calls, bulk approvals, groups, members, webhook events and deliveries: each at most this many.
pub const MAX_RECORDS: usize = 200_000;

/// A 24-hex-digit id, as Prolific's object ids.
pub fn new_id() -> String {
    let n: u128 = rand::random::<u128>() & ((1u128 << 96) - 1);
    format!("{n:024x}")
}

/// Now, as RFC 3339 with microseconds (as Prolific writes times).
pub fn now() -> String {
    let t = time::OffsetDateTime::now_utc();
    let micros = t.microsecond();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}
