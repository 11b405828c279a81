//! What to export: the stage, format and splits, parsed from the CLI flags
//! or the download's query, and printed back as the command in the card.
use crate::domain::export::split::{parse_splits, Split};
use crate::domain::export::{Format, Stage};
use crate::error::ServiceError;

/// What to export; parsed from the CLI flags or the download's query.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    pub dataset: String,
    pub stage: Stage,
    pub format: Format,
    /// Empty: one file, `data.<ext>`.
    pub splits: Vec<Split>,
    pub seed: u64,
    /// Cells a spreadsheet would run as formulas get a leading `'`: in every
    /// CSV file of the export (with JSON Lines or Parquet, the files beside
    /// the rows, which stay exact).
    pub spreadsheet_safe: bool,
}

impl ExportRequest {
    pub fn parse(
        dataset: &str,
        format: &str,
        stage: Option<&str>,
        split: Option<&str>,
        seed: Option<u64>,
    ) -> Result<Self, ServiceError> {
        let invalid = ServiceError::Invalid;
        Ok(ExportRequest {
            dataset: dataset.to_string(),
            format: Format::parse(format).map_err(invalid)?,
            stage: Stage::parse(stage.unwrap_or("final")).map_err(invalid)?,
            splits: split
                .map(parse_splits)
                .transpose()
                .map_err(|e| ServiceError::Invalid(format!("split: {e}")))?
                .unwrap_or_default(),
            seed: seed.unwrap_or(0),
            spreadsheet_safe: false,
        })
    }

    /// Asks for spreadsheet-safe CSV cells (an audit: a JSON Lines export's
    /// answers CSV kept a written `=HYPERLINK(…)` as a formula).
    pub fn with_spreadsheet_safe(mut self, on: bool) -> Self {
        self.spreadsheet_safe = on;
        self
    }

    /// The equivalent command line, for the dataset card.
    pub fn command(&self) -> String {
        let mut c = format!(
            "hardneg export {} --out DIR --format {} --stage {}",
            self.dataset,
            self.format.as_str(),
            self.stage.as_str()
        );
        if !self.splits.is_empty() {
            let s: Vec<String> = self
                .splits
                .iter()
                .map(|s| if self.splits.len() == 1 { s.name.clone() } else { format!("{}={}", s.name, s.fraction) })
                .collect();
            c.push_str(&format!(" --split {} --seed {}", s.join(","), self.seed));
        }
        if self.spreadsheet_safe {
            c.push_str(" --spreadsheet-safe");
        }
        c
    }

    pub fn split_names(&self) -> Vec<String> {
        if self.splits.is_empty() {
            vec!["data".into()]
        } else {
            self.splits.iter().map(|s| s.name.clone()).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_with_defaults_and_print_as_a_command() {
        let r = ExportRequest::parse("demo", "parquet", None, None, None).unwrap();
        assert_eq!((r.stage, r.format, r.splits.len(), r.seed), (Stage::Final, Format::Parquet, 0, 0));
        assert_eq!(r.command(), "hardneg export demo --out DIR --format parquet --stage final");
        assert_eq!(r.split_names(), vec!["data".to_string()]);
        let r = ExportRequest::parse("demo", "csv", Some("step3"), Some("train=0.8,val=0.2"), Some(9)).unwrap();
        assert_eq!(
            r.command(),
            "hardneg export demo --out DIR --format csv --stage step3 --split train=0.8,val=0.2 --seed 9"
        );
        let r = ExportRequest::parse("demo", "csv", None, Some("test"), None).unwrap();
        assert_eq!(r.command(), "hardneg export demo --out DIR --format csv --stage final --split test --seed 0");
        for (f, s, sp, msg) in [
            ("xml", None, None, "unknown format"),
            ("csv", Some("all"), None, "unknown stage"),
            ("csv", None, Some("a=0.5"), "split: "),
        ] {
            match ExportRequest::parse("demo", f, s, sp, None) {
                Err(ServiceError::Invalid(m)) => assert!(m.contains(msg), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
