//! `hardneg study link`, `hardneg study close` and `hardneg participants`:
//! a link study from the command line (docs/crowd.md).
use crate::crowd::{self, LinkInfo};
use crate::domain::ids::StudyId;
use anyhow::Context;
use sqlx::AnyPool;

/// Prints the link to paste into Prolific, with its placeholders, and the codes.
pub async fn link(db: &AnyPool, study: StudyId, rotate: bool, base_url: &str) -> anyhow::Result<()> {
    let info = if rotate { crowd::rotate(db, study).await } else { crowd::link(db, study).await }?;
    print_link(&info, base_url);
    Ok(())
}

fn print_link(info: &LinkInfo, base_url: &str) {
    let base = base_url.trim_end_matches('/');
    println!("study URL:       {base}{}?{}", info.path, info.prolific_query);
    println!("completion code: {}", info.completion_code);
    println!("completion URL:  {}", info.completion_url);
    if let Some(full) = &info.full_code {
        println!("full code:       {full}");
    }
    let minutes = info.time_limit_minutes;
    println!("time limit:      {minutes} minute{}", if minutes == 1 { "" } else { "s" });
    // Returns and time-outs refill by themselves; late finishers still use a place (docs/crowd.md).
    let margin = (info.places as u64).div_ceil(10).max(3);
    println!(
        "places:          {} copies wanted (buy about {} on Prolific: +{margin} for late finishers)",
        info.places,
        info.places as u64 + margin
    );
    println!("open:            {}", if info.open { "yes" } else { "no (closed)" });
}

pub async fn close(db: &AnyPool, study: StudyId) -> anyhow::Result<()> {
    let info = crowd::close(db, study).await?;
    println!("study {} is closed to new arrivals; participants with a place may still finish", info.study_id);
    Ok(())
}

/// One line per participant (number, state, progress; PIDs on request), as a table or CSV.
pub async fn participants(db: &AnyPool, study: StudyId, csv: bool, with_platform_ids: bool) -> anyhow::Result<()> {
    let rows = crowd::participants(db, study, with_platform_ids).await?;
    let mut header = vec![
        "number",
        "username",
        "bundle",
        "state",
        "done",
        "total",
        "arrived_at",
        "ended_at",
        "gold_right",
        "gold_total",
        "checks_failed",
        "comprehension_attempts",
        "screened_out_reason",
    ];
    if with_platform_ids {
        header.extend(["prolific_pid", "platform_study", "platform_session"]);
    }
    let lines = rows.iter().map(|r| {
        let mut cells = vec![
            r.number.to_string(),
            r.username.clone(),
            r.bundle.map(|b| b.to_string()).unwrap_or_default(),
            r.status.clone(),
            r.done.to_string(),
            r.total.to_string(),
            r.arrived_at.to_string(),
            r.ended_at.map(|t| t.to_string()).unwrap_or_default(),
            r.gold_right.to_string(),
            r.gold_total.to_string(),
            r.checks_failed.to_string(),
            r.comprehension_attempts.to_string(),
            r.screened_out_reason.clone().unwrap_or_default(),
        ];
        if with_platform_ids {
            for v in [&r.platform_pid, &r.platform_study, &r.platform_session] {
                cells.push(v.clone().unwrap_or_default());
            }
        }
        cells
    });
    if csv {
        let mut w = csv::Writer::from_writer(std::io::stdout());
        w.write_record(&header)?;
        for cells in lines {
            w.write_record(&cells)?;
        }
        w.flush().context("writing CSV")?;
    } else {
        // Each column as wide as its widest cell, two spaces apart.
        let lines: Vec<Vec<String>> = lines.collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|i| lines.iter().map(|c| c[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
            .collect();
        let row = |cells: &mut dyn Iterator<Item = &str>| {
            let padded: Vec<String> = cells.zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            println!("{}", padded.join("  ").trim_end());
        };
        row(&mut header.iter().copied());
        for cells in &lines {
            row(&mut cells.iter().map(String::as_str));
        }
    }
    Ok(())
}
