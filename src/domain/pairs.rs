//! Caption pairs as researchers bring them (HNC): `image, type`, optionally
//! `id`, and optionally `caption, negative_caption` (CSV or JSON Lines).
//! Without captions a row is an image to write a pair for (a
//! `caption_writing` item); with them it is a written pair, the shape the
//! validated pairs' export has, so an export imports back as a dataset.
//! Row checks are pure; the shell reads the file and images.
use super::answer_text::reads_the_same;
use super::candidates::check_file_name;
use super::category::{Category, NegType, Subtype};
use super::results::FieldError;

/// SugarCrepe's category columns are required of every instance; HNC's
/// types are their own (`instances.caption_type`), so pairs carry this
/// fixed placeholder there, which nothing of HNC's protocol reads.
pub const PLACEHOLDER: Category = Category { neg_type: NegType::Replace, subtype: Subtype::Obj };

pub const MAX_TYPE_CHARS: usize = 40;
pub const MAX_CAPTION_CHARS: usize = 300;

/// Which optional columns a file has; the checked columns are [`Columns::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    pub id: bool,
    pub captions: bool,
}

impl Columns {
    /// From a header's (or a first JSON object's) column names.
    pub fn of<S: AsRef<str>>(names: &[S]) -> Columns {
        let has = |c: &str| names.iter().any(|n| n.as_ref().trim().eq_ignore_ascii_case(c));
        Columns { id: has("id"), captions: has("caption") || has("negative_caption") }
    }

    pub fn names(self) -> &'static [&'static str] {
        match (self.id, self.captions) {
            (false, false) => &["image", "type"],
            (true, false) => &["image", "type", "id"],
            (false, true) => &["image", "type", "caption", "negative_caption"],
            (true, true) => &["image", "type", "id", "caption", "negative_caption"],
        }
    }
}

/// One checked row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRow {
    pub image: String,
    pub caption_type: String,
    pub id: Option<String>,
    /// (positive, negative) when the file has captions.
    pub pair: Option<(String, String)>,
}

fn text_problem(text: &str, max: usize) -> Option<String> {
    let n = text.chars().count();
    if text.is_empty() {
        Some("empty".into())
    } else if n > max {
        Some(format!("{n} characters; at most {max} are allowed"))
    } else {
        text.chars().find(|c| c.is_control()).map(|c| format!("control character U+{:04X}", c as u32))
    }
}

/// Checks one row's values, in `columns.names()` order; every bad field is named.
pub fn pair_row(columns: Columns, v: &[&str]) -> Result<PairRow, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut at = 2;
    if let Err(message) = check_file_name(v[0]) {
        errors.push(FieldError { field: "image", message });
    }
    let caption_type = v[1].trim();
    if let Some(message) = text_problem(caption_type, MAX_TYPE_CHARS) {
        errors.push(FieldError { field: "type", message });
    }
    let id = columns.id.then(|| {
        at += 1;
        v[2].trim().to_string()
    });
    if let Some(message) = id.as_deref().and_then(|i| text_problem(i, MAX_TYPE_CHARS)) {
        errors.push(FieldError { field: "id", message });
    }
    let pair = columns.captions.then(|| (v[at].trim().to_string(), v[at + 1].trim().to_string()));
    if let Some((positive, negative)) = &pair {
        for (field, text) in [("caption", positive), ("negative_caption", negative)] {
            if let Some(message) = text_problem(text, MAX_CAPTION_CHARS) {
                errors.push(FieldError { field, message });
            }
        }
        if !positive.is_empty() && reads_the_same(positive, negative) {
            let message = "the same text as caption; a negative must differ".into();
            errors.push(FieldError { field: "negative_caption", message });
        }
    }
    match errors.is_empty() {
        true => Ok(PairRow { image: v[0].to_string(), caption_type: caption_type.to_string(), id, pair }),
        false => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ITEMS: Columns = Columns { id: false, captions: false };
    const PAIRS: Columns = Columns { id: true, captions: true };

    #[test]
    fn the_optional_columns_are_found_in_any_case() {
        assert_eq!(Columns::of(&["image", "type"]), ITEMS);
        assert_eq!(Columns::of(&["Image", "TYPE", "id", "caption", "negative_caption"]), PAIRS);
        assert_eq!(
            Columns::of(&["image", "type", "negative_caption"]).names().len(),
            4,
            "a lone caption column is checked as a pair"
        );
    }

    #[test]
    fn a_writing_item_is_an_image_and_a_type_kept_as_written() {
        let r = pair_row(ITEMS, &["hnc/1.png", " Relation "]).unwrap();
        assert_eq!((r.image.as_str(), r.caption_type.as_str(), r.id, r.pair), ("hnc/1.png", "Relation", None, None));
    }

    #[test]
    fn a_pair_row_keeps_its_id_and_captions() {
        let r = pair_row(PAIRS, &["a.png", "counting", "p7", " Two dogs. ", "Three dogs."]).unwrap();
        assert_eq!(r.id.as_deref(), Some("p7"));
        assert_eq!(r.pair, Some(("Two dogs.".into(), "Three dogs.".into())));
    }

    #[test]
    fn every_bad_field_is_named() {
        let fields = |c, v: &[&str]| pair_row(c, v).unwrap_err().into_iter().map(|e| e.field).collect::<Vec<_>>();
        assert_eq!(fields(ITEMS, &["../x.png", ""]), ["image", "type"]);
        assert_eq!(fields(PAIRS, &["a.png", "t", "", "A dog.", "a  DOG."]), ["id", "negative_caption"]);
        assert_eq!(
            fields(PAIRS, &["a.png", &"t".repeat(41), "1", "", "x\u{7}"]),
            ["type", "caption", "negative_caption"]
        );
        let long = "x".repeat(301);
        let e = pair_row(PAIRS, &["a.png", "t", "1", &long, "b"]).unwrap_err();
        assert_eq!(e[0].message, "301 characters; at most 300 are allowed");
    }
}
