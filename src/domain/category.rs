//! SugarCrepe's hard-negative taxonomy: a type (how the caption was changed)
//! and a subtype (what was changed). Parsed once at the edge, typed after.
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NegType {
    Replace,
    Swap,
    Add,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subtype {
    Obj,
    Att,
    Rel,
}

/// A (type, subtype) pair that SugarCrepe actually produces: swap has no `rel`
/// and add has no `rel`, so only 7 of the 9 combinations exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Category {
    pub neg_type: NegType,
    pub subtype: Subtype,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CategoryError {
    #[error("unknown type {0:?} (expected replace, swap or add)")]
    Type(String),
    #[error("unknown subtype {0:?} (expected obj, att or rel)")]
    Subtype(String),
    #[error("type {0} has no subtype {1} in SugarCrepe")]
    Combination(NegType, Subtype),
}

impl NegType {
    pub const ALL: [NegType; 3] = [NegType::Replace, NegType::Swap, NegType::Add];
    pub fn as_str(self) -> &'static str {
        match self {
            NegType::Replace => "replace",
            NegType::Swap => "swap",
            NegType::Add => "add",
        }
    }
    pub fn parse(s: &str) -> Result<Self, CategoryError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "replace" => Ok(NegType::Replace),
            "swap" => Ok(NegType::Swap),
            "add" => Ok(NegType::Add),
            _ => Err(CategoryError::Type(s.to_string())),
        }
    }
}

impl Subtype {
    pub const ALL: [Subtype; 3] = [Subtype::Obj, Subtype::Att, Subtype::Rel];
    pub fn as_str(self) -> &'static str {
        match self {
            Subtype::Obj => "obj",
            Subtype::Att => "att",
            Subtype::Rel => "rel",
        }
    }
    pub fn parse(s: &str) -> Result<Self, CategoryError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "obj" => Ok(Subtype::Obj),
            "att" => Ok(Subtype::Att),
            "rel" => Ok(Subtype::Rel),
            _ => Err(CategoryError::Subtype(s.to_string())),
        }
    }
}

impl Category {
    /// The seven pairs SugarCrepe generates, in the paper's table order.
    pub const ALL: [Category; 7] = [
        Category::new_unchecked(NegType::Replace, Subtype::Obj),
        Category::new_unchecked(NegType::Replace, Subtype::Att),
        Category::new_unchecked(NegType::Replace, Subtype::Rel),
        Category::new_unchecked(NegType::Swap, Subtype::Obj),
        Category::new_unchecked(NegType::Swap, Subtype::Att),
        Category::new_unchecked(NegType::Add, Subtype::Obj),
        Category::new_unchecked(NegType::Add, Subtype::Att),
    ];

    const fn new_unchecked(neg_type: NegType, subtype: Subtype) -> Self {
        Category { neg_type, subtype }
    }

    pub fn new(neg_type: NegType, subtype: Subtype) -> Result<Self, CategoryError> {
        match (neg_type, subtype) {
            (NegType::Swap | NegType::Add, Subtype::Rel) => Err(CategoryError::Combination(neg_type, subtype)),
            _ => Ok(Category { neg_type, subtype }),
        }
    }

    pub fn parse(neg_type: &str, subtype: &str) -> Result<Self, CategoryError> {
        Category::new(NegType::parse(neg_type)?, Subtype::parse(subtype)?)
    }
}

impl fmt::Display for NegType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Subtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.neg_type, self.subtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_sugarcrepe_pair_case_insensitively() {
        for c in Category::ALL {
            let upper = (c.neg_type.as_str().to_uppercase(), c.subtype.as_str().to_uppercase());
            assert_eq!(Category::parse(&upper.0, &upper.1), Ok(c));
        }
    }

    #[test]
    fn refuses_unknown_and_impossible_pairs() {
        assert_eq!(Category::parse("move", "obj"), Err(CategoryError::Type("move".into())));
        assert_eq!(Category::parse("swap", "thing"), Err(CategoryError::Subtype("thing".into())));
        assert!(matches!(Category::parse("swap", "rel"), Err(CategoryError::Combination(..))));
        assert!(matches!(Category::parse("add", "rel"), Err(CategoryError::Combination(..))));
    }

    #[test]
    fn displays_as_type_slash_subtype() {
        assert_eq!(Category::ALL[2].to_string(), "replace/rel");
        assert_eq!(Category::ALL.len(), 7);
    }
}
