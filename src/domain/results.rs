//! Per-instance model results as researchers bring them: BiVLC's released
//! format (four boolean hit columns) or raw similarities. Parsing is pure so
//! every rule here is unit-tested; the shell reads files and matches rows.
use super::category::{Category, CategoryError};
use super::metrics::{Outcome, Similarities};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsFormat {
    /// `text_score_i0, text_score_i1, image_score_c0, image_score_c1` as True/False.
    BivlcFlags,
    /// `c0_i0, c1_i0, c0_i1, c1_i1`: similarities s(caption, image).
    RawScores,
}

pub const FLAG_COLUMNS: [&str; 4] = ["text_score_i0", "text_score_i1", "image_score_c0", "image_score_c1"];
pub const SCORE_COLUMNS: [&str; 4] = ["c0_i0", "c1_i0", "c0_i1", "c1_i1"];
const KEY_COLUMNS: [&str; 4] = ["caption", "negative_caption", "type", "subtype"];

/// Where each needed column sits in a file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultsHeader {
    pub format: ResultsFormat,
    key: [usize; 4],
    values: [usize; 4],
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub caption: String,
    pub negative_caption: String,
    pub category: Category,
    pub outcome: Outcome,
}

/// A problem with one field of one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

/// A header naming one of the `wanted` columns twice (trimmed, any case):
/// which and where, as reading either would drop the other without a word.
pub fn repeated_column(header: &[&str], wanted: &[&str]) -> Option<String> {
    wanted.iter().find_map(|w| {
        let mut at = header.iter().enumerate().filter(|(_, h)| h.trim().eq_ignore_ascii_case(w)).map(|(i, _)| i + 1);
        let (first, second) = (at.next()?, at.next()?);
        Some(format!("column {w:?} appears twice (columns {first} and {second})"))
    })
}

fn find(header: &[&str], name: &str) -> Option<usize> {
    header.iter().position(|h| h.trim().eq_ignore_ascii_case(name))
}

fn find_all(header: &[&str], names: &[&'static str; 4]) -> Result<[usize; 4], Vec<&'static str>> {
    let found: Vec<Option<usize>> = names.iter().map(|n| find(header, n)).collect();
    let missing: Vec<&'static str> = names.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(n, _)| *n).collect();
    if missing.is_empty() {
        Ok([found[0].unwrap(), found[1].unwrap(), found[2].unwrap(), found[3].unwrap()])
    } else {
        Err(missing)
    }
}

impl ResultsHeader {
    /// Recognises the format from the header; the error lists missing columns.
    pub fn parse(header: &[&str]) -> Result<ResultsHeader, String> {
        let every = KEY_COLUMNS.iter().chain(&FLAG_COLUMNS).chain(&SCORE_COLUMNS).copied().collect::<Vec<_>>();
        if let Some(twice) = repeated_column(header, &every) {
            return Err(twice);
        }
        let key = find_all(header, &KEY_COLUMNS).map_err(|m| format!("missing column(s): {}", m.join(", ")))?;
        if let Ok(values) = find_all(header, &FLAG_COLUMNS) {
            return Ok(ResultsHeader { format: ResultsFormat::BivlcFlags, key, values });
        }
        match find_all(header, &SCORE_COLUMNS) {
            Ok(values) => Ok(ResultsHeader { format: ResultsFormat::RawScores, key, values }),
            Err(_) => Err(format!(
                "missing result columns: expected either {} (BiVLC format) or {} (raw similarities)",
                FLAG_COLUMNS.join(", "),
                SCORE_COLUMNS.join(", ")
            )),
        }
    }

    pub fn row(&self, fields: &[&str]) -> Result<ResultRow, FieldError> {
        let get = |i: usize, name: &'static str| {
            fields.get(i).copied().ok_or_else(|| FieldError { field: name, message: "missing value".into() })
        };
        let caption = get(self.key[0], "caption")?.to_string();
        let negative_caption = get(self.key[1], "negative_caption")?.to_string();
        let category =
            Category::parse(get(self.key[2], "type")?, get(self.key[3], "subtype")?).map_err(|e| FieldError {
                field: if matches!(e, CategoryError::Type(_)) { "type" } else { "subtype" },
                message: e.to_string(),
            })?;
        let outcome = match self.format {
            ResultsFormat::BivlcFlags => {
                let mut flags = [false; 4];
                for (k, name) in FLAG_COLUMNS.iter().enumerate() {
                    flags[k] = parse_bool(get(self.values[k], name)?).ok_or_else(|| FieldError {
                        field: name,
                        message: format!("expected True or False, got {:?}", fields[self.values[k]]),
                    })?;
                }
                Outcome::from_flags(flags[0], flags[1], flags[2], flags[3])
            }
            ResultsFormat::RawScores => {
                let mut s = [0f64; 4];
                for (k, name) in SCORE_COLUMNS.iter().enumerate() {
                    let raw = get(self.values[k], name)?;
                    s[k] = raw.trim().parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| FieldError {
                        field: name,
                        message: format!("expected a finite number, got {raw:?}"),
                    })?;
                }
                Outcome::from_scores(Similarities::new(s[0], s[1], s[2], s[3]))
            }
        };
        Ok(ResultRow { caption, negative_caption, category, outcome })
    }
}

