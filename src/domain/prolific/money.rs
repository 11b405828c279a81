//! The reward, Prolific's minimum pay, places, times and the budget, in
//! cents of the account's currency (Prolific's `reward` is in cents).

/// Prolific's minimum hourly reward in its smallest unit: £6.00 in a GBP
/// workspace, US$8.00 in a USD one. Before the workspace's currency is read
/// (a dry run, the research page's estimate), the lower figure: hardneg
/// must not refuse what Prolific would take.
pub fn min_hourly_cents(currency: Option<&str>) -> u64 {
    match currency.map(str::to_ascii_uppercase).as_deref() {
        Some("USD") => 800,
        _ => 600,
    }
}

/// Bounds past any real study (a day's work; a pay rate no grant pays):
/// past them a figure is a typo, and the money made from it could overflow.
pub const MAX_MINUTES: f64 = 1440.0;
pub const MAX_HOURLY_RATE: f64 = 1000.0;

/// The reward per place for `minutes` of work at `hourly` (money per hour),
/// rounded up to the cent; refused below `min_hourly_cents` an hour with
/// both figures named.
pub fn reward_cents(hourly: f64, minutes: f64, min_hourly_cents: u64) -> Result<u64, String> {
    if !(hourly.is_finite() && hourly > 0.0 && hourly <= MAX_HOURLY_RATE) {
        return Err(format!("the hourly rate must be above 0 and at most {MAX_HOURLY_RATE}, got {hourly}"));
    }
    if !(minutes.is_finite() && minutes > 0.0 && minutes <= MAX_MINUTES) {
        return Err(format!("the expected time must be above 0 and at most {MAX_MINUTES} minutes, got {minutes}"));
    }
    let hourly_cents = (hourly * 100.0).round();
    if hourly_cents < min_hourly_cents as f64 {
        return Err(format!(
            "an hourly rate of {} is below Prolific's minimum of {} an hour; raise hourly_rate",
            cents(hourly_cents as u64),
            cents(min_hourly_cents)
        ));
    }
    // The minimum holds per place: a reward rounded down could fall under it.
    let reward = (hourly_cents * minutes / 60.0 - 1e-9).ceil().max(1.0) as u64;
    let per_hour = reward as f64 * 60.0 / minutes;
    if per_hour + 1e-9 < min_hourly_cents as f64 {
        return Err(format!(
            "a reward of {} for {minutes} minutes pays {} an hour, below Prolific's minimum of {} an hour",
            cents(reward),
            cents(per_hour.floor() as u64),
            cents(min_hourly_cents)
        ));
    }
    Ok(reward)
}

/// Money as written: 1234 → "12.34".
pub fn cents(c: u64) -> String {
    format!("{}.{:02}", c / 100, c % 100)
}

/// Money as written in a spec or a bonus CSV ("4.25", "30") → cents; at
/// most two decimals, above 0.
pub fn parse_money(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || format!("{t:?} is not an amount of money (like 1.50)");
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() && frac.is_empty()
        || frac.len() > 2
        || !whole.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let frac: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<2}").parse().map_err(|_| bad())? };
    let c = whole.checked_mul(100).and_then(|w| w.checked_add(frac)).ok_or_else(bad)?;
    if c == 0 {
        return Err(format!("{t:?}: the amount must be above 0"));
    }
    Ok(c)
}

/// Places to buy: the copies wanted plus the margin docs/crowd.md advises
/// (10 %, at least 3) for late finishers and returns that do not refill.
pub fn places(copies_wanted: u64, extra: Option<u64>) -> u64 {
    copies_wanted.saturating_add(extra.unwrap_or_else(|| copies_wanted.div_ceil(10).max(3)))
}

/// The most places hardneg asks Prolific for in one study: far past any
/// crowd study, and small enough that no figure of money made from it
/// overflows (a typo or a hostile total is refused, not wrapped).
pub const MAX_PLACES: u64 = 1_000_000;

/// Prolific's least `maximum_allowed_time` for an estimate: 2 + 2·t + 2·√t minutes.
pub fn prolific_min_allowed(estimated_minutes: f64) -> u32 {
    (2.0 + 2.0 * estimated_minutes + 2.0 * estimated_minutes.sqrt()).ceil() as u32
}

