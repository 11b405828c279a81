//! `hardneg results import`: a model's per-instance results, matched to a
//! dataset's instances by (caption, negative_caption, type, subtype), all in
//! one transaction. Unknown datasets are created text-only from the rows.
use crate::domain::lines::LineIndex;
use crate::domain::results::{ResultRow, ResultsHeader};
use crate::error::ServiceError;
use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use crate::store::runs::replace_run;
use sqlx::AnyPool;
use std::collections::{HashMap, VecDeque};
use std::path::Path;

/// Problems reported per file before giving up.
const MAX_PROBLEMS: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    pub dataset: String,
    pub dataset_created: bool,
    pub rows: usize,
    pub replaced_run: bool,
}

/// Reads and checks every row; all problems (up to a cap) in one error.
pub fn read_rows(path: &Path) -> Result<Vec<(u64, ResultRow)>, ServiceError> {
    let name = path.display().to_string();
    let invalid = ServiceError::Invalid;
    let bytes = std::fs::read(path).map_err(|e| invalid(format!("{name}: cannot open: {e}")))?;
    // Lines as an editor counts them: the csv crate's are one short on CRLF files.
    let lines = LineIndex::of(&bytes);
    let line_at = |p: Option<&csv::Position>| p.map_or(0, |p| lines.line_of(p.byte()));
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let header = reader.headers().map_err(|e| invalid(format!("{name}:1: cannot read the header: {e}")))?.clone();
    let fields: Vec<&str> = header.iter().collect();
    let parsed = ResultsHeader::parse(&fields).map_err(|e| invalid(format!("{name}:1: {e}")))?;
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for record in reader.records() {
        match record {
            Err(e) => {
                let line = line_at(e.position());
                problems.push(format!("{name}:{line}: {}", csv_problem(&e, &header)));
            }
            Ok(rec) => {
                let line = line_at(rec.position());
                let values: Vec<&str> = rec.iter().collect();
                match parsed.row(&values) {
                    Ok(row) => rows.push((line, row)),
                    Err(e) => problems.push(format!("{name}:{line}: field `{}`: {}", e.field, e.message)),
                }
            }
        }
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{name}: stopped after {MAX_PROBLEMS} problems"));
            break;
        }
    }
    if !problems.is_empty() {
        let n = problems.len().min(MAX_PROBLEMS);
        return Err(invalid(format!("{n} problem(s), nothing imported:\n{}", problems.join("\n"))));
    }
    if rows.is_empty() {
        return Err(invalid(format!("{name}: no rows")));
    }
    Ok(rows)
}

fn csv_problem(e: &csv::Error, header: &csv::StringRecord) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => match header.get(err.field()) {
            Some(column) => format!("field `{}`: not valid UTF-8", column.trim()),
            None => format!("field {}: not valid UTF-8", err.field() + 1),
        },
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("has {len} fields, the header has {expected_len} (truncated or malformed line)")
        }
        _ => e.to_string(),
    }
}

/// A dataset made from the rows holds their texts as instances: the
/// candidate import's rules hold for them too (docs/import.md, "What is refused").
fn check_new_texts(name: &str, rows: &[(u64, ResultRow)]) -> Result<(), ServiceError> {
    use crate::domain::names::imported_text_problem;
    let mut problems = Vec::new();
    for (line, row) in rows {
        for (field, text) in [("caption", &row.caption), ("negative_caption", &row.negative_caption)] {
            if let Some(p) = imported_text_problem(text) {
                problems.push(format!("{name}:{line}: field `{field}`: {p}"));
            }
        }
        if crate::domain::answer_text::reads_the_same(&row.caption, &row.negative_caption) {
            problems.push(format!(
                "{name}:{line}: field `negative_caption`: the same text as caption; a hard negative must change something"
            ));
        }
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    problems.truncate(MAX_PROBLEMS);
    Err(ServiceError::Invalid(format!(
        "{} problem(s), nothing imported (a new dataset's texts follow the candidate import's rules):\n{}",
        problems.len(),
        problems.join("\n")
    )))
}

type Key = (String, String, String, String);

fn key(row: &ResultRow) -> Key {
    (
        row.caption.clone(),
        row.negative_caption.clone(),
        row.category.neg_type.as_str().to_string(),
        row.category.subtype.as_str().to_string(),
    )
}

pub async fn import_results(
    db: &AnyPool,
    model: &str,
    dataset: &str,
    path: &Path,
) -> Result<ImportSummary, ServiceError> {
    crate::domain::names::check_run_name(model).map_err(|e| ServiceError::Invalid(format!("--model: {e}")))?;
    let rows = read_rows(path)?;
    let name = path.display().to_string();
    let mut tx = crate::store::db::begin_write(db).await?;
    let existing: Option<crate::domain::ids::DatasetId> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(dataset).fetch_optional(&mut *tx).await?;
    let (dataset_id, created) = match existing {
        Some(id) => (id, false),
        None => {
            crate::domain::names::check_dataset_name(dataset).map_err(ServiceError::Invalid)?;
            check_new_texts(&name, &rows)?;
            let id = insert_dataset(&mut tx, dataset, "none").await?;
            for (line, row) in &rows {
                let key = format!("row-{line}");
                let new = NewInstance {
                    key: &key,
                    caption: &row.caption,
                    negative_caption: &row.negative_caption,
                    caption_orig: &row.caption,
                    negative_caption_orig: &row.negative_caption,
                    category: row.category,
                    positive_image: None,
                };
                insert_instance(&mut tx, id, &new).await?;
            }
            (id, true)
        }
    };
    // Identical keys can occur more than once; they match instances in order.
    let instances: Vec<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT id, caption, negative_caption, neg_type, subtype FROM instances WHERE dataset_id = $1 ORDER BY id",
    )
    .bind(dataset_id)
    .fetch_all(&mut *tx)
    .await?;
    let mut by_key: HashMap<Key, VecDeque<i64>> = HashMap::new();
    for (id, c, n, t, s) in instances {
        by_key.entry((c, n, t, s)).or_default().push_back(id);
    }
    let mut matched = Vec::with_capacity(rows.len());
    let mut problems = Vec::new();
    // The first line of each key matched, to name a repeated row by it.
    let mut first_line: HashMap<Key, u64> = HashMap::new();
    for (line, row) in &rows {
        let k = key(row);
        let id = by_key.get_mut(&k).and_then(|q| q.pop_front());
        let earlier = first_line.get(&k).copied();
        first_line.entry(k).or_insert(*line);
        match (id, earlier) {
            (Some(id), _) => matched.push((id, row.outcome, None)),
            _ if problems.len() >= MAX_PROBLEMS => {}
            (None, Some(first)) => problems.push(format!(
                "{name}:{line}: the same caption, negative_caption, type and subtype as line {first}, and dataset \
                 {dataset:?} has no further instance with them (a repeated row?)"
            )),
            (None, None) => problems.push(format!(
                "{name}:{line}: no instance of dataset {dataset:?} has this caption, negative_caption, type and subtype"
            )),
        }
    }
    if !problems.is_empty() {
        return Err(ServiceError::Invalid(format!("unmatched rows, nothing imported:\n{}", problems.join("\n"))));
    }
    let source = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    let replaced = replace_run(&mut tx, dataset_id, model, &source, None, &matched).await?;
    tx.commit().await?;
    Ok(ImportSummary {
        dataset: dataset.to_string(),
        dataset_created: created,
        rows: rows.len(),
        replaced_run: replaced,
    })
}
