//! `hardneg export` and the researchers' download (docs/export.md). The
//! outcomes and the answers they were settled on come from
//! `funnel::pipeline_of` (resolution is not redone here, and each study's
//! answers are read once); instances (with their candidates) are streamed
//! from SQLite in pages of rows (`read`) and merged with them in instance
//! order; each image file is placed once (hard link, else copy) and rows go
//! to one file per split as they come. The card's κ tables (from the
//! answers the outcomes kept) and blind audit are computed on their own
//! tasks beside the rows. Memory grows
//! with the per-item outcomes and answers (compact: `studies::votes`), the
//! audit's captions, and the images placed (32 bytes each); the reads go
//! through the export's own small-cache pool.
mod adaptive_items;
mod answers;
mod card;
mod csv;
pub mod download;
mod jsonl;
mod parquet;
mod place;
mod read;
mod reports;
mod request;
mod sink;
pub mod tar;

pub use request::ExportRequest;

use super::stage::{check_stage, included, Outcomes};
use crate::domain::category::Category;
use crate::domain::export::split::{assign_splits, RowCounts};
use crate::domain::export::{Format, ImageRef, Row, Stage, StepRecord, Vote};
use crate::domain::ids::DatasetId;
use crate::domain::resolution::ItemState;
use crate::error::ServiceError;
use crate::store::images::ImageStore;
use crate::store::pages::{AbortOnDrop, PAGE_SHIFT};
use crate::studies::outcomes::ItemOutcome;
use crate::studies::pipeline as funnel;
use futures_util::TryStreamExt;
use read::{Candidate, InstanceRow};
use sink::{io_err, RowSink};
use sqlx::AnyPool;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct ExportSummary {
    /// Rows files, in split order, relative to the export directory.
    pub files: Vec<String>,
    pub counts: RowCounts,
    /// Image files placed under `images/`.
    pub images: u64,
}

/// Exports into `out`, which must be missing or empty. `command` goes into
/// the card as the way the export was asked for. Built in
/// `.NAME.partial-PID` beside `out` and renamed once whole, so a failed or
/// killed export leaves no short dataset at `out` (as `backup` does).
pub async fn export_to_dir(
    db: &AnyPool,
    store: &ImageStore,
    req: &ExportRequest,
    out: &Path,
    command: &str,
) -> Result<ExportSummary, ServiceError> {
    check_empty(out)?;
    let name = out
        .file_name()
        .ok_or_else(|| ServiceError::Invalid(format!("{} names no directory to export into", out.display())))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let partial = parent.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    let done = export_to_dir_until(db, store, req, &partial, command, &|| false).await.and_then(|s| {
        if out.exists() {
            std::fs::remove_dir(out).map_err(|e| io_err("replacing the empty directory", out, e))?;
        }
        std::fs::rename(&partial, out).map_err(|e| io_err("renaming the finished export to", out, e))?;
        Ok(s)
    });
    if done.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    done
}

/// What an export stopped by `abandoned` fails with (only ever logged).
pub const ABANDONED: &str = "export abandoned: nobody is waiting for it";

/// [`export_to_dir`] that stops as soon as `abandoned()` says nobody wants
/// the result (checked once a row: the download's client went away).
pub async fn export_to_dir_until(
    db: &AnyPool,
    store: &ImageStore,
    req: &ExportRequest,
    out: &Path,
    command: &str,
    abandoned: &dyn Fn() -> bool,
) -> Result<ExportSummary, ServiceError> {
    export_paged(db, store, req, out, command, abandoned, PAGE_SHIFT).await
}

