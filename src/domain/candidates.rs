//! BiVLC Step 2 candidates as researchers bring them: one row per instance
//! with its positive image and four generated negative images, as CSV
//! (`filename, caption, negative_caption, type, subtype, index, hn_img_0..3`)
//! or JSON Lines with the same fields. Parsing, Step 1 normalisation and the
//! whole-file checks (duplicate indexes, problem cap) are pure; the shell
//! reads the file and the images.
use super::category::{Category, CategoryError};
use super::normalize::{normalize, NormalizeMode};
use super::results::FieldError;

mod batch;
pub use batch::{Batch, FileRef, Problem, Problems, Row, MAX_SHOWN};

pub const COLUMNS: [&str; 10] = [
    "filename",
    "caption",
    "negative_caption",
    "type",
    "subtype",
    "index",
    "hn_img_0",
    "hn_img_1",
    "hn_img_2",
    "hn_img_3",
];
const FILENAME: usize = 0;
const HN_IMG: usize = 6;

/// The two directories image names resolve in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageDir {
    Positives,
    Negatives,
}

/// CSV, or JSON Lines for names ending in `.jsonl` or `.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Csv,
    JsonLines,
}

impl FileFormat {
    pub fn from_name(name: &str) -> FileFormat {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".json") {
            FileFormat::JsonLines
        } else {
            FileFormat::Csv
        }
    }
}

/// One row, checked and normalised; the originals are kept beside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub key: String,
    pub caption: String,
    pub negative_caption: String,
    pub caption_orig: String,
    pub negative_caption_orig: String,
    pub category: Category,
    /// `filename`, then `hn_img_0..3`.
    pub images: [String; 5],
}

/// Where each column sits in a CSV header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateHeader {
    idx: [usize; 10],
    len: usize,
}

impl CandidateHeader {
    /// Columns may come in any order, extra ones are ignored; the error names
    /// every missing column.
    pub fn parse(header: &[&str]) -> Result<CandidateHeader, String> {
        if let Some(twice) = crate::domain::results::repeated_column(header, &COLUMNS) {
            return Err(twice);
        }
        let found: Vec<Option<usize>> =
            COLUMNS.iter().map(|c| header.iter().position(|h| h.trim().eq_ignore_ascii_case(c))).collect();
        let missing: Vec<&str> = COLUMNS.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(c, _)| *c).collect();
        if !missing.is_empty() {
            // A spreadsheet saved with another separator is one long column.
            let hint = match header {
                [one] if one.contains([';', '\t']) => " (the header is one column: hardneg reads comma-separated CSV)",
                _ => "",
            };
            return Err(format!("missing column(s): {}{hint}", missing.join(", ")));
        }
        let mut idx = [0; 10];
        for (i, f) in found.into_iter().enumerate() {
            idx[i] = f.unwrap_or_default();
        }
        Ok(CandidateHeader { idx, len: header.len() })
    }

    /// The row's values in [`COLUMNS`] order. A short row (a truncated or
    /// malformed line) is refused naming the first column it lacks.
    pub fn values<'a>(&self, fields: &[&'a str]) -> Result<[&'a str; 10], FieldError> {
        if fields.len() < self.len {
            let first_missing = (0..10).filter(|&i| self.idx[i] >= fields.len()).min_by_key(|&i| self.idx[i]);
            return Err(FieldError {
                field: first_missing.map_or("-", |i| COLUMNS[i]),
                message: format!(
                    "missing: the line has {} fields, the header {} (truncated or malformed line)",
                    fields.len(),
                    self.len
                ),
            });
        }
        if fields.len() > self.len {
            let message = format!(
                "the line has {} fields, the header {} (malformed line: an unquoted comma?)",
                fields.len(),
                self.len
            );
            return Err(FieldError { field: "-", message });
        }
        Ok(self.idx.map(|i| fields[i]))
    }
}

/// Checks one row's values (in [`COLUMNS`] order) and normalises its captions.
pub fn candidate(v: [&str; 10], mode: NormalizeMode) -> Result<Candidate, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut err = |field: &'static str, message: String| errors.push(FieldError { field, message });
    for (col, text) in [(1, v[1]), (2, v[2])] {
        if let Some(message) = crate::domain::names::imported_text_problem(text) {
            err(COLUMNS[col], message);
        }
    }
    let key = v[5].trim();
    if key.is_empty() {
        err("index", "empty".into());
    }
    let category = Category::parse(v[3], v[4]).map_err(|e| {
        let field = if matches!(e, CategoryError::Type(_)) { "type" } else { "subtype" };
        err(field, e.to_string())
    });
    for col in std::iter::once(FILENAME).chain(HN_IMG..HN_IMG + 4) {
        if let Err(m) = check_file_name(v[col]) {
            err(COLUMNS[col], m);
        }
    }
    let (caption, negative_caption) = (normalize(v[1], mode), normalize(v[2], mode));
    // Compared as shown: a negative that reads as its caption has no right
    // answer (spacing, case, invisible characters and Unicode forms aside).
    if !caption.trim().is_empty() && crate::domain::answer_text::reads_the_same(&caption, &negative_caption) {
        err("negative_caption", "the same text as caption; a hard negative must change something".into());
    }
    match category {
        Ok(category) if errors.is_empty() => Ok(Candidate {
            key: key.to_string(),
            caption,
            negative_caption,
            caption_orig: v[1].to_string(),
            negative_caption_orig: v[2].to_string(),
            category,
            images: [v[0], v[6], v[7], v[8], v[9]].map(str::to_string),
        }),
        _ => Err(errors),
    }
}

