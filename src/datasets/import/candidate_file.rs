//! The candidate file of an import, read as it streams and hashed on the
//! way, one record at a time: a record (a CSV row, a JSON line) over
//! [`MAX_RECORD_BYTES`] is refused where it starts, so one huge field cannot
//! take memory in proportion to its size.
use crate::domain::candidates::{candidate, non_utf8_fields, parse_json_line, Batch, CandidateHeader, FileFormat};
use crate::domain::lines::LineIndex;
use crate::domain::normalize::NormalizeMode;
use sha2::{Digest, Sha256};
use std::cell::{Cell, RefCell};
use std::io::{self, BufRead, Read};
use std::path::Path;
use std::rc::Rc;

/// A UTF-8 byte-order mark, which editors on Windows put first.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The most one record may hold: ten fields, the captions at most 2,000
/// characters each, leave this far above any real row.
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

/// A reader that hashes what passes through it and indexes its lines (the
/// csv reader reads ahead, so a record's line is indexed before it is seen).
/// It also refuses to read on once [`MAX_RECORD_BYTES`] have passed since
/// the start of the record being parsed (`record_start`, set by the parser).
struct Hashing<R> {
    inner: R,
    sha: Sha256,
    lines: Rc<RefCell<LineIndex>>,
    read: u64,
    record_start: Rc<Cell<u64>>,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.record_start.get();
        if self.read.saturating_sub(start) > MAX_RECORD_BYTES {
            let line = self.lines.borrow().line_of(start);
            return Err(io::Error::other(format!(
                "line {line}: a record of more than {} MiB (a caption holds at most 2,000 characters): \
                 an unclosed quote, or not a candidate file?",
                MAX_RECORD_BYTES >> 20
            )));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        self.sha.update(&buf[..n]);
        self.lines.borrow_mut().feed(&buf[..n]);
        Ok(n)
    }
}

/// Parses the whole candidate file into a [`Batch`] (problems included) and
/// returns the file's SHA-256. Only IO errors fail here.
pub fn read_candidates(path: &Path, format: FileFormat, mode: NormalizeMode) -> io::Result<(Batch, [u8; 32])> {
    let lines = Rc::new(RefCell::new(LineIndex::default()));
    let record_start = Rc::new(Cell::new(0));
    let mut hashing = Hashing {
        inner: std::fs::File::open(path)?,
        sha: Sha256::new(),
        lines: Rc::clone(&lines),
        read: 0,
        record_start: Rc::clone(&record_start),
    };
    let mut batch = Batch::default();
    match format {
        FileFormat::Csv => {
            let mut reader =
                csv::ReaderBuilder::new().flexible(true).buffer_capacity(1 << 16).from_reader(&mut hashing);
            read_csv(&mut reader, mode, &mut batch, &lines, &record_start).map_err(io::Error::other)?;
        }
        FileFormat::JsonLines => {
            let reader = io::BufReader::with_capacity(1 << 16, &mut hashing);
            read_jsonl(reader, mode, &mut batch, &record_start)?
        }
    }
    record_start.set(u64::MAX); // the rest is hashed, not parsed
    io::copy(&mut hashing, &mut io::sink())?; // whatever the parser left unread
    if batch.rows.is_empty() && batch.problems.is_empty() {
        batch.problems.push(1, None, "no rows");
    }
    batch.finish();
    Ok((batch, hashing.sha.finalize().into()))
}

fn read_csv<R: Read>(
    reader: &mut csv::Reader<R>,
    mode: NormalizeMode,
    batch: &mut Batch,
    lines: &RefCell<LineIndex>,
    record_start: &Cell<u64>,
) -> csv::Result<()> {
    let raw = reader.byte_headers()?.clone();
    let Ok(names) = raw.iter().map(std::str::from_utf8).collect::<Result<Vec<&str>, _>>() else {
        batch.problems.push(1, None, "the header is not valid UTF-8");
        return Ok(());
    };
    let header = match CandidateHeader::parse(&names) {
        Ok(h) => h,
        Err(e) => {
            batch.problems.push(1, None, e);
            return Ok(());
        }
    };
    let mut record = csv::ByteRecord::new();
    record_start.set(reader.position().byte());
    while reader.read_byte_record(&mut record)? {
        record_start.set(reader.position().byte());
        let line = record.position().map_or(0, |p| lines.borrow().line_of(p.byte()));
        let mut fields: Vec<&str> = Vec::with_capacity(record.len());
        let mut utf8 = true;
        for (i, f) in record.iter().enumerate() {
            match std::str::from_utf8(f) {
                Ok(s) => fields.push(s),
                Err(e) => {
                    let at = e.valid_up_to();
                    let message = format!("not valid UTF-8 (byte {:#04x} at offset {at})", f[at]);
                    batch.problems.push(line, Some(names.get(i).copied().unwrap_or("-")), message);
                    utf8 = false;
                }
            }
        }
        if utf8 {
            batch.push(line, header.values(&fields).map_err(|e| vec![e]).and_then(|v| candidate(v, mode)));
        }
    }
    Ok(())
}

/// One JSON object per line; blank lines are skipped.
fn read_jsonl<R: BufRead>(
    mut reader: R,
    mode: NormalizeMode,
    batch: &mut Batch,
    record_start: &Cell<u64>,
) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        record_start.set(record_start.get() + buf.len() as u64);
        line += 1;
        if line == 1 && buf.starts_with(BOM) {
            buf.drain(..BOM.len()); // as the CSV reader skips it
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match std::str::from_utf8(&buf) {
            Ok(text) => batch.push(line, parse_json_line(text.trim_end(), mode)),
            Err(e) => {
                let message =
                    format!("not valid UTF-8 (byte {:#04x} at column {})", buf[e.valid_up_to()], e.valid_up_to() + 1);
                let fields = non_utf8_fields(&String::from_utf8_lossy(&buf));
                if fields.is_empty() {
                    batch.problems.push(line, None, message.clone());
                }
                for f in fields {
                    batch.problems.push(line, Some(f), message.clone());
                }
            }
        }
    }
}
