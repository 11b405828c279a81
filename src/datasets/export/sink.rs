//! The one trait every rows format implements, and the error every sink
//! reports an IO failure with.
use crate::domain::export::Row;
use crate::error::ServiceError;
use std::path::Path;

/// Where one split's rows go.
pub trait RowSink: Send {
    fn write(&mut self, row: Row) -> Result<(), ServiceError>;
    fn finish(self: Box<Self>) -> Result<(), ServiceError>;
}

pub fn io_err(what: &str, path: &Path, e: impl Into<crate::error::BoxError>) -> ServiceError {
    ServiceError::internal(format!("{what} {}", path.display()), e)
}