/// Python's and CSV writers' spellings of a boolean.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "True" | "true" | "TRUE" | "1" => Some(true),
        "False" | "false" | "FALSE" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::{NegType, Subtype};

    const BIVLC: [&str; 13] = [
        "image",
        "caption",
        "negative_caption",
        "negative_image",
        "type",
        "subtype",
        "text_score_i0",
        "text_score_i1",
        "image_score_c0",
        "image_score_c1",
        "text_score",
        "image_score",
        "group_score",
    ];

    #[test]
    fn reads_a_bivlc_results_row() {
        let h = ResultsHeader::parse(&BIVLC).unwrap();
        assert_eq!(h.format, ResultsFormat::BivlcFlags);
        let row = h
            .row(&[
                "<PIL>", "A cat.", "A dog.", "<PIL>", "swap", "att", "True", "False", "True", "True", "False", "True",
                "False",
            ])
            .unwrap();
        assert_eq!(row.category, Category::parse("swap", "att").unwrap());
        assert_eq!(row.outcome, Outcome::from_flags(true, false, true, true));
        assert!(!row.outcome.i2t() && row.outcome.t2i() && !row.outcome.group());
        assert_eq!((row.caption.as_str(), row.negative_caption.as_str()), ("A cat.", "A dog."));
    }

    #[test]
    fn a_result_column_given_twice_is_refused() {
        let twice = [&BIVLC[..], &["Text_Score_I1 "]].concat();
        assert_eq!(
            ResultsHeader::parse(&twice).unwrap_err(),
            r#"column "text_score_i1" appears twice (columns 8 and 14)"#
        );
        assert!(ResultsHeader::parse(&[&BIVLC[..], &["notes", "notes"]].concat()).is_ok());
    }

    #[test]
    fn reads_raw_similarities_with_strict_comparisons() {
        let header = ["type", "subtype", "caption", "negative_caption", "c0_i0", "c1_i0", "c0_i1", "c1_i1"];
        let h = ResultsHeader::parse(&header).unwrap();
        assert_eq!(h.format, ResultsFormat::RawScores);
        let row = h.row(&["replace", "rel", "a", "b", "0.30", "0.20", "0.25", "0.25"]).unwrap();
        assert_eq!(row.category.neg_type, NegType::Replace);
        assert_eq!(row.category.subtype, Subtype::Rel);
        // Ipos2T 0.30 > 0.20; Ineg2T s(C1,I1) 0.25 vs s(C0,I1) 0.25 is a tie, so a
        // miss; Tpos2I 0.30 > 0.25; Tneg2I 0.25 > 0.20.
        assert_eq!(row.outcome, Outcome::from_flags(true, false, true, true));
    }

    #[test]
    fn names_missing_columns_and_bad_fields() {
        let e = ResultsHeader::parse(&["caption", "type", "subtype"]).unwrap_err();
        assert!(e.contains("negative_caption"), "{e}");
        let e = ResultsHeader::parse(&["caption", "negative_caption", "type", "subtype", "text_score_i0"]).unwrap_err();
        assert!(e.contains("BiVLC format") && e.contains("c0_i0"), "{e}");
        let h = ResultsHeader::parse(&BIVLC).unwrap();
        let mut fields = ["i", "a", "b", "n", "add", "rel", "True", "True", "True", "True", "x", "x", "x"];
        assert_eq!(h.row(&fields).unwrap_err().field, "subtype");
        fields[5] = "obj";
        fields[8] = "yes";
        let err = h.row(&fields).unwrap_err();
        assert_eq!(err.field, "image_score_c0");
        assert!(err.message.contains("\"yes\""));
        assert_eq!(h.row(&fields[..7]).unwrap_err().message, "missing value");
        let raw = ResultsHeader::parse(&[
            "caption",
            "negative_caption",
            "type",
            "subtype",
            "c0_i0",
            "c1_i0",
            "c0_i1",
            "c1_i1",
        ])
        .unwrap();
        assert_eq!(raw.row(&["a", "b", "add", "obj", "1", "NaN", "0", "0"]).unwrap_err().field, "c1_i0");
    }

    #[test]
    fn booleans_in_common_spellings() {
        assert_eq!(parse_bool(" True "), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("T"), None);
    }
}
