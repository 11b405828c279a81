//! SugarCrepe's A/B/Tie items as researchers bring them: `caption,
//! negative_a, source_a, negative_b, source_b, type` (CSV or JSON Lines),
//! text only. `type` names the subset as SugarCrepe's files do
//! (`replace_att`, `swap-obj`, `add/obj`). Row checks are pure.
use super::answer_text::reads_the_same;
use super::category::{Category, CategoryError};
use super::results::FieldError;

pub const COLUMNS: [&str; 6] = ["caption", "negative_a", "source_a", "negative_b", "source_b", "type"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbPair {
    pub caption: String,
    pub negative_a: String,
    pub source_a: String,
    pub negative_b: String,
    pub source_b: String,
    pub category: Category,
}

/// Checks one row's values, in [`COLUMNS`] order; every bad field is named.
pub fn ab_pair(v: &[&str]) -> Result<AbPair, Vec<FieldError>> {
    let mut errors = Vec::new();
    for (col, text) in v.iter().enumerate().take(5) {
        if let Some(message) = crate::domain::names::imported_text_problem(text) {
            errors.push(FieldError { field: COLUMNS[col], message });
        }
    }
    // Case and spacing aside, as the import of pairs compares.
    let same = |a: &str, b: &str| !a.trim().is_empty() && reads_the_same(a, b);
    for (col, field) in [(1, "negative_a"), (3, "negative_b")] {
        if same(v[0], v[col]) {
            errors.push(FieldError {
                field,
                message: "the same text as caption; a negative must change something".into(),
            });
        }
    }
    if same(v[1], v[3]) {
        // A/B/Tie over one text: any answer is noise, yet it would count as an item's vote.
        errors.push(FieldError {
            field: "negative_b",
            message: "the same text as negative_a; the two sources' negatives must differ".into(),
        });
    }
    if same(v[2], v[4]) {
        errors.push(FieldError { field: "source_b", message: "the same source as source_a; compare two".into() });
    }
    let category = match v[5].trim().split_once(['_', '-', '/']) {
        None => Err(format!("{:?} is not a subset such as replace_att or swap_obj", v[5])),
        Some((t, s)) => Category::parse(t, s).map_err(|e: CategoryError| e.to_string()),
    };
    let category = category.map_err(|message| errors.push(FieldError { field: "type", message }));
    match category {
        Ok(category) if errors.is_empty() => Ok(AbPair {
            caption: v[0].trim().to_string(),
            negative_a: v[1].trim().to_string(),
            source_a: v[2].trim().to_string(),
            negative_b: v[3].trim().to_string(),
            source_b: v[4].trim().to_string(),
            category,
        }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_row_with_any_subset_spelling() {
        for t in ["replace_att", "replace-att", "REPLACE/att"] {
            let p = ab_pair(&["A red car.", "A blue car.", "SugarCrepe", "A car red.", "ARO", t]).unwrap();
            assert_eq!((p.category.to_string(), p.source_b.as_str()), ("replace/att".into(), "ARO"));
        }
    }

    #[test]
    fn every_bad_field_is_named() {
        let e = ab_pair(&["A red car.", "", "ARO", "A car red.", "ARO", "swap_rel"]).unwrap_err();
        let fields: Vec<_> = e.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["negative_a", "source_b", "type"]);
        assert!(e[2].message.contains("swap has no subtype rel"), "{}", e[2].message);
        let e = ab_pair(&["a", "b", "x", "c", "y", "replace"]).unwrap_err();
        assert!(e[0].message.contains("not a subset"), "{}", e[0].message);
        let e = ab_pair(&["A red car.", "A blue car.", "x", " A red car. ", "y", "replace_att"]).unwrap_err();
        assert_eq!((e[0].field, e.len()), ("negative_b", 1), "a negative that is the caption");
        let e = ab_pair(&["A red apple.", "A green apple.", "x", " A green apple.", "y", "replace_att"]).unwrap_err();
        assert_eq!((e[0].field, e.len()), ("negative_b", 1), "two equal negatives");
        assert!(e[0].message.contains("same text as negative_a"), "{}", e[0].message);
        let e = ab_pair(&["A red car.", "a RED  car.", "x", "A car red.", "X", "replace_att"]).unwrap_err();
        let fields: Vec<_> = e.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["negative_a", "source_b"], "case and spacing aside");
    }
}
