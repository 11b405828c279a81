//! The CSV sink on a real file: exact by default, formulas defused on request.
use super::*;
use crate::domain::category::Category;
use crate::domain::export::{columns, Stage};

fn row(caption: &str, negative: &str) -> Row {
    Row {
        instance_id: 1,
        key: "-1".into(),
        caption: caption.into(),
        negative_caption: negative.into(),
        caption_orig: "@SUM(A1)".into(),
        negative_caption_orig: "\tx".into(),
        category: Category::ALL[0],
        image: None,
        negative_image: None,
        candidates: vec![],
        step3: None,
        step4: None,
    }
}

fn written(safe: bool) -> Vec<csv::StringRecord> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.csv");
    let mut sink = Box::new(CsvSink::new(File::create(&path).unwrap(), columns(Stage::Final), &path, safe).unwrap());
    sink.write(row("=HYPERLINK(\"http://x\",\"a\")", "+1 cat")).unwrap();
    sink.write(row("A cat.", "a = b")).unwrap();
    sink.finish().unwrap();
    csv::Reader::from_path(&path).unwrap().records().map(Result::unwrap).collect()
}

fn cells(records: &[csv::StringRecord], i: usize) -> Vec<String> {
    records[i].iter().map(str::to_string).collect()
}

#[test]
fn the_default_output_is_exact() {
    let records = written(false);
    let first = cells(&records, 0);
    for exact in ["=HYPERLINK(\"http://x\",\"a\")", "+1 cat", "@SUM(A1)", "\tx", "-1"] {
        assert!(first.iter().any(|c| c == exact), "{exact:?} in {first:?}");
    }
}

#[test]
fn spreadsheet_safe_output_quotes_formula_starts_only() {
    let records = written(true);
    let first = cells(&records, 0);
    for quoted in ["'=HYPERLINK(\"http://x\",\"a\")", "'+1 cat", "'@SUM(A1)", "'\tx", "'-1"] {
        assert!(first.iter().any(|c| c == quoted), "{quoted:?} in {first:?}");
    }
    assert!(!first.iter().any(|c| c.starts_with(['=', '+', '-', '@', '\t', '\r'])), "{first:?}");
    let second = cells(&records, 1);
    assert!(second.iter().any(|c| c == "A cat.") && second.iter().any(|c| c == "a = b"), "{second:?}");
    assert_eq!(spreadsheet_safe("\rx"), "'\rx");
}

#[test]
fn a_whole_file_is_made_safe_in_place_keeping_quoted_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("study-1-answers.csv");
    std::fs::write(&path, "key,text,n\n-1,\"=HYPERLINK(\"\"x\"\")\na red dog\",3\nk2,plain,-0.5\n").unwrap();
    make_spreadsheet_safe(&path).unwrap();
    let records: Vec<csv::StringRecord> =
        csv::Reader::from_path(&path).unwrap().records().map(Result::unwrap).collect();
    assert_eq!(cells(&records, 0), ["'-1", "'=HYPERLINK(\"x\")\na red dog", "3"]);
    assert_eq!(cells(&records, 1), ["k2", "plain", "'-0.5"]);
    assert!(!dir.path().join("study-1-answers.csv.safe").exists());
}
