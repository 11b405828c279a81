//! Small protocol files (SugarCrepe++ triplets, A/B pairs): CSV with a header
//! or JSON Lines of string fields, read whole into rows of named columns.
//! Problems are collected with their line and field, never stopping at the
//! first, so a refusal lists what to fix.
use super::ImportError;
use crate::domain::candidates::{FileFormat, Problems};
use crate::domain::results::FieldError;
use std::path::Path;

/// The rows a file gives, each with its line and its values in `columns`
/// order; lines with problems are left out and reported instead.
pub struct Table {
    pub rows: Vec<(u64, Vec<String>)>,
    pub problems: Problems,
}

/// Protocol files hold hundreds of rows; anything this large is a mistake.
const MAX_BYTES: u64 = 64 << 20;

pub fn read_table(path: &Path, format: FileFormat, columns: &[&'static str]) -> std::io::Result<Table> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_BYTES {
        return Err(std::io::Error::other(format!("{len} bytes; protocol files are limited to {MAX_BYTES}")));
    }
    let bytes = std::fs::read(path)?;
    let mut t = Table { rows: Vec::new(), problems: Problems::default() };
    match format {
        FileFormat::Csv => read_csv(&bytes, columns, &mut t),
        FileFormat::JsonLines => read_jsonl(&bytes, columns, &mut t),
    }
    if t.rows.is_empty() && t.problems.is_empty() {
        t.problems.push(1, None, "no rows");
    }
    Ok(t)
}

fn read_csv(bytes: &[u8], columns: &[&'static str], t: &mut Table) {
    let lines = crate::domain::lines::LineIndex::of(bytes);
    let line_at = |p: Option<&csv::Position>| p.map_or(0, |p| lines.line_of(p.byte()));
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|s| s.trim().to_ascii_lowercase()).collect(),
        Err(e) => return t.problems.push(1, None, format!("unreadable header: {e}")),
    };
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    if let Some(twice) = crate::domain::results::repeated_column(&names, columns) {
        return t.problems.push(1, None, twice);
    }
    let idx: Vec<Option<usize>> = columns.iter().map(|c| header.iter().position(|h| h == c)).collect();
    let missing: Vec<&str> = columns.iter().zip(&idx).filter(|(_, i)| i.is_none()).map(|(c, _)| *c).collect();
    if !missing.is_empty() {
        return t.problems.push(1, None, format!("missing column(s): {}", missing.join(", ")));
    }
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = line_at(e.position());
                match e.kind() {
                    csv::ErrorKind::Utf8 { err, .. } => {
                        t.problems.push(line, header.get(err.field()).map(String::as_str), "not valid UTF-8")
                    }
                    _ => t.problems.push(line, None, format!("unreadable line: {e}")),
                }
                continue;
            }
        };
        let line = line_at(record.position());
        if record.len() != header.len() {
            let message = format!("the line has {} fields, the header {}", record.len(), header.len());
            t.problems.push(line, None, message);
            continue;
        }
        t.rows.push((line, idx.iter().map(|i| record[i.unwrap_or_default()].to_string()).collect()));
    }
}

fn read_jsonl(bytes: &[u8], columns: &[&'static str], t: &mut Table) {
    let bytes = bytes.strip_prefix(super::candidate_file::BOM).unwrap_or(bytes);
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = n as u64 + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let obj = match crate::domain::json_object::parse_object(raw) {
            Ok(o) => o,
            Err(e) => {
                t.problems.push(line, None, e.to_string());
                continue;
            }
        };
        let mut values = Vec::with_capacity(columns.len());
        for col in columns {
            match obj.get(*col) {
                Some(serde_json::Value::String(s)) => values.push(s.clone()),
                Some(other) => t.problems.push(line, Some(col), format!("expected a string, got {other}")),
                None => t.problems.push(line, Some(col), "missing"),
            }
        }
        if values.len() == columns.len() {
            t.rows.push((line, values));
        }
    }
}

/// Every row through `check` (which names the bad fields); the rows, or the
/// whole refusal listing each problem with file, line and field.
pub fn checked_rows<T>(
    mut table: Table,
    label: &str,
    mut check: impl FnMut(&[&str]) -> Result<T, Vec<FieldError>>,
) -> Result<Vec<T>, String> {
    let mut out = Vec::with_capacity(table.rows.len());
    for (line, values) in &table.rows {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        match check(&values) {
            Ok(t) => out.push(t),
            Err(errors) => errors.into_iter().for_each(|e| table.problems.push(*line, Some(e.field), e.message)),
        }
    }
    if table.problems.is_empty() {
        Ok(out)
    } else {
        Err(table.problems.report(label))
    }
}

