//! The export's reads: instances (with their candidates) in id order, a
//! page of rows per driver handoff (crate::store::pages). Instance pages are
//! id ranges read on their own task, so SQLite fills the next page while the
//! rows of this one are written. Each study's answers come with its outcomes
//! (`studies::votes`), read once.
use crate::domain::ids::DatasetId;
use crate::error::ServiceError;
use crate::store::pages::{in_order, parse_page, read_ahead};
use crate::store::statements::{EXPORT_PAGE, EXPORT_PAGE_OF_IDS};
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use sqlx::AnyPool;
use std::sync::Arc;

/// Page cache of each of the export's connections, in KiB (SQLite's default).
const SCAN_CACHE: &str = "PRAGMA cache_size = -2000";

/// The export's own connections to the database `db` reads: the same
/// settings with a small page cache. An export reads the whole database
/// once, so a big cache only holds pages nobody asks for again; through the
/// app's pool it filled every connection's 32 MB (136 MB of a 300k export's
/// peak) and pushed out the pages the app's own queries use.
pub(super) async fn scan_pool(db: &AnyPool) -> Result<AnyPool, ServiceError> {
    // Pages read ahead: each study's items and answers, the card's kappa,
    // then the instances and the audit's captions (crate::store::pages).
    Ok(crate::store::db::side_pool(db, SCAN_CACHE).await?)
}

/// One instance as read, from the JSON array a page gives
/// (`store::statements::EXPORT_PAGE`, the fields in its order). The category comes with the exported ids.
#[derive(serde::Deserialize)]
pub(super) struct InstanceRow {
    pub id: i64,
    pub key: String,
    pub caption: String,
    pub negative_caption: String,
    pub caption_orig: String,
    pub negative_caption_orig: String,
    pub image_hash: Option<String>,
    pub image_mime: Option<String>,
    pub image_bytes: Option<i64>,
    pub candidates: Vec<Candidate>,
}

/// A candidate image, from the JSON array `[slot, hash, mime, bytes]`.
#[derive(serde::Deserialize)]
pub(super) struct Candidate {
    pub slot: i64,
    pub hash: String,
    pub mime: String,
    pub bytes: i64,
}

/// Pages read ahead of the one being written, each on its own task (and
/// connection): reading and parsing a page costs more than writing its
/// rows, so one page ahead left the writer waiting.
const AHEAD: usize = 3;

/// A dataset's instances in id order, read a page of ids (2^shift) at a
/// time, [`AHEAD`] pages ahead. With `only` (sorted ids, each with the one
/// candidate slot its row shows), just those: a dropped instance's row and
/// the candidates nobody chose are not read at all.
pub(super) async fn instance_rows(
    db: &AnyPool,
    dataset_id: DatasetId,
    shift: u32,
    only: Option<Arc<[(i64, i64)]>>,
) -> Result<BoxStream<'static, Result<InstanceRow, ServiceError>>, ServiceError> {
    let (first, last): (Option<i64>, Option<i64>) =
        sqlx::query_as("SELECT min(id), max(id) FROM instances WHERE dataset_id = $1")
            .bind(dataset_id)
            .fetch_one(db)
            .await?;
    let from = (first.unwrap_or(0) >> shift) << shift;
    let last = last.unwrap_or(-1);
    // Each page's id range with its wanted [id, slot] pairs as a JSON
    // array; a page with none of them is skipped.
    let pages = (from..=last).step_by(1 << shift).filter_map(move |from| {
        let to = from + (1 << shift);
        let ids = match &only {
            None => None,
            Some(ids) => match &ids[ids.partition_point(|i| i.0 < from)..ids.partition_point(|i| i.0 < to)] {
                [] => return None,
                page => Some(serde_json::to_string(page).unwrap_or_default()),
            },
        };
        Some((from, to, ids))
    });
    let db = db.clone();
    let pages = read_ahead(pages, AHEAD, move |(from, to, ids)| {
        let db = db.clone();
        async move { read_page(&db, dataset_id, from, to, ids).await }
    });
    Ok(pages.map_ok(|rows| futures_util::stream::iter(rows.into_iter().map(Ok))).try_flatten().boxed())
}

/// The instances with ids in `from..to` with all their candidates, or, when
/// `ids` (a JSON array of [id, slot]) is given, those instances with the
/// candidate of that slot only (`store::statements::EXPORT_PAGE`).
async fn read_page(
    db: &AnyPool,
    dataset_id: DatasetId,
    from: i64,
    to: i64,
    ids: Option<String>,
) -> Result<Vec<InstanceRow>, ServiceError> {
    let query = match &ids {
        None => sqlx::query_scalar(EXPORT_PAGE.on(db)).bind(dataset_id).bind(from).bind(to),
        Some(ids) => sqlx::query_scalar(EXPORT_PAGE_OF_IDS.on(db)).bind(ids).bind(dataset_id),
    };
    let page: Option<String> = query.fetch_one(db).await?;
    // Rows by id and candidates by slot, as the scans give them (checked, crate::store::pages).
    let mut rows: Vec<InstanceRow> = page.as_deref().map(parse_page).transpose()?.unwrap_or_default();
    in_order(&mut rows, |a, b| a.id.cmp(&b.id));
    rows.iter_mut().for_each(|r| in_order(&mut r.candidates, |a, b| a.slot.cmp(&b.slot)));
    Ok(rows)
}
