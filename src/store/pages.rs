//! Reading many rows without the SQLite driver's per-row handoff: sqlx
//! hands each row from its worker thread to the async task on its own (a
//! channel send and a wake-up per row), which cost about half of an
//! export. Here SQLite packs a page of rows into one JSON array
//! (`json_group_array(json_array(…))`), so a page of a thousand rows
//! crosses over once.
//!
//! A page is a range of the sort key read on its own ([`range_pages`]): an
//! indexed range comes in key order with no sort, where a `GROUP BY` on a
//! bucket of the key sorted every row through a temporary B-tree and an
//! `ORDER BY` inside the aggregate sorted them again. SQLite hands an
//! aggregate its rows in the scan's order but does not promise to, so each
//! page's order is checked as it arrives and sorted only when it is out of
//! order ([`JsonPages::ordered_by`]).
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use sqlx::AnyPool;
use std::cmp::Ordering;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Keys per page: 2^PAGE_SHIFT.
pub const PAGE_SHIFT: u32 = 10;

/// The rows of a stream of JSON-array pages, one at a time, in page order.
pub struct JsonPages<'a, T> {
    pages: BoxStream<'a, sqlx::Result<String>>,
    rows: std::vec::IntoIter<T>,
    order: Option<fn(&T, &T) -> Ordering>,
}

impl<'a, T: DeserializeOwned> JsonPages<'a, T> {
    pub fn new(pages: BoxStream<'a, sqlx::Result<String>>) -> Self {
        JsonPages { pages, rows: Vec::new().into_iter(), order: None }
    }

    /// Rows of a page come out in `cmp`'s order (pages come in key order).
    pub fn ordered_by(mut self, cmp: fn(&T, &T) -> Ordering) -> Self {
        self.order = Some(cmp);
        self
    }

    pub async fn try_next(&mut self) -> sqlx::Result<Option<T>> {
        loop {
            if let Some(row) = self.rows.next() {
                return Ok(Some(row));
            }
            let Some(page) = self.pages.try_next().await? else {
                return Ok(None);
            };
            let mut rows = parse_page(&page)?;
            if let Some(cmp) = self.order {
                in_order(&mut rows, cmp);
            }
            self.rows = rows.into_iter();
        }
    }
}

/// Sorts `rows` by `cmp` unless they already are (stable: equal rows keep
/// their order).
pub fn in_order<T>(rows: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    if !rows.is_sorted_by(|a, b| cmp(a, b) != Ordering::Greater) {
        rows.sort_by(cmp);
    }
}

/// One page's rows; a page SQLite wrote that does not parse is a decode error.
pub fn parse_page<T: DeserializeOwned>(page: &str) -> sqlx::Result<Vec<T>> {
    serde_json::from_str(page).map_err(|e| sqlx::Error::Decode(e.into()))
}

/// Where the pages over the sorted keys `keys` start: every 2^`shift`-th key.
pub fn page_starts(keys: &[i64], shift: u32) -> Vec<i64> {
    keys.iter().step_by(1 << shift).skip(1).copied().collect()
}

/// Every row of `sql` in one handoff, ordered by their first column: `sql`
/// returns one JSON array as a page does (`json_group_array(json_array(…))`
/// over a subquery, see [`super::dialect::pages`]) and takes `parent` as
/// `$1`. For a column or a few per parent row, where one row at a time
/// across the driver's thread cost more than the read (a 300k-item study's ids).
pub async fn all_rows<'c, T, E>(db: E, sql: &'static str, parent: i64) -> sqlx::Result<Vec<T>>
where
    T: DeserializeOwned + KeyFirst,
    E: sqlx::AnyExecutor<'c> + super::dialect::Backend,
{
    let sql = super::dialect::pages(&db, sql);
    let page: Option<String> = sqlx::query_scalar(&sql).bind(parent).fetch_one(db).await?;
    let mut rows: Vec<T> = parse_page(page.as_deref().unwrap_or("[]"))?;
    in_order(&mut rows, |a, b| a.key().cmp(&b.key()));
    Ok(rows)
}

/// A JSON string in a page, borrowed from it when it has no escapes: rows
/// parsed into something smaller need not own their strings first.
pub struct Text<'a>(pub std::borrow::Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Text<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(v.to_owned().into()))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// A row whose first column is its key.
pub trait KeyFirst {
    fn key(&self) -> i64;
}