/// The export, reading 2^`shift` instance ids per page (tests vary it).
async fn export_paged(
    db: &AnyPool,
    store: &ImageStore,
    req: &ExportRequest,
    out: &Path,
    command: &str,
    abandoned: &dyn Fn() -> bool,
    shift: u32,
) -> Result<ExportSummary, ServiceError> {
    let started = std::time::Instant::now();
    // Where a big export's time goes (RUST_LOG=hardneg=debug), phase by phase.
    let phase = |name: &str| tracing::debug!(ms = started.elapsed().as_millis() as u64, "export: {name}");
    check_empty(out)?;
    let scan = read::scan_pool(db).await?;
    let db = &scan;
    let ids = funnel::pipeline_ids(db, crate::kinds::KINDS, &req.dataset).await?;
    let p = funnel::pipeline_of(db, crate::kinds::KINDS, ids).await?;
    phase("outcomes resolved");
    // The card's kappa goes over the answers the outcomes kept: on its own
    // task beside the rows (aborted if the export stops early).
    let mut provenance = spawn_provenance(db, &p);
    let (s3, s4) = (p.step3.as_ref().map(|(_, o)| o.as_slice()), p.step4.as_ref().map(|(_, o)| o.as_slice()));
    // The candidate a Step 3 value chose, as Step 3's kind reads its values.
    let slot_of = p.step3.as_ref().and_then(|(m, _)| m.kind.curation()).map(|c| c.chosen_slot);
    let chosen_slot = |o: &ItemOutcome| slot_of.and_then(|slot_of| o.final_value().and_then(slot_of));
    check_stage(&p, &req.dataset, req.stage)?;

    let images_dir = images_dir(out)?;
    // Split assignment needs the exported ids up front: ids and categories only.
    let included = included(db, &p, req.stage).await?;
    let assignment = assign_splits(&included, &req.splits, req.seed);
    let audit = card::start_audit(db, req, p.dataset_id, included.clone());
    let widest = widest_candidates(db, p.dataset_id, req.stage).await?;
    let names = req.split_names();
    let (files, mut sinks) = open_sinks(req, out, &images_dir, widest, &names)?;
    let mut counts = RowCounts::new(names);
    let funnel = funnel::candidates_funnel(db, p.dataset_id).await?;
    let mut images = 0u64;
    let mut placer = place::Placer::new(store, &images_dir);

    // A kept instance's row shows only the candidate Step 3 chose (-1: none,
    // which `shape` refuses as before).
    let only = (req.stage != Stage::Candidates).then(|| chosen_slots(s3, &included, &chosen_slot));
    let mut instances = read::instance_rows(db, p.dataset_id, shift, only).await?;
    phase("rows started");
    let (mut o3, mut o4) = (Outcomes::new(s3), Outcomes::new(s4));
    let mut next_included = 0;
    while let Some(inst) = instances.try_next().await? {
        if abandoned() {
            return Err(ServiceError::Internal(ABANDONED.into()));
        }
        let (out3, out4) = (o3.get_at(inst.id), o4.get_at(inst.id));
        let Some(&(_, category)) = included.get(next_included).filter(|i| i.0 == inst.id) else {
            continue;
        };
        let split = assignment[next_included];
        next_included += 1;
        // The stage's vote columns: none for candidates, Step 4's only in the final stage.
        let record = |out: Option<(usize, &ItemOutcome)>, step: usize| {
            out.filter(|_| req.stage != Stage::Candidates && (step == 0 || req.stage == Stage::Final))
                .and_then(|(i, o)| step_record(o, p.votes[step].of(i)))
        };
        let (record3, record4) = (record(out3, 0), record(out4, 1));
        let chosen = out3.map(|(_, o)| (o.final_value(), chosen_slot(o)));
        let row = shape(req.stage, inst, category, chosen, record3, record4)?;
        for img in row.images() {
            images += placer.place(img)? as u64;
        }
        counts.add(category, split);
        sinks[split].write(row)?;
    }
    // Its connection goes back before the pool closes.
    drop(instances);
    for sink in sinks {
        sink.finish()?;
    }
    phase("rows written");
    let funnel = p.funnel(funnel, &req.dataset);
    let mut summary = ExportSummary { files, counts, images };
    let provenance = (&mut provenance).await.map_err(|e| ServiceError::internal("reading the card", e))??;
    card::write(req, command, &funnel, &summary, &provenance, &out.join("README.md"))?;
    phase("card's agreement read");
    card::append_audit(audit, &out.join("README.md")).await?;
    phase("card's audit written");
    let rows_files = summary.files.len();
    summary.files.extend(answers::write(&p, req.stage, out)?);
    phase("answers written");
    summary.files.extend(reports::write_reports(db, p.dataset_id, out).await?);
    summary.files.extend(adaptive_items::write(db, p.dataset_id, out).await?);
    if req.spreadsheet_safe {
        // The other CSV files carry people's texts too (written captions, reasons, names).
        for name in summary.files[rows_files..].iter().filter(|n| n.ends_with(".csv")) {
            csv::make_spreadsheet_safe(&out.join(name))?;
        }
    }
    scan.close().await;
    Ok(summary)
}

