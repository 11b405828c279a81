//! The category mapping agreement is measured with (`agreement` in a study spec).
use serde::{Deserialize, Serialize};

/// Which answers count as the same category when measuring agreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    /// Every stored value is its own category (A–D's images and None; real/generated/Both).
    Full,
    /// Does the answer keep the instance (BiVLC Step 3: any image vs None).
    Binary,
}

impl Mapping {
    pub fn parse(s: &str) -> Option<Mapping> {
        match s {
            "full" => Some(Mapping::Full),
            "binary" => Some(Mapping::Binary),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mapping::Full => "full",
            Mapping::Binary => "binary",
        }
    }
}