/// A protocol import makes a new dataset: a valid name nobody has taken.
pub async fn check_new_dataset(db: &sqlx::AnyPool, name: &str) -> Result<(), ImportError> {
    crate::domain::names::check_dataset_name(name).map_err(ImportError::Invalid)?;
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(name).fetch_optional(db).await?;
    match exists {
        Some(_) => {
            Err(ImportError::Invalid(format!("dataset {name:?} already exists; import under a new --dataset name")))
        }
        None => Ok(()),
    }
}

/// Reads and checks the whole file off the async workers.
pub async fn read_checked<T: Send + 'static>(
    file: &Path,
    label: &str,
    columns: &'static [&'static str],
    check: impl FnMut(&[&str]) -> Result<T, Vec<FieldError>> + Send + 'static,
) -> Result<Vec<T>, ImportError> {
    let (file, label) = (file.to_path_buf(), label.to_string());
    tokio::task::spawn_blocking(move || {
        let table = read_table(&file, FileFormat::from_name(&label), columns)
            .map_err(|e| ImportError::Invalid(format!("{label}: cannot read: {e}")))?;
        checked_rows(table, &label, check).map_err(ImportError::Refused)
    })
    .await
    .map_err(ImportError::internal("reading a table"))?
}

/// An image a row names under `dir`, read and checked whole (PNG or JPEG);
/// a problem is the row's `image` field.
pub fn read_image(dir: &Path, name: &str) -> Result<Vec<u8>, Vec<FieldError>> {
    let bytes = std::fs::read(dir.join(name)).map_err(|e| e.to_string()).and_then(|b| {
        crate::store::images::inspect(&b)?;
        Ok(b)
    });
    bytes.map_err(|e| vec![FieldError { field: "image", message: format!("image {name:?}: {e}") }])
}

/// Puts checked images in the store. Content-addressed: a file stored
/// before a later failure is harmless.
pub fn store_images<'a>(
    store: &crate::store::images::ImageStore,
    images: impl Iterator<Item = &'a Vec<u8>>,
) -> Result<Vec<crate::store::images::StoredImage>, ImportError> {
    images.map(|b| store.put(b).map_err(ImportError::internal("storing an image"))).collect()
}

#[cfg(test)]
mod line_tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<u64> {
        let mut t = Table { rows: Vec::new(), problems: Problems::default() };
        read_csv(bytes, &["a", "b"], &mut t);
        t.rows.iter().map(|r| r.0).collect()
    }

    #[test]
    fn lines_are_physical_whatever_the_line_ending() {
        assert_eq!(lines(b"a,b\n1,2\n3,4\n"), [2, 3]);
        assert_eq!(lines(b"a,b\r\n1,2\r\n3,4\r\n"), [2, 3]);
        assert_eq!(lines(b"a,b\r\n\"x\r\ny\",2\r\n3,4\r\n"), [2, 4]);
        assert_eq!(lines(b"a,b\n\"x\ny\",2\n3,4\n"), [2, 4]);
        assert_eq!(lines(b"a,b\r1,2\r3,4\r"), [2, 3]);
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    fn said(bytes: &[u8], jsonl: bool) -> Vec<(u64, Option<String>, String)> {
        let mut t = Table { rows: Vec::new(), problems: Problems::default() };
        if jsonl {
            read_jsonl(bytes, &["a", "b"], &mut t)
        } else {
            read_csv(bytes, &["a", "b"], &mut t)
        }
        t.problems.shown.into_iter().map(|p| (p.line, p.field, p.message)).collect()
    }

    #[test]
    fn a_column_or_key_given_twice_is_refused() {
        let e = said(b"a,b,A\n1,2,3\n", false);
        assert_eq!(e, [(1, None, r#"column "a" appears twice (columns 1 and 3)"#.to_string())]);
        let e = said(b"{\"a\": \"1\", \"b\": \"2\", \"a\": \"3\"}\n", true);
        assert_eq!(e, [(1, None, r#"the key "a" is given twice"#.to_string())]);
    }

    #[test]
    fn bad_utf8_names_its_column() {
        let e = said(b"a,b\n1,x\xff\n", false);
        assert_eq!(e, [(2, Some("b".to_string()), "not valid UTF-8".to_string())]);
    }
}

#[cfg(test)]
mod bom_tests {
    use super::*;

    #[test]
    fn a_json_lines_file_may_start_with_a_byte_order_mark() {
        let mut t = Table { rows: Vec::new(), problems: Problems::default() };
        read_jsonl(b"\xEF\xBB\xBF{\"a\": \"1\", \"b\": \"2\"}\n", &["a", "b"], &mut t);
        assert!(t.problems.is_empty(), "{:?}", t.problems.shown);
        assert_eq!(t.rows, [(1, vec!["1".to_string(), "2".to_string()])]);
    }
}
