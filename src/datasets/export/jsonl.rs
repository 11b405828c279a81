//! JSON Lines rows: one object per line, keys in column order.
use super::sink::{io_err, RowSink};
use crate::domain::export::{Cell, Column, Row};
use crate::error::ServiceError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct JsonlSink {
    w: BufWriter<File>,
    cols: Vec<Column>,
    /// `"name":` of each column, escaped once.
    keys: Vec<Vec<u8>>,
    path: PathBuf,
    /// Reused for every line.
    line: Vec<u8>,
}

impl JsonlSink {
    pub fn new(file: File, cols: Vec<Column>, path: &Path) -> JsonlSink {
        let keys = cols.iter().map(key).collect();
        JsonlSink { w: BufWriter::new(file), cols, keys, path: path.to_path_buf(), line: Vec::new() }
    }
}

fn key(c: &Column) -> Vec<u8> {
    let mut k = serde_json::to_vec(&c.name()).unwrap_or_default();
    k.push(b':');
    k
}

/// One JSON object per line, keys in column order (a map would sort them).
/// Values are serialised straight into `out` (serde_json's escaping).
fn json_line(out: &mut Vec<u8>, cols: &[Column], keys: &[Vec<u8>], row: &Row) {
    out.clear();
    out.push(b'{');
    for (i, (c, k)) in cols.iter().zip(keys).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(k);
        let at = out.len();
        let written = match row.cell(*c) {
            Cell::Text(None) | Cell::Image(None) | Cell::Votes(None) => {
                out.extend_from_slice(b"null");
                Ok(())
            }
            Cell::Text(Some(t)) => serde_json::to_writer(&mut *out, &t),
            Cell::Int(i) => serde_json::to_writer(&mut *out, &i),
            Cell::Image(Some(img)) => serde_json::to_writer(&mut *out, &img.path()),
            Cell::Votes(Some(v)) => serde_json::to_writer(&mut *out, v),
        };
        if written.is_err() {
            out.truncate(at);
            out.extend_from_slice(b"null");
        }
    }
    out.extend_from_slice(b"}\n");
}

impl RowSink for JsonlSink {
    fn write(&mut self, row: Row) -> Result<(), ServiceError> {
        json_line(&mut self.line, &self.cols, &self.keys, &row);
        self.w.write_all(&self.line).map_err(|e| io_err("writing", &self.path, e))
    }

    fn finish(self: Box<Self>) -> Result<(), ServiceError> {
        let path = self.path.clone();
        self.w
            .into_inner()
            .map_err(|e| io_err("writing", &path, e))?
            .sync_all()
            .map_err(|e| io_err("syncing", &path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::Category;
    use crate::domain::export::{columns, ImageRef, Stage, StepRecord, Vote};
    use crate::domain::resolution::ResolvedBy;

    #[test]
    fn jsonl_lines_keep_column_order_and_give_votes_as_arrays() {
        let row = Row {
            instance_id: 3,
            key: "k\"3".into(),
            caption: "a".into(),
            negative_caption: "b".into(),
            caption_orig: "A".into(),
            negative_caption_orig: "B".into(),
            category: Category::ALL[0],
            image: Some(ImageRef { hash: "aa".into(), mime: "image/png".into(), bytes: 1 }),
            negative_image: None,
            candidates: vec![],
            step3: Some(StepRecord {
                votes: vec![Vote { annotator: "x".into(), value: "none".into() }],
                resolved_by: ResolvedBy::Single,
                posterior: None,
            }),
            step4: None,
        };
        let cols = columns(Stage::Step3);
        let keys: Vec<Vec<u8>> = cols.iter().map(key).collect();
        let mut line = Vec::new();
        json_line(&mut line, &cols, &keys, &row);
        let line = String::from_utf8(line).unwrap();
        assert!(line.starts_with(r#"{"image":"images/aa.png","caption":"a","negative_caption":"b","negative_image":null,"type":"replace""#), "{line}");
        assert!(line.contains(r#""instance_id":3,"instance_key":"k\"3""#), "{line}");
        assert!(line.ends_with("\"step3_votes\":[{\"annotator\":\"x\",\"value\":\"none\"}],\"step3_resolved_by\":\"single\",\"step3_agreement\":\"single\",\"step3_posterior\":null,\"step3_posterior_model\":null}\n"), "{line}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["step3_votes"][0]["annotator"], "x");
    }
}
