//! `hardneg study status`, `hardneg participants --approve-list` and
//! `--discard`: monitoring a link study from the command line (docs/crowd.md).
use crate::crowd;
use crate::domain::crowd::figures::{duration_text as duration, Dashboard};
use crate::domain::ids::{ParticipantId, StudyId};
use anyhow::Context;
use sqlx::AnyPool;

pub async fn status(db: &AnyPool, study: StudyId, json: bool) -> anyhow::Result<()> {
    let d = crowd::dashboard(db, study, crate::store::clock::Clock::from_env().now()).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print_status(&d);
    }
    Ok(())
}

fn print_status(d: &Dashboard) {
    let p = &d.participants;
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    println!(
        "places:       {} in {} bundles: {} free, {} leased, {} completed",
        d.places, d.bundles, d.free, d.leased, d.completed
    );
    println!(
        "participants: {} started, {} working, {} completed, {} extra, {} timed out, {} returned, {} screened out, {} discarded",
        p.started, p.working, p.completed, p.extra, p.timed_out, p.returned, p.screened_out, p.discarded
    );
    println!("answers:      {} ({} per minute)", d.answers, or_dash(d.answers_per_minute.map(|r| format!("{r:.1}"))));
    // Adaptive overlap's later rounds are not in any bundle yet: a floor.
    let floor = d.adaptive.as_ref().is_some_and(|a| a.stopped.collecting > 0);
    let (at_least, later) = if floor { ("at least ", " (follow-up rounds will add more)") } else { ("", "") };
    println!(
        "remaining:    {} answers, ETA {at_least}{}{later}",
        d.remaining_answers,
        or_dash(d.eta_secs.map(duration))
    );
    println!(
        "time:         median {} per item, {} per bundle",
        or_dash(d.median_secs_per_item.map(|s| format!("{s:.1} s"))),
        or_dash(d.median_bundle_secs.map(duration))
    );
    match &d.cost {
        Some(c) => println!(
            "cost:         US${:.2} per place (US${:.2}/h with the fee): estimated US${:.2} for {} places with the extra and discarded copies, spent US${:.2}",
            c.per_place, c.per_hour, c.estimated_total, d.places, c.spent
        ),
        None => println!("cost:         - (no bundle finished yet)"),
    }
}

/// The approve list as CSV on standard output.
pub async fn approve_list(db: &AnyPool, study: StudyId) -> anyhow::Result<()> {
    let rows = crowd::approve_list(db, crate::kinds::KINDS, study).await?;
    let csv = crowd::approve::to_csv(&rows)?;
    use std::io::Write;
    std::io::stdout().write_all(&csv).context("writing the approve list")?;
    Ok(())
}

pub async fn discard(db: &AnyPool, study: StudyId, number: ParticipantId) -> anyhow::Result<()> {
    crowd::discard(db, study, number).await?;
    println!(
        "participant {number} of study {study} is discarded: its answers stay stored but no longer count, \
         and its bundle goes to a new participant"
    );
    Ok(())
}