/// An export goes into a new (or empty) directory, never over another.
fn check_empty(out: &Path) -> Result<(), ServiceError> {
    if std::fs::read_dir(out).map(|mut d| d.next().is_some()).unwrap_or(false) {
        return Err(ServiceError::Invalid(format!("{} is not empty; export into a new directory", out.display())));
    }
    Ok(())
}

/// `OUT/images`, made.
fn images_dir(out: &Path) -> Result<std::path::PathBuf, ServiceError> {
    let images_dir = out.join("images");
    std::fs::create_dir_all(&images_dir).map_err(|e| io_err("creating", &images_dir, e))?;
    Ok(images_dir)
}

/// The card's provenance (normalisation, each step's kappa over the answers
/// the outcomes kept), read on its own task beside the rows.
fn spawn_provenance(db: &AnyPool, p: &funnel::Pipeline) -> AbortOnDrop<Result<card::Provenance, ServiceError>> {
    let studies = [&p.step3, &p.step4]
        .into_iter()
        .zip(&p.votes)
        .filter_map(|(s, v)| s.as_ref().map(|(m, o)| (m.clone(), o.iter().map(|o| o.instance_id).collect(), v.clone())))
        .collect();
    AbortOnDrop(tokio::spawn(card::provenance(db.clone(), p.dataset_id, studies)))
}

/// Each included instance with the candidate slot Step 3 chose for it (-1:
/// none, which `shape` refuses).
fn chosen_slots(
    s3: Option<&[ItemOutcome]>,
    included: &[(i64, Category)],
    chosen_slot: &dyn Fn(&ItemOutcome) -> Option<usize>,
) -> std::sync::Arc<[(i64, i64)]> {
    let mut o3 = Outcomes::new(s3);
    let mut slot = |id| o3.get(id).and_then(chosen_slot).map_or(-1, |s| s as i64);
    included.iter().map(|&(id, _)| (id, slot(id))).collect()
}

/// One writer per split file.
type Sinks = Vec<Box<dyn RowSink>>;

/// One file per split (`NAME.FORMAT`), with its sink; the files' names.
fn open_sinks(
    req: &ExportRequest,
    out: &Path,
    images_dir: &Path,
    widest: usize,
    names: &[String],
) -> Result<(Vec<String>, Sinks), ServiceError> {
    let mut files = Vec::new();
    let mut sinks = Vec::new();
    for name in names {
        let file = format!("{name}.{}", req.format.as_str());
        sinks.push(open_sink(req, &out.join(&file), images_dir, widest)?);
        files.push(file);
    }
    Ok((files, sinks))
}

/// How many candidate columns the candidates stage needs (other stages have none).
async fn widest_candidates(db: &AnyPool, dataset_id: DatasetId, stage: Stage) -> Result<usize, ServiceError> {
    if stage != Stage::Candidates {
        return Ok(0);
    }
    let widest: i64 = sqlx::query_scalar(
        "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM candidates c JOIN instances i ON i.id = c.instance_id
         WHERE i.dataset_id = $1 GROUP BY c.instance_id) AS per_instance",
    )
    .bind(dataset_id)
    .fetch_one(db)
    .await?;
    Ok(widest as usize)
}