/// The maximum allowed time sent: at least hardneg's own time limit (so
/// Prolific never reopens a place hardneg still holds) and Prolific's least.
pub fn maximum_allowed(time_limit_minutes: u32, estimated_minutes: f64, asked: Option<u32>) -> Result<u32, String> {
    let least = prolific_min_allowed(estimated_minutes);
    match asked {
        Some(m) if m < time_limit_minutes => Err(format!(
            "maximum_allowed_minutes = {m} is under the study's own time limit of {time_limit_minutes} minutes: \
             Prolific would time participants out while hardneg still holds their places"
        )),
        Some(m) if m < least => Err(format!(
            "maximum_allowed_minutes = {m} is under Prolific's least for {estimated_minutes} expected minutes ({least})"
        )),
        Some(m) => Ok(m),
        None => Ok(time_limit_minutes.max(least)),
    }
}

/// What a place costs with Prolific's fee (`fee` a fraction of the reward).
pub fn with_fee(cents: u64, fee: f64) -> u64 {
    (cents as f64 * (1.0 + fee)).round() as u64
}

/// The money side of a study, in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    /// Approved places and paid bonuses, fee included.
    pub spent: u64,
    /// Every place bought (or taken, where late submissions hold more) and
    /// every bonus set up, fee included: what the study can cost.
    pub committed: u64,
    pub cap: Option<u64>,
}

impl Budget {
    /// Whether `more` cents of commitment stay within the cap.
    pub fn allows(&self, more: u64) -> bool {
        self.cap.is_none_or(|cap| self.committed.saturating_add(more) <= cap)
    }
}

/// How many places to add on Prolific so hardneg's missing copies can still
/// be filled: `missing` copies hardneg still needs (free places), `open`
/// the places Prolific still has to hand out. None when none are needed.
pub fn places_needed(missing: u64, open: u64) -> Option<u64> {
    (missing > open).then(|| missing - open)
}

/// Prolific's cost of a study (`GET /api/v1/studies/{id}/cost/`, a
/// StudyTotalCost): rewards and bonuses, each rewards + fees + tax, in the
/// currency's smallest unit as Prolific sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProlificCost {
    pub rewards: u64,
    pub fees: u64,
    pub tax: u64,
    pub bonuses: u64,
}

impl ProlificCost {
    /// None when the answer lacks the rewards' amount, fees or tax (each
    /// optional in the reference's `StudyCostBreakdown`): a figure left out
    /// is not a zero, and a budget cap is never held to a total missing one
    /// (a verifier published over the cap on a cost without its fees).
    /// Bonuses, which a new study has none of, count as zero when absent.
    pub fn read(cost: &serde_json::Value) -> Option<ProlificCost> {
        let amount = |part: &str, k: &str| cost[part][k]["amount"].as_f64().map(|a| a.max(0.0).round() as u64);
        let bonuses = ["rewards", "fees", "tax"].iter().filter_map(|k| amount("bonuses", k)).sum();
        Some(ProlificCost {
            rewards: amount("rewards", "rewards")?,
            fees: amount("rewards", "fees")?,
            tax: amount("rewards", "tax")?,
            bonuses,
        })
    }

    pub fn total(&self) -> u64 {
        self.rewards + self.fees + self.tax + self.bonuses
    }