impl KeyFirst for (i64,) {
    fn key(&self) -> i64 {
        self.0
    }
}

impl<B> KeyFirst for (i64, B) {
    fn key(&self) -> i64 {
        self.0
    }
}

impl<B, C> KeyFirst for (i64, B, C) {
    fn key(&self) -> i64 {
        self.0
    }
}

/// The JSON pages of `sql` over consecutive ranges of a key: `sql` takes a
/// parent id (?1, a study or a dataset) and the range's first (?2) and last
/// (?3) key, both inclusive, and returns one JSON array. The ranges start at
/// `starts` (sorted, see [`page_starts`]) and cover every key, so every row
/// of the parent is read once whatever keys lie between. The next page is
/// read while this one is used.
pub fn range_pages(
    db: &AnyPool,
    sql: &'static str,
    parent: i64,
    starts: Vec<i64>,
) -> BoxStream<'static, sqlx::Result<String>> {
    let firsts = std::iter::once(i64::MIN).chain(starts.clone());
    let lasts = starts.into_iter().map(|s| s - 1).chain(std::iter::once(i64::MAX));
    let db = db.clone();
    read_ahead(firsts.zip(lasts), 1, move |(first, last)| {
        let db = db.clone();
        async move {
            let sql = super::dialect::pages(&db, sql);
            let page: Option<String> =
                sqlx::query_scalar(&sql).bind(parent).bind(first).bind(last).fetch_one(&db).await?;
            Ok(page.unwrap_or_else(|| "[]".into()))
        }
    })
}

/// The JSON pages of `sql` over the sorted keys `keys`, 2^`shift` a page:
/// `sql` takes a parent id (?1) and the page's keys as a JSON array (?2).
/// For a few rows out of many: only those are read.
pub fn key_pages(
    db: &AnyPool,
    sql: &'static str,
    parent: i64,
    keys: &[i64],
    shift: u32,
) -> BoxStream<'static, sqlx::Result<String>> {
    let pages: Vec<String> =
        keys.chunks(1 << shift).map(|page| serde_json::to_string(page).unwrap_or_default()).collect();
    let db = db.clone();
    read_ahead(pages, 1, move |page| {
        let db = db.clone();
        async move {
            let sql = super::dialect::pages(&db, sql);
            let page: Option<String> = sqlx::query_scalar(&sql).bind(parent).bind(page).fetch_one(&db).await?;
            Ok(page.unwrap_or_else(|| "[]".into()))
        }
    })
}

/// `read` of each argument, in order, each on its own task: `ahead` more
/// are being read while the caller works through one. Reads still under
/// way when the stream is dropped are stopped.
pub fn read_ahead<A, T, E, F, Fut>(
    args: impl IntoIterator<Item = A, IntoIter: Send + 'static>,
    ahead: usize,
    read: F,
) -> BoxStream<'static, Result<T, E>>
where
    A: Send + 'static,
    T: Send + 'static,
    E: From<sqlx::Error> + Send + 'static,
    F: Fn(A) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
{
    futures_util::stream::iter(args)
        .map(move |arg| AbortOnDrop(tokio::spawn(read(arg))))
        .buffered(ahead + 1)
        .map(|joined| joined.map_err(|e| sqlx::Error::Protocol(format!("reading a page: {e}")))?)
        .boxed()
}

