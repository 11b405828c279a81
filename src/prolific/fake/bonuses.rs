//! Bonuses: set up from `csv_bonuses` (`<participant or submission id>,<amount>`
//! lines, amounts in the study's currency such as `1.50`), then paid.
//! Paying is NOT idempotent, as the reference warns: every call pays again,
//! and the fake records every call. Payments are made asynchronously.
use super::reply::{Call, Reply};
use super::state::*;
use super::studies::fees;
use serde_json::{json, Value};
use std::time::Instant;

/// Lines one set-up takes at most (the reference recommends 200).
pub const MAX_LINES: usize = 1_000;

/// `1.50` → 150 cents; at most two decimals, more than zero.
fn cents(amount: &str) -> Option<u64> {
    let (whole, frac) = amount.trim().split_once('.').unwrap_or((amount.trim(), ""));
    if (whole.is_empty() && frac.is_empty())
        || frac.len() > 2
        || !whole.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let frac: u64 = format!("{frac:0<2}").parse().ok()?;
    let total = whole.checked_mul(100)?.checked_add(frac)?;
    (total > 0).then_some(total)
}

fn bulk_json(b: &BulkBonus) -> Value {
    let amount: u64 = b.lines.iter().map(|l| l.cents).sum();
    let (fee, vat) = fees(amount as f64);
    json!({"id": b.id, "study": b.study_id, "amount": amount, "fees": fee, "vat": vat,
           "total_amount": amount as f64 + fee + vat})
}

pub fn set_up(c: &mut Call) -> Reply {
    let Some(study_id) = c.str_field("study_id").map(str::to_string) else {
        return Reply::invalid("study_id", "this field is required");
    };
    let Some(csv) = c.str_field("csv_bonuses").map(str::to_string) else {
        return Reply::invalid("csv_bonuses", "this field is required");
    };
    let Some(study) = c.state.studies.get(&study_id) else { return Reply::invalid("study_id", "no such study") };
    let mut lines = Vec::new();
    let mut wrong = Vec::new();
    for (n, line) in csv.lines().map(str::trim).enumerate().filter(|(_, l)| !l.is_empty()) {
        let Some((who, amount)) = line.split_once(',') else {
            return Reply::invalid("csv_bonuses", &format!("line {}: expected <id>,<amount>", n + 1));
        };
        let Some(amount) = cents(amount) else {
            return Reply::invalid("csv_bonuses", &format!("line {}: {amount:?} is not an amount such as 1.50", n + 1));
        };
        let who = who.trim();
        let sub = study
            .submissions
            .iter()
            .filter_map(|id| c.state.submissions.get(id))
            .find(|s| s.id == who || s.participant_id == who);
        match sub {
            Some(s) => lines.push(BonusLine {
                submission_id: s.id.clone(),
                participant_id: s.participant_id.clone(),
                cents: amount,
            }),
            None => wrong.push(who.to_string()),
        }
    }
    if !wrong.is_empty() {
        return Reply::invalid("csv_bonuses", &format!("took no part in study {study_id}: {}", wrong.join(", ")));
    }
    if lines.is_empty() {
        return Reply::invalid("csv_bonuses", "names no bonus");
    }
    if lines.len() > MAX_LINES {
        return Reply::invalid("csv_bonuses", &format!("at most {MAX_LINES} lines (got {})", lines.len()));
    }
    if c.state.bonuses.len() >= MAX_RECORDS {
        return Reply::error(429, "Too Many Requests", "Too many bonus set-ups.");
    }
    let bonus = BulkBonus { id: new_id(), study_id, lines, created_at: now() };
    let body = bulk_json(&bonus);
    c.state.bonus_order.push(bonus.id.clone());
    c.state.bonuses.insert(bonus.id.clone(), bonus);
    Reply::created(body)
}

/// Every call queues one more payment of the whole set-up.
pub fn pay(c: &mut Call) -> Reply {
    let id = c.param(0).to_string();
    if !c.state.bonuses.contains_key(&id) {
        return Reply::not_found("Bulk bonus payment");
    }
    if c.state.payments.len() >= MAX_RECORDS {
        return Reply::error(429, "Too Many Requests", "Too many payments.");
    }
    let due = Instant::now() + c.state.async_delay;
    c.state.payments.push(Payment { bulk_bonus_id: id.clone(), called_at: now(), paid_at: None, due });
    Reply::json(202, json!(format!("Called pay on bulk bonus payment {id}.")))
}

/// Makes the payments that are due (all when `all`): each adds its amounts to the submissions' `bonus_payments`.
pub fn run_payments(state: &mut State, all: bool) -> usize {
    let now_i = Instant::now();
    let mut done = 0;
    for i in 0..state.payments.len() {
        let p = &state.payments[i];
        if p.paid_at.is_some() || (!all && p.due > now_i) {
            continue;
        }
        let lines = state.bonuses[&p.bulk_bonus_id].lines.clone();
        for line in lines {
            if let Some(s) = state.submissions.get_mut(&line.submission_id) {
                s.bonus_payments.push(line.cents);
            }
        }
        state.payments[i].paid_at = Some(now());
        done += 1;
    }
    done
}

/// For `/_fake/state`: the set-ups, and every pay call with its amounts.
pub fn state_json(state: &State) -> (Value, Value) {
    let line = |l: &BonusLine| json!({"submission_id": l.submission_id, "participant_id": l.participant_id, "amount": l.cents});
    let setups: Vec<Value> = state
        .bonus_order
        .iter()
        .map(|id| &state.bonuses[id])
        .map(|b| {
            let mut v = bulk_json(b);
            v["lines"] = b.lines.iter().map(line).collect();
            v["created_at"] = json!(b.created_at);
            v
        })
        .collect();
    let payments: Vec<Value> = state
        .payments
        .iter()
        .map(|p| {
            json!({"bulk_bonus_id": p.bulk_bonus_id, "called_at": p.called_at, "paid_at": p.paid_at,
                   "lines": state.bonuses[&p.bulk_bonus_id].lines.iter().map(line).collect::<Vec<_>>()})
        })
        .collect();
    (Value::Array(setups), Value::Array(payments))
}

#[cfg(test)]
mod tests {
    #[test]
    fn amounts_are_read_as_money_in_cents() {
        assert_eq!(super::cents("1.50"), Some(150));
        assert_eq!(super::cents("4.25"), Some(425));
        assert_eq!(super::cents("30"), Some(3000));
        assert_eq!(super::cents(".5"), Some(50));
        for bad in ["", "0", "1.234", "-1", "1,5", "abc", "0.00"] {
            assert_eq!(super::cents(bad), None, "{bad:?}");
        }
    }
}
