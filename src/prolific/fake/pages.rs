//! Pagination as the reference describes it for list endpoints: `page`
//! (from 1) and `page_size` (default 20), answered with `results`, plus the
//! `_links` (self, next, previous, last: `{"href": url or null}`) and
//! `meta.count` that Prolific's paginated answers carry.
use super::reply::{Call, Reply};
use crate::domain::percent::query_value;
use serde_json::{json, Value};

pub const DEFAULT_PAGE_SIZE: usize = 20;
/// Larger `page_size`s are clamped to this (as Django REST framework's max_page_size does).
pub const MAX_PAGE_SIZE: usize = 500;

fn link(c: &Call, page: Option<usize>) -> Value {
    let Some(page) = page else { return json!({"href": null}) };
    let mut query: Vec<String> = c
        .query
        .iter()
        .filter(|(k, _)| k != "page")
        .map(|(k, v)| format!("{}={}", query_value(k), query_value(v)))
        .collect();
    query.push(format!("page={page}"));
    json!({"href": format!("{}{}?{}", c.base, c.path, query.join("&"))})
}

/// One page of `all`; a page past the last is 404, as Prolific answers it.
pub fn paginate(c: &Call, all: Vec<Value>, default_size: Option<usize>) -> Reply {
    let page = match c.query("page").map(str::parse::<usize>) {
        None => 1,
        Some(Ok(p)) if p >= 1 => p,
        Some(_) => return Reply::invalid("page", "must be a whole number from 1"),
    };
    let size = match c.query("page_size").map(str::parse::<usize>) {
        None => default_size.unwrap_or(DEFAULT_PAGE_SIZE),
        Some(Ok(s)) if s >= 1 => s.min(MAX_PAGE_SIZE),
        Some(_) => return Reply::invalid("page_size", "must be a whole number from 1"),
    };
    let count = all.len();
    let last = count.div_ceil(size).max(1);
    if page > last {
        return Reply::error(404, "Not Found", "Invalid page.");
    }
    let results: Vec<Value> = all.into_iter().skip((page - 1) * size).take(size).collect();
    Reply::ok(json!({
        "results": results,
        "_links": {
            "self": link(c, Some(page)),
            "next": link(c, (page < last).then_some(page + 1)),
            "previous": link(c, (page > 1).then_some(page - 1)),
            "last": link(c, Some(last)),
        },
        "meta": {"count": count},
    }))
}