/// A settled item's record: its answers and how it was settled.
fn step_record<'a>(outcome: &ItemOutcome, votes: impl Iterator<Item = (String, &'a str)>) -> Option<StepRecord> {
    let ItemState::Final { by, .. } = &outcome.state else {
        return None;
    };
    let votes = votes.map(|(annotator, value)| Vote { annotator, value: value.to_string() }).collect();
    Some(StepRecord { votes, resolved_by: *by, posterior: outcome.posterior })
}

/// The most candidates any kind reads (a ranking's images), as the kinds
/// declare it: the candidates stage's columns.
static MOST_CANDIDATES: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
    crate::kinds::KINDS
        .iter()
        .filter_map(|k| k.spec().needs.candidates.map(|(_, most)| most))
        .fold(crate::domain::export::MAX_CANDIDATES, usize::max)
});

/// One instance's row for the stage: `chosen` is Step 3's final value and
/// the candidate slot it chose.
fn shape(
    stage: Stage,
    inst: InstanceRow,
    category: Category,
    chosen: Option<(Option<&str>, Option<usize>)>,
    step3: Option<StepRecord>,
    step4: Option<StepRecord>,
) -> Result<Row, ServiceError> {
    let InstanceRow {
        id,
        key,
        caption,
        negative_caption,
        caption_orig,
        negative_caption_orig,
        image_hash,
        image_mime,
        image_bytes,
        candidates: cands,
    } = inst;
    let image = match (image_hash, image_mime) {
        (Some(hash), Some(mime)) => Some(ImageRef { hash, mime, bytes: image_bytes.unwrap_or(0) as u64 }),
        _ => None,
    };
    let to_ref = |Candidate { hash, mime, bytes, .. }: Candidate| ImageRef { hash, mime, bytes: bytes as u64 };
    let mut row = Row {
        instance_id: id,
        key,
        caption,
        negative_caption,
        caption_orig,
        negative_caption_orig,
        category,
        image,
        negative_image: None,
        candidates: Vec::new(),
        step3: None,
        step4: None,
    };
    if stage == Stage::Candidates {
        let most = *MOST_CANDIDATES;
        if cands.len() > most {
            return Err(ServiceError::Invalid(format!(
                "instance {id} has {} candidates; the export has columns for {most}",
                cands.len()
            )));
        }
        row.candidates = cands.into_iter().map(to_ref).collect();
        return Ok(row);
    }
    let (value, slot) = chosen.unwrap_or_default();
    let image = slot.and_then(|s| cands.into_iter().find(|c| c.slot == s as i64));
    row.negative_image = Some(
        image.map(to_ref).ok_or_else(|| ServiceError::Internal(format!("instance {id} has no candidate {value:?}")))?,
    );
    (row.step3, row.step4) = (step3, step4);
    Ok(row)
}

/// Opens the rows file of one split in the requested format.
fn open_sink(
    req: &ExportRequest,
    path: &Path,
    images_dir: &Path,
    candidates: usize,
) -> Result<Box<dyn RowSink>, ServiceError> {
    let format = req.format;
    let cols = crate::domain::export::columns_for(req.stage, candidates);
    let file = std::fs::File::create(path).map_err(|e| io_err("creating", path, e))?;
    Ok(match format {
        Format::Csv => Box::new(csv::CsvSink::new(file, cols, path, req.spreadsheet_safe)?),
        Format::Jsonl => Box::new(jsonl::JsonlSink::new(file, cols, path)),
        Format::Parquet => Box::new(parquet::ParquetSink::new(file, cols, path, images_dir)?),
    })
}

#[cfg(test)]
#[path = "paged_tests.rs"]
mod paged_tests;