/// An image name must stay inside its directory: relative, no `..`, no
/// empty or `.` components, no backslashes (a web upload names files too).
pub fn check_file_name(name: &str) -> Result<(), String> {
    let bad = name.is_empty()
        || name.contains(['\\', '\0'])
        || name.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        Err(format!("{name:?} is not a file name inside the image directory"))
    } else {
        Ok(())
    }
}

/// One JSON Lines row: an object with the CSV's fields as strings; `index`
/// may also be an integer. Other keys are ignored.
pub fn parse_json_line(line: &str, mode: NormalizeMode) -> Result<Candidate, Vec<FieldError>> {
    use crate::domain::json_object::{parse_object, ObjectError};
    let obj = parse_object(line.as_bytes()).map_err(|e| {
        let message = match e {
            ObjectError::NotJson(_) => format!("{e} (truncated or malformed line)"),
            _ => e.to_string(),
        };
        vec![FieldError { field: "-", message }]
    })?;
    let mut errors = Vec::new();
    let mut owned: [String; 10] = Default::default();
    for (i, col) in COLUMNS.iter().enumerate() {
        match obj.get(*col) {
            Some(serde_json::Value::String(s)) => owned[i] = s.clone(),
            Some(serde_json::Value::Number(n)) if *col == "index" && (n.is_i64() || n.is_u64()) => {
                owned[i] = n.to_string()
            }
            Some(other) => {
                let want = if *col == "index" { "an integer or a string" } else { "a string" };
                errors.push(FieldError { field: col, message: format!("expected {want}, got {other}") });
            }
            None => errors.push(FieldError { field: col, message: "missing".into() }),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    candidate(std::array::from_fn(|i| owned[i].as_str()), mode)
}

/// The fields of a JSON line, read with invalid UTF-8 replaced by U+FFFD,
/// that hold a replacement character: where the invalid bytes were.
pub fn non_utf8_fields(lossy_line: &str) -> Vec<&'static str> {
    let Ok(serde_json::Value::Object(obj)) = serde_json::from_str(lossy_line) else { return Vec::new() };
    COLUMNS
        .into_iter()
        .filter(|c| obj.get(*c).and_then(|v| v.as_str()).is_some_and(|s| s.contains('\u{fffd}')))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: [&str; 10] = [
        "1.jpg",
        " a TV on a table",
        "a TV under a table",
        "swap",
        "rel",
        "7",
        "7_0.jpg",
        "7_1.jpg",
        "7_2.jpg",
        "7_3.jpg",
    ];

    fn ok(v: [&str; 10]) -> Candidate {
        candidate(v, NormalizeMode::Bivlc).unwrap()
    }

    fn fields(v: [&str; 10]) -> Vec<&'static str> {
        candidate(v, NormalizeMode::Bivlc).unwrap_err().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn header_in_any_order_names_every_missing_column() {
        let mut h: Vec<&str> = COLUMNS.iter().rev().copied().collect();
        h.push("extra");
        let header = CandidateHeader::parse(&h).unwrap();
        let mut row: Vec<&str> = ROW.iter().rev().copied().collect();
        row.push("x");
        assert_eq!(header.values(&row).unwrap(), ROW);
        let e = CandidateHeader::parse(&["filename", "Caption", "type", "index", "hn_img_0", "hn_img_1", "hn_img_2"])
            .unwrap_err();
        assert_eq!(e, "missing column(s): negative_caption, subtype, hn_img_3");
        let semicolons = COLUMNS.join(";");
        let e = CandidateHeader::parse(&[semicolons.as_str()]).unwrap_err();
        assert!(e.ends_with("(the header is one column: hardneg reads comma-separated CSV)"), "{e}");
        // Two of one column: which holds the caption is anybody's guess.
        let twice = [&COLUMNS[..], &[" CAPTION "]].concat();
        assert_eq!(CandidateHeader::parse(&twice).unwrap_err(), r#"column "caption" appears twice (columns 2 and 11)"#);
        assert!(CandidateHeader::parse(&[&COLUMNS[..], &["extra", "extra"]].concat()).is_ok(), "ignored ones may");
    }

    #[test]
    fn a_negative_that_reads_as_its_caption_is_refused() {
        let mut same = ROW;
        same[4] = "att";
        same[2] = "A TV on a table. ";
        assert_eq!(fields(same), ["negative_caption"], "the same once normalised");
        same[2] = "a table on a TV";
        assert!(candidate(same, NormalizeMode::Bivlc).is_ok(), "a swap is a change");
    }

    #[test]
    fn a_json_line_gives_each_key_once() {
        let row = r#"{"filename":"1.jpg","caption":"a TV on a table","negative_caption":"a TV under a table",
            "type":"swap","subtype":"att","index":"7","hn_img_0":"a.png","hn_img_1":"b.png","hn_img_2":"c.png",
            "hn_img_3":"d.png"}"#;
        assert!(parse_json_line(row, NormalizeMode::Bivlc).is_ok());
        let twice = row.replace(r#""index":"7""#, r#""index":"7","caption":"a table on a TV""#);
        let e = parse_json_line(&twice, NormalizeMode::Bivlc).unwrap_err();
        assert_eq!((e[0].field, e[0].message.as_str()), ("-", r#"the key "caption" is given twice"#));
    }

    #[test]
    fn a_short_line_names_the_first_missing_column() {
        let header = CandidateHeader::parse(&COLUMNS).unwrap();
        let e = header.values(&ROW[..7]).unwrap_err();
        assert_eq!(e.field, "hn_img_1");
        assert!(e.message.contains("7 fields, the header 10"), "{}", e.message);
        let long = [&ROW[..], &["x"]].concat();
        assert_eq!(header.values(&long).unwrap_err().field, "-");
        assert_eq!(FileFormat::from_name("a/b.JSONL"), FileFormat::JsonLines);
        assert_eq!(FileFormat::from_name("b.json"), FileFormat::JsonLines);
        assert_eq!(FileFormat::from_name("b.tsv"), FileFormat::Csv);
    }

    #[test]
    fn normalises_and_keeps_the_originals() {
        let mut v = ROW;
        v[4] = "att";
        let c = ok(v);
        assert_eq!((c.caption.as_str(), c.caption_orig.as_str()), ("A tv on a table.", " a TV on a table"));
        assert_eq!(c.negative_caption, "A tv under a table.");
        assert_eq!(c.category.to_string(), "swap/att");
        assert_eq!((c.key.as_str(), c.images[0].as_str(), c.images[4].as_str()), ("7", "1.jpg", "7_3.jpg"));
        let p = candidate(v, NormalizeMode::PreserveEntities).unwrap();
        assert_eq!(p.caption, "A TV on a table.");
        assert_eq!(candidate(v, NormalizeMode::None).unwrap().caption, " a TV on a table");
    }

    #[test]
    fn every_bad_field_of_a_row_is_named() {
        // swap has no rel in SugarCrepe.
        assert_eq!(fields(ROW), ["subtype"]);
        let mut v = ROW;
        v[3] = "move";
        v[2] = "  ";
        v[5] = "";
        v[6] = "../etc/passwd";
        v[0] = "/abs.jpg";
        assert_eq!(fields(v), ["negative_caption", "index", "type", "filename", "hn_img_0"]);
        let mut v = ROW;
        v[4] = "att";
        v[1] = "A dog\0 on a sofa.";
        let long = "x".repeat(2001);
        v[2] = &long;
        let e = candidate(v, NormalizeMode::None).unwrap_err();
        assert_eq!(e[0].message, "character U+0000 at 6 is not allowed");
        assert_eq!(e[1].message, "2001 characters; at most 2000 are allowed");
    }

    #[test]
    fn file_names_stay_inside_their_directory() {
        for good in ["a.jpg", "sub/a b.png", "..a.jpg"] {
            assert!(check_file_name(good).is_ok(), "{good}");
        }
        for bad in ["", "/a.jpg", "a/../../b", "./a", "a//b", "a\\b", "dir/"] {
            assert!(check_file_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn json_lines_take_string_or_integer_indexes() {
        let line = r#"{"filename":"1.jpg","caption":"a dog","negative_caption":"a cat","type":"add","subtype":"obj","index":12,
            "hn_img_0":"a","hn_img_1":"b","hn_img_2":"c","hn_img_3":"d","other":[1]}"#;
        let c = parse_json_line(line, NormalizeMode::Bivlc).unwrap();
        assert_eq!((c.key.as_str(), c.caption.as_str()), ("12", "A dog."));
        let as_string = line.replace("12", "\"12\"");
        assert_eq!(parse_json_line(&as_string, NormalizeMode::Bivlc).unwrap(), c);
        let bad = line.replace("12", "1.5").replace("\"a\",", "3,").replace(r#""type":"add","#, "");
        let e: Vec<_> = parse_json_line(&bad, NormalizeMode::Bivlc).unwrap_err().into_iter().map(|e| e.field).collect();
        assert_eq!(e, ["type", "index", "hn_img_0"]);
        let cut = parse_json_line(&line[..40], NormalizeMode::Bivlc).unwrap_err();
        assert_eq!(cut[0].field, "-");
        assert!(cut[0].message.contains("truncated"));
        assert_eq!(parse_json_line("[1]", NormalizeMode::Bivlc).unwrap_err()[0].message, "expected a JSON object");
        let lossy = String::from_utf8_lossy(&[line.replace("a dog", "a d\u{1}og").as_bytes()].concat())
            .replace('\u{1}', "\u{fffd}");
        assert_eq!(non_utf8_fields(&lossy), ["caption"]);
        assert!(non_utf8_fields("{\"caption\":").is_empty());
    }
}