/// A task that is stopped when its handle is dropped: a read or a
/// computation nobody waits for any more (an export failed or was
/// abandoned) stops with it.
pub struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_every_page_size_keys() {
        let keys: Vec<i64> = (10..20).collect();
        assert_eq!(page_starts(&keys, 2), vec![14, 18]);
        assert_eq!(page_starts(&keys[..4], 2), Vec::<i64>::new());
        assert_eq!(page_starts(&[], 2), Vec::<i64>::new());
    }

    #[test]
    fn out_of_order_pages_are_sorted_stably() {
        let mut rows = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
        in_order(&mut rows, |a, b| a.0.cmp(&b.0));
        assert_eq!(rows, vec![(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
        let mut sorted = vec![(1, 'z'), (1, 'a'), (3, 'b')];
        in_order(&mut sorted, |a, b| a.0.cmp(&b.0));
        assert_eq!(sorted, vec![(1, 'z'), (1, 'a'), (3, 'b')], "equal keys keep their order");
    }

    #[tokio::test]
    async fn read_ahead_keeps_order_and_stops_reads_nobody_waits_for() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use std::sync::Arc;
        // Counts reads started and reads ended (finished or stopped).
        struct Ended(Arc<AtomicUsize>);
        impl Drop for Ended {
            fn drop(&mut self) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        let (started, ended) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (s, e) = (started.clone(), ended.clone());
        // Later pages finish first; every page after the second never finishes.
        let mut pages = read_ahead(0..10u64, 2, move |i| {
            s.fetch_add(1, SeqCst);
            let guard = Ended(e.clone());
            async move {
                let _guard = guard;
                match i {
                    0 => tokio::time::sleep(std::time::Duration::from_millis(30)).await,
                    1 => {}
                    _ => std::future::pending().await,
                }
                Ok::<_, sqlx::Error>(i)
            }
        });
        assert_eq!(pages.try_next().await.unwrap(), Some(0));
        assert_eq!(pages.try_next().await.unwrap(), Some(1));
        // Two reads ahead of the caller, no more.
        assert_eq!(started.load(SeqCst), 4);
        drop(pages);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(ended.load(SeqCst), 4, "the two reads under way were stopped");
    }

    #[tokio::test]
    async fn range_pages_read_every_row_once_in_order() {
        // A file, so that the pages read side by side on two connections see one database.
        let dir = tempfile::tempdir().unwrap();
        let db = AnyPool::connect(&format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display())).await.unwrap();
        sqlx::query("CREATE TABLE t (parent INTEGER, k INTEGER, v TEXT, PRIMARY KEY (parent, k))")
            .execute(&db)
            .await
            .unwrap();
        // Sparse keys, a key below every page start, and another parent's rows.
        for (parent, k) in [(1, -5), (1, 3), (1, 4), (1, 90), (1, 91), (1, 1_000_000), (2, 4)] {
            sqlx::query("INSERT INTO t VALUES ($1, $2, $3)")
                .bind(parent)
                .bind(k)
                .bind(format!("{parent}:{k}"))
                .execute(&db)
                .await
                .unwrap();
        }
        const SQL: &str = "SELECT json_group_array(json_array(k, v)) FROM t WHERE parent = $1 AND k BETWEEN $2 AND $3";
        for starts in [vec![], vec![4], vec![4, 91], vec![0, 90, 500]] {
            let mut pages = JsonPages::<(i64, String)>::new(range_pages(&db, SQL, 1, starts.clone()))
                .ordered_by(|a, b| a.0.cmp(&b.0));
            let mut keys = Vec::new();
            while let Some((k, v)) = pages.try_next().await.unwrap() {
                assert_eq!(v, format!("1:{k}"));
                keys.push(k);
            }
            assert_eq!(keys, vec![-5, 3, 4, 90, 91, 1_000_000], "pages starting at {starts:?}");
        }
        // One handoff for every row of a parent, put in key order whatever
        // order the aggregate saw them in; none is an empty list.
        const ALL: &str = "SELECT json_group_array(json_array(k, v)) FROM (
                             SELECT k, v FROM t WHERE parent = $1 ORDER BY k DESC) AS r";
        let all: Vec<(i64, String)> = all_rows(&db, ALL, 1).await.unwrap();
        let keys: Vec<i64> = all.iter().map(|r| r.0).collect();
        assert_eq!(keys, vec![-5, 3, 4, 90, 91, 1_000_000]);
        assert_eq!(all[1].1, "1:3");
        assert!(all_rows::<(i64, String), _>(&db, ALL, 3).await.unwrap().is_empty());
        let mut conn = db.acquire().await.unwrap();
        let on_conn: Vec<(i64,)> = all_rows(
            &mut *conn,
            "SELECT json_group_array(json_array(k)) FROM (SELECT k FROM t WHERE parent = $1) AS r",
            2,
        )
        .await
        .unwrap();
        assert_eq!(on_conn, vec![(4,)]);
        const BY_KEY: &str =
            "SELECT json_group_array(json_array(k, v)) FROM json_each($2) j JOIN t ON t.parent = $1 AND t.k = j.value";
        for shift in [0, 1, 5] {
            let mut pages = JsonPages::<(i64, String)>::new(key_pages(&db, BY_KEY, 1, &[-5, 4, 91, 92], shift));
            let mut keys = Vec::new();
            while let Some((k, _)) = pages.try_next().await.unwrap() {
                keys.push(k);
            }
            assert_eq!(keys, vec![-5, 4, 91], "pages of 2^{shift} keys");
        }
    }
}
