//! Parquet rows with the `parquet` crate's low-level column writer (no
//! arrow). Image columns are `{bytes, path}` structs and the `huggingface`
//! key-value metadata declares them `Image`, so `datasets` decodes them.
//! Rows are buffered one row group at a time (bounded in rows and image
//! bytes), so memory stays flat however long the file gets.
use super::sink::{io_err, RowSink};
use crate::domain::export::{Cell, Column, ColumnKind, Row};
use crate::error::ServiceError;
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DataType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `datasets` reads image parquet in small row groups too (100 rows when it
/// writes them); 1000 keeps text-heavy files compact.
const GROUP_ROWS: usize = 1000;
const GROUP_IMAGE_BYTES: u64 = 64 << 20;

pub struct ParquetSink {
    w: SerializedFileWriter<BufWriter<File>>,
    cols: Vec<Column>,
    buffered: Vec<Row>,
    image_bytes: u64,
    path: PathBuf,
    images_dir: PathBuf,
}

/// The parquet schema: images as optional `{bytes, path}` groups.
pub fn schema_text(cols: &[Column]) -> String {
    let mut s = String::from("message hardneg_export {\n");
    for c in cols {
        let name = c.name();
        s.push_str(&match c.kind() {
            ColumnKind::Image => {
                format!("  optional group {name} {{ optional binary bytes; optional binary path (UTF8); }}\n")
            }
            ColumnKind::Int => format!("  required int64 {name};\n"),
            ColumnKind::Text | ColumnKind::Votes => format!("  optional binary {name} (UTF8);\n"),
        });
    }
    s.push('}');
    s
}

/// The `huggingface` metadata value: every column's `datasets` feature, in order.
pub fn hf_features(cols: &[Column]) -> String {
    let features: Vec<String> = cols
        .iter()
        .map(|c| {
            let f = match c.kind() {
                ColumnKind::Image => r#"{"_type": "Image"}"#,
                ColumnKind::Int => r#"{"dtype": "int64", "_type": "Value"}"#,
                ColumnKind::Text | ColumnKind::Votes => r#"{"dtype": "string", "_type": "Value"}"#,
            };
            format!("\"{}\": {f}", c.name())
        })
        .collect();
    format!("{{\"info\": {{\"features\": {{{}}}}}}}", features.join(", "))
}

impl ParquetSink {
    pub fn new(file: File, cols: Vec<Column>, path: &Path, images_dir: &Path) -> Result<Self, ServiceError> {
        let err = |e: parquet::errors::ParquetError| io_err("writing", path, e);
        let schema = parse_message_type(&schema_text(&cols)).map_err(err)?;
        // Images are compressed already, and no codec keeps the build light.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_created_by(format!("hardneg {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![KeyValue::new("huggingface".into(), hf_features(&cols))]));
        for c in &cols {
            let name = c.name().into_owned();
            match c {
                Column::Type | Column::Subtype | Column::ResolvedBy(_) | Column::Agreement(_) => {
                    props = props.set_column_dictionary_enabled(ColumnPath::new(vec![name]), true);
                }
                _ if c.kind() == ColumnKind::Image => {
                    props = props.set_column_statistics_enabled(
                        ColumnPath::new(vec![name, "bytes".into()]),
                        EnabledStatistics::None,
                    );
                }
                _ => {}
            }
        }
        let w =
            SerializedFileWriter::new(BufWriter::new(file), Arc::new(schema), Arc::new(props.build())).map_err(err)?;
        Ok(ParquetSink {
            w,
            cols,
            buffered: Vec::new(),
            image_bytes: 0,
            path: path.to_path_buf(),
            images_dir: images_dir.to_path_buf(),
        })
    }

    fn flush(&mut self) -> Result<(), ServiceError> {
        if self.buffered.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e: parquet::errors::ParquetError| io_err("writing", &path, e);
        let mut rg = self.w.next_row_group().map_err(err)?;
        for c in &self.cols {
            let cells = self.buffered.iter().map(|r| r.cell(*c));
            match c.kind() {
                ColumnKind::Int => {
                    let values: Vec<i64> = cells.map(|cell| if let Cell::Int(i) = cell { i } else { 0 }).collect();
                    write_column::<Int64Type>(&mut rg, &values, None).map_err(err)?;
                }
                ColumnKind::Text | ColumnKind::Votes => {
                    let (values, defs) =
                        optional(cells.map(|cell| cell.text().map(|t| ByteArray::from(t.as_bytes().to_vec()))), 1);
                    write_column::<ByteArrayType>(&mut rg, &values, Some(&defs)).map_err(err)?;
                }
                ColumnKind::Image => {
                    // One image column in memory at a time. An image several
                    // rows of the group show is read once: the values share
                    // its bytes (a ByteArray clone is a reference).
                    let mut read: HashMap<&str, ByteArray> = HashMap::new();
                    let mut bytes = Vec::with_capacity(self.buffered.len());
                    for cell in self.buffered.iter().map(|r| r.cell(*c)) {
                        bytes.push(match cell {
                            Cell::Image(Some(img)) => Some(match read.get(img.hash.as_str()) {
                                Some(b) => b.clone(),
                                None => {
                                    let file = self.images_dir.join(img.file_name());
                                    let b =
                                        ByteArray::from(std::fs::read(&file).map_err(|e| io_err("reading", &file, e))?);
                                    read.insert(&img.hash, b.clone());
                                    b
                                }
                            }),
                            _ => None,
                        });
                    }
                    let (values, defs) = optional(bytes.into_iter(), 2);
                    write_column::<ByteArrayType>(&mut rg, &values, Some(&defs)).map_err(err)?;
                    let paths = self.buffered.iter().map(|r| match r.cell(*c) {
                        Cell::Image(Some(img)) => Some(ByteArray::from(img.path().into_bytes())),
                        _ => None,
                    });
                    let (values, defs) = optional(paths, 2);
                    write_column::<ByteArrayType>(&mut rg, &values, Some(&defs)).map_err(err)?;
                }
            }
        }
        rg.close().map_err(err)?;
        self.buffered.clear();
        self.image_bytes = 0;
        Ok(())
    }
}

/// Present values and their definition levels (`level` when present, 0 when null).
fn optional(cells: impl Iterator<Item = Option<ByteArray>>, level: i16) -> (Vec<ByteArray>, Vec<i16>) {
    let (mut values, mut defs) = (Vec::new(), Vec::new());
    for v in cells {
        defs.push(if v.is_some() { level } else { 0 });
        values.extend(v);
    }
    (values, defs)
}

fn write_column<T: DataType>(
    rg: &mut SerializedRowGroupWriter<'_, BufWriter<File>>,
    values: &[T::T],
    defs: Option<&[i16]>,
) -> parquet::errors::Result<()> {
    let mut col = rg
        .next_column()?
        .ok_or_else(|| parquet::errors::ParquetError::General("more values than schema columns".into()))?;
    col.typed::<T>().write_batch(values, defs, None)?;
    col.close()
}

impl RowSink for ParquetSink {
    fn write(&mut self, row: Row) -> Result<(), ServiceError> {
        self.image_bytes += row.images().map(|i| i.bytes).sum::<u64>();
        self.buffered.push(row);
        if self.buffered.len() >= GROUP_ROWS || self.image_bytes >= GROUP_IMAGE_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), ServiceError> {
        self.flush()?;
        let path = self.path.clone();
        let err = |e: parquet::errors::ParquetError| io_err("writing", &path, e);
        let file = self.w.into_inner().map_err(err)?.into_inner().map_err(|e| io_err("writing", &path, e))?;
        file.sync_all().map_err(|e| io_err("syncing", &path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::export::{columns, Stage};

    #[test]
    fn schema_and_features_cover_every_column_in_order() {
        let cols = columns(Stage::Final);
        let schema = schema_text(&cols);
        assert!(schema.contains("optional group image { optional binary bytes; optional binary path (UTF8); }"));
        assert!(schema.contains("required int64 instance_id;"));
        assert!(parse_message_type(&schema).is_ok(), "{schema}");
        let f: serde_json::Value = serde_json::from_str(&hf_features(&cols)).unwrap();
        let features = f["info"]["features"].as_object().unwrap();
        assert_eq!(features.len(), cols.len());
        assert_eq!(features["negative_image"]["_type"], "Image");
        assert_eq!(features["step4_votes"]["dtype"], "string");
    }
}
