//! Reading many rows without the SQLite driver's per-row handoff: sqlx
//! hands each row from its worker thread to the async task on its own (a
//! channel send and a wake-up per row), which cost about half of an
//! export. Here SQLite packs a page of rows into one JSON array
//! (`json_group_array(json_array(…) ORDER BY …)`, grouped by a bucket of
//! the sort key), so a page of a thousand rows crosses over once.
use futures_util::stream::BoxStream;
use futures_util::TryStreamExt;
use serde::de::DeserializeOwned;

/// `GROUP BY` / `ORDER BY` bucket of a query's sort key (an id): ids per
/// page = 2^PAGE_SHIFT. A bucket is a range of ids, so the rows of one id
/// never straddle two pages.
pub const PAGE_SHIFT: u32 = 10;

/// The rows of a stream of JSON-array pages, one at a time, in page order.
pub struct JsonPages<'a, T> {
    pages: BoxStream<'a, sqlx::Result<String>>,
    rows: std::vec::IntoIter<T>,
}

impl<'a, T: DeserializeOwned> JsonPages<'a, T> {
    pub fn new(pages: BoxStream<'a, sqlx::Result<String>>) -> Self {
        JsonPages { pages, rows: Vec::new().into_iter() }
    }

    pub async fn try_next(&mut self) -> sqlx::Result<Option<T>> {
        loop {
            if let Some(row) = self.rows.next() {
                return Ok(Some(row));
            }
            let Some(page) = self.pages.try_next().await? else {
                return Ok(None);
            };
            self.rows = parse_page(&page)?.into_iter();
        }
    }
}

/// One page's rows; a page SQLite wrote that does not parse is a decode error.
pub fn parse_page<T: DeserializeOwned>(page: &str) -> sqlx::Result<Vec<T>> {
    serde_json::from_str(page).map_err(|e| sqlx::Error::Decode(e.into()))
}
