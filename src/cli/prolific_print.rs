//! What `hardneg prolific …` prints: a draft's figures, Prolific's cost and
//! a study's status.
use crate::domain::prolific::money::{cents, ProlificCost};
use crate::prolific::{publish, status};

pub(super) fn print_figures(plan: &publish::Plan) {
    println!("reward:     {} a place", cents(plan.reward_cents));
    println!("places:     {}", plan.places);
    println!(
        "estimated:  {} with link.platform_fee (Prolific's own cost is checked before publishing)",
        cents(plan.estimated_cents)
    );
    if let Some(cap) = plan.budget_cap_cents {
        println!("budget cap: {}", cents(cap));
    }
}

pub(super) fn cost_line(cost: &serde_json::Value) -> String {
    let currency = cost["rewards"]["rewards"]["currency"].as_str().unwrap_or("");
    match ProlificCost::read(cost) {
        Some(c) => format!(
            "{} {currency} (rewards {} + fees {} + tax {}{})",
            cents(c.total()),
            cents(c.rewards),
            cents(c.fees),
            cents(c.tax),
            if c.bonuses > 0 { format!(" + bonuses {}", cents(c.bonuses)) } else { String::new() }
        ),
        None => cost.to_string(),
    }
}

pub(super) fn print_status(s: &status::ProlificStatus) {
    println!("Prolific study:  {} ({})", s.prolific_id.as_deref().unwrap_or("not made yet"), s.internal_name);
    println!("status:          {}", s.status.as_deref().unwrap_or("-"));
    println!("places:          {} on Prolific, reward {}", s.places, cents(s.reward_cents.max(0) as u64));
    println!("Prolific counts: {}", s.counts);
    println!(
        "hardneg:         {} copies wanted: {} completed, {} working, {} free",
        s.hardneg_places, s.hardneg_completed, s.hardneg_working, s.hardneg_free
    );
    let cap = s.budget.cap.map(cents).unwrap_or_else(|| "none".into());
    println!("budget:          spent {}, committed {}, cap {cap}", cents(s.budget.spent), cents(s.budget.committed));
    let more = |n: u64| if n == 1 { "1 more place".to_string() } else { format!("{n} more places") };
    if let (Some(n), Some(why)) = (s.propose_more_places, &s.over_cap) {
        println!(
            "proposal:        none: the budget cap stops this study (hardneg needs {}, but {why}); \
             the items still collecting will get no more answers",
            more(n)
        );
    } else if let (Some(n), Some(total)) = (s.propose_more_places, s.propose_total) {
        // The total counts from the places handed out, which late
        // submissions can take past the study's total: it may add more than n.
        let past = (total as i64 - s.places.max(0) - n as i64).max(0);
        let late = match past {
            0 => String::new(),
            1 => ", and a late submission took 1 place past the total".to_string(),
            k => format!(", and late submissions took {k} places past the total"),
        };
        println!(
            "proposal:        raise the places from {} to {total} (hardneg needs {} than Prolific has left{late}): \
             hardneg prolific places {} {total}",
            s.places,
            more(n),
            s.study_id
        );
    }
    let (planned, set_up, paid, paid_cents) = s.bonuses;
    println!("bonuses:         {planned} planned, {set_up} set up, {paid} paid ({})", cents(paid_cents.max(0) as u64));
    println!("mismatches:      {}", s.mismatches.len());
    for m in &s.mismatches {
        println!(
            "  {}: participant {} submission {} ({} / {}): {}",
            m.kind.words(),
            m.participant.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
            m.submission.as_deref().unwrap_or("-"),
            m.prolific_status.as_deref().unwrap_or("-"),
            m.hardneg_status.as_deref().unwrap_or("-"),
            m.advice
        );
    }
    for l in &s.outbox {
        println!("{}", l.sentence());
    }
}
