//! The whole-file side of a candidate import: every row in, duplicate
//! indexes refused, image files shared between rows counted once, and
//! problems collected up to a cap.
use super::{Candidate, ImageDir, COLUMNS, FILENAME, HN_IMG};
use crate::domain::category::Category;
use crate::domain::results::FieldError;
use std::collections::HashMap;
use std::fmt;

/// Problems shown per refused file; the rest are only counted.
pub const MAX_SHOWN: usize = 20;

/// A problem with a line of the file (line 1 is the CSV header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u64,
    pub field: Option<String>,
    pub message: String,
}

impl Problem {
    /// `FILE:LINE: field `NAME`: MESSAGE`, or `FILE:LINE: MESSAGE` when no field is to blame.
    pub fn display<'a>(&'a self, file: &'a str) -> impl fmt::Display + 'a {
        struct D<'a>(&'a Problem, &'a str);
        impl fmt::Display for D<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match &self.0.field {
                    Some(field) => write!(f, "{}:{}: field `{field}`: {}", self.1, self.0.line, self.0.message),
                    None => write!(f, "{}:{}: {}", self.1, self.0.line, self.0.message),
                }
            }
        }
        D(self, file)
    }
}

/// Keeps the first [`MAX_SHOWN`] problems and counts the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    pub shown: Vec<Problem>,
    pub total: usize,
}

impl Problems {
    pub fn push(&mut self, line: u64, field: Option<&str>, message: impl Into<String>) {
        self.total += 1;
        if self.shown.len() < MAX_SHOWN {
            self.shown.push(Problem { line, field: field.map(str::to_string), message: message.into() });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The whole report: a count, then one problem per line in the file's
    /// order (a short line is found before its neighbours' fields are
    /// checked), then "and N more".
    pub fn report(&self, file: &str) -> String {
        let mut out = format!("{} problem(s), nothing imported:", self.total);
        let mut shown: Vec<&Problem> = self.shown.iter().collect();
        shown.sort_by_key(|p| p.line);
        for p in shown {
            out.push_str(&format!("\n{}", p.display(file)));
        }
        if self.total > self.shown.len() {
            out.push_str(&format!("\nand {} more", self.total - self.shown.len()));
        }
        out
    }
}

/// A distinct image file named by the rows, and the first place it is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    pub dir: ImageDir,
    pub name: Box<str>,
    pub line: u64,
    pub column: &'static str,
    pub uses: u32,
}

/// A parsed row, with its images as indexes into [`Batch::files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: u64,
    pub key: Box<str>,
    pub caption: Box<str>,
    pub negative_caption: Box<str>,
    pub caption_orig: Box<str>,
    pub negative_caption_orig: Box<str>,
    pub category: Category,
    pub images: [u32; 5],
}

/// The whole file, row by row: rows, distinct image files (each is read and
/// hashed once however many rows share it) and problems, duplicate indexes
/// included.
#[derive(Debug, Default)]
pub struct Batch {
    pub rows: Vec<Row>,
    pub files: Vec<FileRef>,
    pub problems: Problems,
    keys: HashMap<Box<str>, u64>,
    file_ids: HashMap<(ImageDir, Box<str>), u32>,
}

