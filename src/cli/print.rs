//! What the CLI prints: the comparison table and where an export went.
use crate::api_types::{CompareReport, ModelScores};
use crate::datasets::export::{export_to_dir, ExportRequest};
use crate::domain::metrics::Scores;
use crate::store::images::ImageStore;
use sqlx::AnyPool;
use std::path::Path;

/// `hardneg export`: prints where the files went.
pub async fn export(db: &AnyPool, store: &ImageStore, req: &ExportRequest, out: &Path) -> anyhow::Result<()> {
    let s = export_to_dir(db, store, req, out, &req.command())
        .await
        .map_err(|e| anyhow::Error::new(e).context(format!("export of {:?}", req.dataset)))?;
    let per = s.counts.per_split();
    let files: Vec<String> = s.files.iter().zip(&per).map(|(f, n)| format!("{f} ({n} rows)")).collect();
    println!(
        "exported {} rows of {:?} (stage {}) to {}: {}, {} images, README.md",
        s.counts.total(),
        req.dataset,
        req.stage.as_str(),
        out.display(),
        files.join(", "),
        s.images
    );
    Ok(())
}

pub fn compare_table(r: &CompareReport) {
    let humans: Vec<_> = r.humans.iter().map(|h| (h.title(), h.report.as_ref())).collect();
    let w = r.models.iter().map(|m| m.name.len()).chain(humans.iter().map(|(t, _)| t.len())).max().unwrap_or(0).max(24);
    println!(
        "{:<w$} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "model", "n", "I2T", "T2I", "Group", "Ipos2T", "Ineg2T", "Tpos2I", "Tneg2I"
    );
    for m in &r.models {
        println!("{}", score_line(&m.name, &m.report.overall, w, false));
    }
    for (title, report) in &humans {
        match report {
            Some(report) => println!("{}", score_line(title, &report.overall, w, false)),
            None => println!("{title:<w$} {:>6} no complete answers yet", 0),
        }
    }
    println!("{}", score_line("Random", &r.random, w, true));
    for note in r.models.iter().filter_map(ModelScores::left_out_note) {
        println!("{note}");
    }
}

/// One row of the comparison table. A row measured on no instance (a
/// model before any Step 3 answer, with `--stage step3`) has no figures:
/// "—" as on the page, where 0.00 would read as a score. Chance (`chance`)
/// counts no instance but its figures hold.
fn score_line(name: &str, s: &Scores, w: usize, chance: bool) -> String {
    let n = if s.is_empty() { "—".to_string() } else { s.n.to_string() };
    let figures = [s.i2t, s.t2i, s.group, s.ipos2t, s.ineg2t, s.tpos2i, s.tneg2i];
    let cells: Vec<String> = figures
        .iter()
        .map(|v| if s.is_empty() && !chance { format!("{:>7}", "—") } else { format!("{v:>7.2}") })
        .collect();
    format!("{name:<w$} {n:>6} {}", cells.join(" "))
}

/// Each question of a kind that asks several per item, with its intervals.
pub fn agreement_questions(r: &crate::studies::agreement::AgreementOut) {
    let show = |v: Option<f64>, why: &Option<String>, ci: Option<&Option<crate::domain::agreement::Interval>>| {
        let v = v.map_or_else(|| format!("undefined ({})", why.as_deref().unwrap_or("")), |v| format!("{v:.3}"));
        match ci {
            Some(Some(i)) => format!("{v} [{:.3}, {:.3}]", i.low, i.high),
            _ => v,
        }
    };
    for q in &r.questions {
        let b = q.bootstrap.as_ref();
        println!("question {} ({}):", q.question, q.figures.categories.join(", "));
        for (i, p) in q.figures.pairs.iter().enumerate() {
            let ci = b.and_then(|b| b.pairs.get(i)).map(|p| &p.kappa);
            println!("  {:<14} {:<14} n={:<6} kappa={}", p.a, p.b, p.n, show(p.kappa, &p.kappa_reason, ci));
        }
        println!("  mean kappa {}", show(q.figures.mean_kappa, &q.figures.mean_kappa_reason, b.map(|b| &b.mean_kappa)));
        println!(
            "  Fleiss' kappa {}",
            show(q.figures.fleiss_kappa, &q.figures.fleiss_reason, b.map(|b| &b.fleiss_kappa))
        );
        println!(
            "  Krippendorff's alpha {}",
            show(q.figures.krippendorff_alpha, &q.figures.alpha_reason, b.map(|b| &b.krippendorff_alpha))
        );
    }
}

/// The detailed part of `hardneg agreement`: bootstrap intervals, then one
/// row per annotator (against the settled outcomes, and the models' estimates).
pub fn agreement_detail(r: &crate::studies::agreement::AgreementOut) {
    use crate::domain::agreement::Interval;
    let ci = |i: &Option<Interval>| match i {
        Some(i) => format!("[{:.3}, {:.3}]", i.low, i.high),
        None => "undefined".to_string(),
    };
    if let Some(b) = &r.bootstrap {
        println!(
            "{:.0}% bootstrap intervals ({} resamples of the items, seed {}):",
            b.level * 100.0,
            b.resamples,
            b.seed
        );
        for p in &b.pairs {
            println!("  {:<14} {:<14} kappa {}", p.a, p.b, ci(&p.kappa));
        }
        println!("  mean kappa {}", ci(&b.mean_kappa));
        println!("  Fleiss' kappa {}", ci(&b.fleiss_kappa));
        println!("  Krippendorff's alpha {}", ci(&b.krippendorff_alpha));
    }
    let acc = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    println!(
        "{:<14} {:>7} {:>8} {:>10} {:>10} {:>10}",
        "annotator", "answers", "settled", "vs outcome", "DS acc", "MACE acc"
    );
    for a in &r.annotators {
        println!(
            "{:<14} {:>7} {:>8} {:>10} {:>10} {:>10}",
            a.name,
            a.answers,
            a.settled,
            acc(a.accuracy_vs_outcome),
            acc(a.dawid_skene.as_ref().map(|e| e.accuracy)),
            acc(a.mace.as_ref().map(|e| e.accuracy))
        );
    }
    for (model, why) in [("Dawid–Skene", &r.dawid_skene_reason), ("MACE", &r.mace_reason)] {
        if let Some(why) = why {
            println!("{model}: not estimated ({why})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_on_no_instance_show_dashes_not_zeros() {
        let empty = Scores::default();
        assert_eq!(score_line("clip", &empty, 8, false), format!("clip     {:>6} {}", "—", ["      —"; 7].join(" ")));
        let random = score_line("Random", &Scores::random().rounded(), 8, true);
        assert_eq!(random, format!("Random   {:>6}   25.00   25.00   16.67   50.00   50.00   50.00   50.00", "—"));
        let s = Scores { n: 4, i2t: 50.0, group: 12.5, ..Scores::default() };
        assert_eq!(score_line("m", &s, 2, false), "m       4   50.00    0.00   12.50    0.00    0.00    0.00    0.00");
    }
}
