//! The hook contract between the services and the survey kinds: what a
//! kind's server part may add beside its descriptor (its own report, the
//! extra files a dataset export writes for its studies, and, for a kind
//! whose items are made from its source study's answers, as HNC's
//! validation of written pairs, those items and whom they keep out), and
//! the registry's table of those parts ([`Registry`]). The services below
//! the kinds (study creation, reports) take the table as an argument; the
//! kinds' folders fill it (`kinds::REGISTRY`), so `studies` names no kind.
use crate::domain::assignment::Annotators;
use crate::domain::ids::StudyId;
use crate::domain::study::Study;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use serde::Serialize;
use sqlx::{AnyConnection, AnyPool, Transaction};
use std::any::Any;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;

/// A kind's server work, borrowing the pool (and the export directory).
pub type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServiceError>> + Send + 'a>>;

/// A kind's own statistics for a study, and how many answers they rest on.
pub type ReportFn = for<'a> fn(&'a AnyPool, StudyId) -> Fut<'a, (usize, Box<dyn Stats>)>;

/// Writes a study's extra export files into a directory; their names.
pub type ExportFn = for<'a> fn(&'a AnyPool, StudyId, &'a Path) -> Fut<'a, Vec<String>>;

/// The items a new study takes from its source study's answers, read
/// before the creating transaction (`studies::create`); None when the spec
/// names no source.
pub type FromSourceFn = for<'a> fn(&'a AnyPool, &'a Study) -> Fut<'a, Option<Box<dyn SourceItems>>>;

/// Whether the link participant with this platform id may not take the
/// study (checked on arrival, inside the arrival's transaction).
pub type KeepOutFn = for<'a> fn(&'a mut AnyConnection, &'a StudyMeta, &'a str) -> Fut<'a, bool>;

/// Items made from a source study's answers.
pub trait SourceItems: Send + Sync {
    /// Who annotates them, from the spec's annotators and source (an error names the field).
    fn annotators(&self, spec: &Annotators, source: Option<&str>) -> Result<Annotators, ServiceError>;
    /// Makes them the instances of the new dataset `name`, inside the
    /// creating transaction (a failed creation leaves no dataset).
    fn insert<'a>(&'a self, tx: &'a mut Transaction<'static, sqlx::Any>, name: &'a str) -> Fut<'a, ()>;
}

/// A kind's server part (`kinds/<kind>/server.rs`, `pub const SERVER`).
pub struct Server {
    pub report: Option<ReportFn>,
    pub export: Option<ExportFn>,
    pub from_source: Option<FromSourceFn>,
    pub keep_out: Option<KeepOutFn>,
}

impl Server {
    /// A part that adds nothing: `Server { report: Some(report), ..Server::NONE }`.
    pub const NONE: Server = Server { report: None, export: None, from_source: None, keep_out: None };
}

/// One registered kind and its server part, if it has one.
pub struct Entry {
    pub kind: SurveyKind,
    pub server: Option<&'static Server>,
}

/// The registered kinds, in the order researchers see them listed, with
/// their server parts: what the services below the kinds are handed.
pub struct Registry {
    pub entries: &'static [Entry],
    /// The same kinds as one list, for the lookups that take a slice.
    pub list: &'static [SurveyKind],
}

impl Registry {
    /// Every registered kind, in order.
    pub fn kinds(&self) -> impl Iterator<Item = SurveyKind> + '_ {
        self.entries.iter().map(|e| e.kind)
    }

    /// A kind's server part; None for a kind without one (or not registered).
    pub fn server(&self, kind: SurveyKind) -> Option<&'static Server> {
        self.entries.iter().find(|e| e.kind == kind).and_then(|e| e.server)
    }

    /// The kinds whose answers are reported as statistics.
    pub fn reports(&self) -> impl Iterator<Item = SurveyKind> + '_ {
        self.kinds().filter(|k| k.report().is_some())
    }
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
