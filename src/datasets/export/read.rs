//! The export's reads: instances (with their candidates) in id order, a
//! page of rows per driver handoff (crate::store::pages). Instance pages are
//! id ranges read on their own task, so SQLite fills the next page while the
//! rows of this one are written. Each study's answers come with its outcomes
//! (`studies::votes`), read once.
use crate::domain::ids::DatasetId;
use crate::error::ServiceError;
use crate::store::pages::{in_order, parse_page, read_ahead};
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

/// One instance as read, from the JSON array `instance_json!` builds (the
/// fields in its order). The category comes with the exported ids.
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

/// One instance as a JSON array (`InstanceRow`) over `i` (instances) and
/// `img` (its image), its candidates where `c` matches the condition given.
macro_rules! instance_json {
    ($candidates:literal) => {
        concat!(
            "json_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                json((SELECT json_group_array(json_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image WHERE c.instance_id = i.id",
            $candidates,
            ")))"
        )
    };
}

/// [`instance_json!`] in PostgreSQL's JSON functions.
macro_rules! instance_json_pg {
    ($candidates:literal) => {
        concat!(
            "json_build_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                coalesce((SELECT json_agg(json_build_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image WHERE c.instance_id = i.id",
            $candidates,
            "), '[]'::json))"
        )
    };
}

/// The instances with ids in `from..to` with all their candidates, or, when
/// `ids` (a JSON array of [id, slot]) is given, those instances with the
/// candidate of that slot only. `+dataset_id`: walk the id range, not the
/// dataset's index (which would sort the whole dataset per page).
async fn read_page(
    db: &AnyPool,
    dataset_id: DatasetId,
    from: i64,
    to: i64,
    ids: Option<String>,
) -> Result<Vec<InstanceRow>, ServiceError> {
    let query = match &ids {
        None => sqlx::query_scalar(crate::dialect!(db,
            sqlite: concat!(
                "SELECT json_group_array(",
                instance_json!(""),
                ") FROM instances i LEFT JOIN images img ON img.hash = i.positive_image
                 WHERE +i.dataset_id = $1 AND i.id >= $2 AND i.id < $3"
            ),
            postgres: concat!(
                "SELECT json_agg(",
                instance_json_pg!(""),
                ")::text FROM instances i LEFT JOIN images img ON img.hash = i.positive_image
                 WHERE i.dataset_id = $1 AND i.id >= $2 AND i.id < $3"
            ),
        ))
        .bind(dataset_id)
        .bind(from)
        .bind(to),
        Some(ids) => sqlx::query_scalar(crate::dialect!(db,
            sqlite: concat!(
                "SELECT json_group_array(",
                instance_json!(" AND c.slot = j.value ->> 1"),
                ") FROM json_each($1) j JOIN instances i ON i.id = j.value ->> 0
                 LEFT JOIN images img ON img.hash = i.positive_image WHERE +i.dataset_id = $2"
            ),
            postgres: concat!(
                "SELECT json_agg(",
                instance_json_pg!(" AND c.slot = (j->>1)::bigint"),
                ")::text FROM json_array_elements($1::json) AS e(j) JOIN instances i ON i.id = (j->>0)::bigint
                 LEFT JOIN images img ON img.hash = i.positive_image WHERE i.dataset_id = $2"
            ),
        ))
        .bind(ids)
        .bind(dataset_id),
    };
    let page: Option<String> = query.fetch_one(db).await?;
    // Rows by id and candidates by slot, as the scans give them (checked, crate::store::pages).
    let mut rows: Vec<InstanceRow> = page.as_deref().map(parse_page).transpose()?.unwrap_or_default();
    in_order(&mut rows, |a, b| a.id.cmp(&b.id));
    rows.iter_mut().for_each(|r| in_order(&mut r.candidates, |a, b| a.slot.cmp(&b.slot)));
    Ok(rows)
}