    /// Fees and tax as a fraction of the rewards (what `with_fee` adds).
    pub fn fee_ratio(&self) -> Option<f64> {
        (self.rewards > 0).then(|| (self.fees + self.tax) as f64 / self.rewards as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reward_is_the_hourly_rate_times_the_time_rounded_up() {
        assert_eq!(reward_cents(12.0, 20.0, 800), Ok(400));
        assert_eq!(reward_cents(9.0, 7.0, 800), Ok(105));
        assert_eq!(reward_cents(8.0, 1.0, 800), Ok(14), "13.33 rounds up to stay at the minimum");
        assert_eq!(reward_cents(8.0, 60.0, 800), Ok(800));
        // Rounding up never goes under the minimum.
        for minutes in 1..=120 {
            let r = reward_cents(8.0, minutes as f64, 800).unwrap();
            assert!(r as f64 * 60.0 / minutes as f64 >= 800.0 - 1e-6, "{minutes} min: {r}");
        }
    }

    #[test]
    fn below_the_minimum_is_refused_with_both_figures() {
        let e = reward_cents(6.5, 20.0, 800).unwrap_err();
        assert!(e.contains("6.50") && e.contains("8.00"), "{e}");
        let e = reward_cents(7.99, 20.0, 800).unwrap_err();
        assert!(e.contains("7.99") && e.contains("8.00"), "{e}");
        assert!(reward_cents(0.0, 5.0, 800).is_err());
        // Per currency: £6.00, US$8.00; the lower before the currency is known.
        assert_eq!(min_hourly_cents(Some("GBP")), 600);
        assert_eq!(min_hourly_cents(Some("usd")), 800);
        assert_eq!(min_hourly_cents(None), 600);
        assert_eq!(reward_cents(7.0, 60.0, min_hourly_cents(Some("GBP"))), Ok(700));
        assert!(reward_cents(7.0, 60.0, min_hourly_cents(Some("USD"))).is_err());
        assert!(reward_cents(10.0, 0.0, 800).is_err());
        assert!(reward_cents(f64::NAN, 5.0, 800).is_err());
        assert_eq!(reward_cents(9.0, 10.0, 900), Ok(150), "a workspace's own minimum");
        assert!(reward_cents(8.5, 10.0, 900).unwrap_err().contains("9.00"));
    }

    #[test]
    fn money_reads_and_writes() {
        assert_eq!(cents(1234), "12.34");
        assert_eq!(cents(5), "0.05");
        assert_eq!(parse_money("4.25"), Ok(425));
        assert_eq!(parse_money("30"), Ok(3000));
        assert_eq!(parse_money(" 0.5 "), Ok(50));
        assert_eq!(parse_money(".75"), Ok(75));
        for bad in ["", ".", "1.234", "-1", "1,50", "abc", "0", "0.00", "1e3", "99999999999999999999"] {
            assert!(parse_money(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn places_add_the_margin() {
        assert_eq!(places(58, None), 64);
        assert_eq!(places(10, None), 13);
        assert_eq!(places(200, None), 220);
        assert_eq!(places(200, Some(0)), 200);
        assert_eq!(places(1, Some(5)), 6);
    }

    #[test]
    fn maximum_allowed_time_is_never_under_hardnegs_limit_or_prolifics_least() {
        assert_eq!(prolific_min_allowed(20.0), 51); // 2 + 40 + 8.94, rounded up
        assert_eq!(maximum_allowed(60, 20.0, None), Ok(60));
        assert_eq!(maximum_allowed(30, 20.0, None), Ok(51));
        assert_eq!(maximum_allowed(60, 20.0, Some(90)), Ok(90));
        assert!(maximum_allowed(60, 20.0, Some(45)).unwrap_err().contains("time limit of 60"));
        assert!(maximum_allowed(30, 20.0, Some(40)).unwrap_err().contains("least"));
    }

    #[test]
    fn budget_and_places_needed() {
        let b = Budget { spent: 100, committed: 900, cap: Some(1000) };
        assert!(b.allows(100) && !b.allows(101));
        assert!(Budget { cap: None, ..b }.allows(u64::MAX / 2));
        assert_eq!(with_fee(400, 0.333), 533);
        assert_eq!(places_needed(5, 2), Some(3));
        assert_eq!(places_needed(2, 5), None);
        assert_eq!(places_needed(3, 3), None);
    }

    #[test]
    fn prolifics_cost_is_read_in_its_smallest_unit() {
        let cost = serde_json::json!({
            "rewards": {"rewards": {"amount": 3480.0, "currency": "GBP"}, "fees": {"amount": 1160.0}, "tax": {"amount": 232.0}},
            "bonuses": {"rewards": {"amount": 100.0}, "fees": {"amount": 33.4}}
        });
        let c = ProlificCost::read(&cost).unwrap();
        assert_eq!((c.rewards, c.fees, c.tax, c.bonuses, c.total()), (3480, 1160, 232, 133, 5005));
        assert_eq!(cents(c.total()), "50.05");
        assert_eq!(with_fee(3480, c.fee_ratio().unwrap()), 3480 + 1160 + 232);
        assert_eq!(ProlificCost::read(&serde_json::json!({"error": "x"})), None);
        // Fees or tax left out (optional in the reference) are not zeros.
        let mut no_fees = cost.clone();
        no_fees["rewards"].as_object_mut().unwrap().remove("fees");
        assert_eq!(ProlificCost::read(&no_fees), None);
        let mut no_bonuses = cost;
        no_bonuses.as_object_mut().unwrap().remove("bonuses");
        assert_eq!(ProlificCost::read(&no_bonuses).map(|c| c.total()), Some(3480 + 1160 + 232));
    }
}
