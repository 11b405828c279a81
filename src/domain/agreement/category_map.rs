//! Raw answer strings → category indices. Agreement is computed on
//! categories, not raw answers, because what counts as "the same answer" is a
//! study decision: BiVLC's Step 3 survey asks which of four images (A–D)
//! matches a caption, or "none"; for the binary "is there a matching image?"
//! question all four letters are one category.
use serde::Serialize;
use std::collections::HashMap;

/// BiVLC Step 3, binary reading: any image option means "an image matches".
pub const BIVLC_STEP3_BINARY: [(&str, &str); 5] =
    [("A", "image"), ("B", "image"), ("C", "image"), ("D", "image"), ("none", "none")];

/// BiVLC Step 3, full reading: every option is its own category.
pub const BIVLC_STEP3_FULL: [&str; 5] = ["A", "B", "C", "D", "none"];

/// Category names (index = category) plus the raw-label lookup. Fields are
/// private so every index is guaranteed to be `< names.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CategoryMap {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl CategoryMap {
    /// Each raw label is its own category, in the given order. A repeated
    /// label keeps its first index (no empty duplicate category is created).
    pub fn identity(labels: &[&str]) -> Self {
        let pairs: Vec<(&str, &str)> = labels.iter().map(|&l| (l, l)).collect();
        Self::grouped(&pairs)
    }

    /// `(raw, category)` pairs; categories are numbered in order of first
    /// appearance. If a raw label is listed twice, the first mapping wins.
    pub fn grouped(pairs: &[(&str, &str)]) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut index = HashMap::new();
        for &(raw, cat) in pairs {
            let next = names.len();
            let c = *by_name.entry(cat).or_insert(next);
            if c == next {
                names.push(cat.to_string());
            }
            index.entry(raw.to_string()).or_insert(c);
        }
        CategoryMap { names, index }
    }

    /// Category of a raw label; `None` for labels outside the map (the caller
    /// decides whether that is an error or e.g. a skipped answer). Exact,
    /// case-sensitive match: normalising is the parser's job, not ours.
    pub fn map(&self, raw: &str) -> Option<usize> {
        self.index.get(raw).copied()
    }

    /// Number of categories `k`.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn name(&self, category: usize) -> Option<&str> {
        self.names.get(category).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bivlc_binary_groups_image_options() {
        let m = CategoryMap::grouped(&BIVLC_STEP3_BINARY);
        assert_eq!(m.len(), 2);
        assert_eq!(m.names(), ["image", "none"]);
        for raw in ["A", "B", "C", "D"] {
            assert_eq!(m.map(raw), Some(0), "{raw}");
        }
        assert_eq!(m.map("none"), Some(1));
        assert_eq!(m.map("image"), None, "category names are not raw labels");
        assert_eq!(m.map("a"), None, "case-sensitive");
        assert_eq!(m.map("E"), None);
        assert_eq!(m.name(1), Some("none"));
        assert_eq!(m.name(2), None);
    }

    #[test]
    fn bivlc_full_is_identity() {
        let m = CategoryMap::identity(&BIVLC_STEP3_FULL);
        assert_eq!(m.len(), 5);
        for (i, raw) in BIVLC_STEP3_FULL.iter().enumerate() {
            assert_eq!(m.map(raw), Some(i));
            assert_eq!(m.name(i), Some(*raw));
        }
    }

    #[test]
    fn duplicates_keep_first() {
        let m = CategoryMap::identity(&["x", "y", "x"]);
        assert_eq!(m.len(), 2);
        assert_eq!(m.map("x"), Some(0));
        let g = CategoryMap::grouped(&[("a", "P"), ("b", "Q"), ("a", "Q")]);
        assert_eq!(g.map("a"), Some(0));
        assert_eq!(g.map("b"), Some(1));
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn empty_map() {
        let m = CategoryMap::identity(&[]);
        assert!(m.is_empty());
        assert_eq!(m.map(""), None);
    }
}
