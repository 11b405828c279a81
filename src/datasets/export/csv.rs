//! CSV rows, written line by line.
use super::sink::{io_err, RowSink};
use crate::domain::export::{Column, Row};
use crate::error::ServiceError;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

pub struct CsvSink {
    w: csv::Writer<BufWriter<File>>,
    cols: Vec<Column>,
    path: PathBuf,
    spreadsheet_safe: bool,
}

impl CsvSink {
    pub fn new(file: File, cols: Vec<Column>, path: &Path, spreadsheet_safe: bool) -> Result<CsvSink, ServiceError> {
        let mut w = csv::Writer::from_writer(BufWriter::new(file));
        w.write_record(cols.iter().map(|c| c.name().into_owned())).map_err(|e| io_err("writing", path, e))?;
        Ok(CsvSink { w, cols, path: path.to_path_buf(), spreadsheet_safe })
    }
}

impl RowSink for CsvSink {
    fn write(&mut self, row: Row) -> Result<(), ServiceError> {
        for c in &self.cols {
            let cell = row.cell(*c);
            let text = cell.text();
            let text = text.as_deref().unwrap_or("");
            let field = if self.spreadsheet_safe { spreadsheet_safe(text) } else { text.into() };
            self.w.write_field(&*field).map_err(|e| io_err("writing", &self.path, e))?;
        }
        self.w.write_record(None::<&[u8]>).map_err(|e| io_err("writing", &self.path, e))
    }

    fn finish(self: Box<Self>) -> Result<(), ServiceError> {
        let path = self.path.clone();
        let inner = self.w.into_inner().map_err(|e| io_err("writing", &path, e))?;
        inner.into_inner().map_err(|e| io_err("writing", &path, e))?.sync_all().map_err(|e| io_err("syncing", &path, e))
    }
}

/// A cell a spreadsheet would take as a formula (`=HYPERLINK(…)`, `+1`,
/// `@SUM`, …), prefixed with `'` so it is shown as text instead.
fn spreadsheet_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// Rewrites a CSV file written whole (the answers and report files) with
/// every cell made [`spreadsheet_safe`], through a file beside it renamed over it.
pub fn make_spreadsheet_safe(path: &Path) -> Result<(), ServiceError> {
    let tmp = path.with_extension("csv.safe");
    let read_err = |e: csv::Error| io_err("reading", path, e);
    let write_err = |e: csv::Error| io_err("writing", &tmp, e);
    let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_path(path).map_err(read_err)?;
    let file = File::create(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
    let mut w = csv::Writer::from_writer(BufWriter::new(file));
    let mut record = csv::StringRecord::new();
    while r.read_record(&mut record).map_err(read_err)? {
        for field in record.iter() {
            w.write_field(&*spreadsheet_safe(field)).map_err(write_err)?;
        }
        w.write_record(None::<&[u8]>).map_err(write_err)?;
    }
    let inner = w.into_inner().map_err(|e| io_err("writing", &tmp, e))?;
    inner.into_inner().map_err(|e| io_err("writing", &tmp, e))?.sync_all().map_err(|e| io_err("syncing", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_err("renaming", &tmp, e))
}

#[cfg(test)]
#[path = "csv_tests.rs"]
mod tests;
