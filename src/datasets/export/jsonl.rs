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
    path: PathBuf,
    /// Reused for every line.
    line: String,
}

impl JsonlSink {
    pub fn new(file: File, cols: Vec<Column>, path: &Path) -> JsonlSink {
        JsonlSink { w: BufWriter::new(file), cols, path: path.to_path_buf(), line: String::new() }
    }
}

/// One JSON object per line, keys in column order (a map would sort them).
fn json_line(out: &mut String, cols: &[Column], row: &Row) {
    out.clear();
    out.push('{');
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json(&c.name()));
        out.push(':');
        match row.cell(*c) {
            Cell::Text(None) | Cell::Image(None) | Cell::Votes(None) => out.push_str("null"),
            Cell::Text(Some(t)) => out.push_str(&json(&t)),
            Cell::Int(i) => out.push_str(&i.to_string()),
            Cell::Image(Some(img)) => out.push_str(&json(&img.path())),
            Cell::Votes(Some(v)) => out.push_str(&serde_json::to_string(v).unwrap_or_else(|_| "null".into())),
        }
    }
    out.push_str("}\n");
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "null".into())
}

impl RowSink for JsonlSink {
    fn write(&mut self, row: Row) -> Result<(), ServiceError> {
        json_line(&mut self.line, &self.cols, &row);
        self.w.write_all(self.line.as_bytes()).map_err(|e| io_err("writing", &self.path, e))
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
        let mut line = String::new();
        json_line(&mut line, &columns(Stage::Step3), &row);
        assert!(line.starts_with(r#"{"image":"images/aa.png","caption":"a","negative_caption":"b","negative_image":null,"type":"replace""#), "{line}");
        assert!(line.contains(r#""instance_id":3,"instance_key":"k\"3""#), "{line}");
        assert!(line.ends_with("\"step3_votes\":[{\"annotator\":\"x\",\"value\":\"none\"}],\"step3_resolved_by\":\"single\",\"step3_agreement\":\"single\",\"step3_posterior\":null}\n"), "{line}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["step3_votes"][0]["annotator"], "x");
    }
}