impl Batch {
    pub fn push(&mut self, line: u64, parsed: Result<Candidate, Vec<FieldError>>) {
        let c = match parsed {
            Ok(c) => c,
            Err(errors) => {
                for e in errors {
                    self.problems.push(line, (e.field != "-").then_some(e.field), e.message);
                }
                return;
            }
        };
        if let Some(first) = self.keys.get(c.key.as_str()) {
            self.problems.push(line, Some("index"), format!("duplicate index {:?} (first on line {first})", c.key));
            return;
        }
        self.keys.insert(c.key.as_str().into(), line);
        let mut images = [0u32; 5];
        for (slot, name) in c.images.into_iter().enumerate() {
            let (dir, column) = if slot == 0 {
                (ImageDir::Positives, COLUMNS[FILENAME])
            } else {
                (ImageDir::Negatives, COLUMNS[HN_IMG + slot - 1])
            };
            let name: Box<str> = name.into();
            images[slot] = match self.file_ids.get(&(dir, name.clone())) {
                Some(&id) => {
                    self.files[id as usize].uses += 1;
                    id
                }
                None => {
                    let id = self.files.len() as u32;
                    self.files.push(FileRef { dir, name: name.clone(), line, column, uses: 1 });
                    self.file_ids.insert((dir, name), id);
                    id
                }
            };
        }
        self.rows.push(Row {
            line,
            key: c.key.into(),
            caption: c.caption.into(),
            negative_caption: c.negative_caption.into(),
            caption_orig: c.caption_orig.into(),
            negative_caption_orig: c.negative_caption_orig.into(),
            category: c.category,
            images,
        });
    }

    /// Frees the lookup tables once every row is in.
    pub fn finish(&mut self) {
        self.keys = HashMap::new();
        self.file_ids = HashMap::new();
    }
}

#[cfg(test)]
mod tests {
    use super::super::candidate;
    use super::*;
    use crate::domain::normalize::NormalizeMode;

    const ROW: [&str; 10] = ["1.jpg", "a dog", "a cat", "swap", "obj", "7", "7_0.jpg", "7_1.jpg", "7_2.jpg", "7_3.jpg"];

    fn ok(v: [&str; 10]) -> Candidate {
        candidate(v, NormalizeMode::Bivlc).unwrap()
    }

    #[test]
    fn batch_shares_files_refuses_duplicate_indexes_and_caps_problems() {
        let mut b = Batch::default();
        let mut v = ROW;
        b.push(2, Ok(ok(v)));
        v[5] = "8";
        v[6] = "1.jpg"; // a negative named like a positive is a different file
        b.push(3, Ok(ok(v)));
        v[5] = " 7 ";
        b.push(4, Ok(ok(v)));
        assert_eq!(b.rows.len(), 2);
        assert_eq!(b.files.len(), 6);
        assert_eq!((b.files[0].uses, b.files[0].dir, b.files[0].line), (2, ImageDir::Positives, 2));
        assert_eq!(b.rows[1].images, [0, 5, 2, 3, 4]);
        assert_eq!((b.files[5].column, b.files[5].dir), ("hn_img_0", ImageDir::Negatives));
        assert_eq!(
            b.problems.shown[0],
            Problem { line: 4, field: Some("index".into()), message: "duplicate index \"7\" (first on line 2)".into() }
        );
        for line in 5..30 {
            b.push(line, Err(vec![FieldError { field: "type", message: "bad".into() }]));
        }
        assert_eq!((b.problems.total, b.problems.shown.len()), (26, MAX_SHOWN));
        let report = b.problems.report("c.csv");
        assert!(report.starts_with("26 problem(s), nothing imported:\nc.csv:4: field `index`: duplicate"), "{report}");
        assert!(report.contains("\nc.csv:5: field `type`: bad\n") && report.ends_with("\nand 6 more"), "{report}");
        let mut p = Problems::default();
        p.push(9, None, "not valid UTF-8");
        assert_eq!(p.report("x.jsonl"), "1 problem(s), nothing imported:\nx.jsonl:9: not valid UTF-8");
        // Found in two passes (short lines, then fields): reported in the file's order.
        p.push(2, Some("type"), "bad");
        p.push(2, Some("subtype"), "bad");
        let report = p.report("x.csv");
        let lines: Vec<&str> = report.lines().skip(1).map(|l| l.split(": ").next().unwrap()).collect();
        assert_eq!(lines, ["x.csv:2", "x.csv:2", "x.csv:9"]);
        assert!(
            p.report("x.csv").contains("field `type`: bad\nx.csv:2: field `subtype`"),
            "a line's fields keep their order"
        );
    }
}
