//! What the CLI prints: the comparison table and where an export went.
use crate::api_types::CompareReport;
use crate::datasets::export::{export_to_dir, ExportRequest};
use crate::store::images::ImageStore;
use sqlx::SqlitePool;
use std::path::Path;

/// `hardneg export`: prints where the files went.
pub async fn export(db: &SqlitePool, store: &ImageStore, req: &ExportRequest, out: &Path) -> anyhow::Result<()> {
    let s = export_to_dir(db, store, req, out, &req.command())
        .await
        .map_err(|e| anyhow::anyhow!("export of {:?}: {e}", req.dataset))?;
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
    let row = |name: &str, s: &crate::domain::metrics::Scores| {
        println!(
            "{:<w$} {:>6} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2}",
            name, s.n, s.i2t, s.t2i, s.group, s.ipos2t, s.ineg2t, s.tpos2i, s.tneg2i
        )
    };
    for m in &r.models {
        row(&m.name, &m.report.overall);
    }
    for (title, report) in &humans {
        match report {
            Some(report) => row(title, &report.overall),
            None => println!("{title:<w$} {:>6} no complete answers yet", 0),
        }
    }
    row("Random", &r.random);
}
