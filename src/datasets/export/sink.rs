//! The one trait every rows format implements, and the error every sink
//! reports an IO failure with.
use crate::domain::export::Row;
use crate::error::ServiceError;

/// Where one split's rows go.
pub trait RowSink: Send {
    fn write(&mut self, row: Row) -> Result<(), ServiceError>;
    fn finish(self: Box<Self>) -> Result<(), ServiceError>;
}

pub use crate::studies::hooks::io_err;
