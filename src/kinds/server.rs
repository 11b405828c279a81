//! What a kind adds to the server beside its descriptor: its own report
//! (a `Report::Own` kind) and the extra files a dataset export writes for
//! its studies. A kind lists its `server` part in `register_kinds!`;
//! `kinds::server` finds it. The shell never names a kind.
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use serde::Serialize;
use sqlx::SqlitePool;
use std::any::Any;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;

/// A kind's server work, borrowing the pool (and the export directory).
pub type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServiceError>> + Send + 'a>>;

/// A kind's own statistics for a study, and how many answers they rest on.
pub type ReportFn = for<'a> fn(&'a SqlitePool, StudyId) -> Fut<'a, (usize, Box<dyn Stats>)>;

/// Writes a study's extra export files into a directory; their names.
pub type ExportFn = for<'a> fn(&'a SqlitePool, StudyId, &'a Path) -> Fut<'a, Vec<String>>;

/// A kind's server part (`kinds/<kind>/server.rs`, `pub const SERVER`).
pub struct Server {
    pub report: Option<ReportFn>,
    pub export: Option<ExportFn>,
}

/// What every report starts with (docs/api.md, the report endpoint).
#[derive(Debug, Clone, Serialize)]
pub struct Head {
    pub study_id: StudyId,
    pub study: String,
    pub kind: String,
    pub answers: usize,
}

/// A report's statistics: its JSON body and its plain-text table.
pub trait Stats: Send + Sync + Any {
    /// The report as JSON: the head's fields, `statistic`, then the statistics' own.
    fn json(&self, head: &Head, pretty: bool) -> serde_json::Result<Vec<u8>>;
    /// Plain-text tables (CLI, export card).
    fn render(&self) -> String;
    fn as_any(&self) -> &dyn Any;
}

/// Statistics with a name: implementing this makes a type [`Stats`].
pub trait Statistic: Serialize + Send + Sync + 'static {
    /// The report's `statistic` field.
    const NAME: &'static str;
    fn render(&self) -> String;
}

#[derive(Serialize)]
struct Report<'a, T> {
    #[serde(flatten)]
    head: &'a Head,
    statistic: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

impl<T: Statistic> Stats for T {
    fn json(&self, head: &Head, pretty: bool) -> serde_json::Result<Vec<u8>> {
        let r = Report { head, statistic: T::NAME, body: self };
        if pretty {
            serde_json::to_vec_pretty(&r)
        } else {
            serde_json::to_vec(&r)
        }
    }

    fn render(&self) -> String {
        Statistic::render(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A failed file operation in an export, naming the file (`datasets::export` uses it too).
pub fn io_err(what: &str, path: &Path, e: impl Into<crate::error::BoxError>) -> ServiceError {
    ServiceError::internal(format!("{what} {}", path.display()), e)
}
