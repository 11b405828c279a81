//! Survey kinds. A kind turns one study item into what an annotator sees
//! (prompt and options in a seeded on-screen order) and turns the option the
//! annotator picked back into a stored value. Add a kind by copying
//! `four_image.rs`, then adding a variant to [`SurveyKind`].
use serde::{Deserialize, Serialize};

pub mod four_image;

/// Everything a kind may draw from an instance. Image fields are content
/// hashes; the shell turns them into URLs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemData {
    pub caption: String,
    pub negative_caption: String,
    pub positive_image: Option<String>,
    pub candidate_images: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurveyKind {
    /// BiVLC Step 3: a negative caption and four generated images; pick one or None.
    FourImage,
}

/// One choice as shown on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownOption {
    /// What the client sends back ("A".."D", "none").
    pub id: String,
    pub label: String,
    /// Keys that pick this option (lower-case letters and digits).
    pub keys: Vec<char>,
    pub image: Option<String>,
    pub text: Option<String>,
    /// What gets stored; stable across on-screen shuffles.
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Presentation {
    pub prompt_text: String,
    pub prompt_image: Option<String>,
    pub options: Vec<ShownOption>,
    /// The underlying order behind the shown options, stored with the answer.
    pub shown_order: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SurveyError {
    #[error("unknown option {given:?}; expected one of {expected}")]
    UnknownOption { given: String, expected: String },
    #[error("item is not usable for this survey kind: {0}")]
    BadItem(String),
}

impl SurveyKind {
    pub const ALL: [SurveyKind; 1] = [SurveyKind::FourImage];

    pub fn as_str(self) -> &'static str {
        match self {
            SurveyKind::FourImage => "four_image",
        }
    }

    pub fn parse(s: &str) -> Option<SurveyKind> {
        SurveyKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn default_instructions(self) -> &'static str {
        match self {
            SurveyKind::FourImage => four_image::INSTRUCTIONS,
        }
    }

    /// The values an answer can take, in a fixed order (for distributions and agreement).
    pub fn values(self) -> &'static [&'static str] {
        match self {
            SurveyKind::FourImage => &four_image::VALUES,
        }
    }

    pub fn present(self, item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
        match self {
            SurveyKind::FourImage => four_image::present(item, seed),
        }
    }
}

impl Presentation {
    /// Maps the option id an annotator sent to the value to store.
    pub fn resolve(&self, option_id: &str) -> Result<&ShownOption, SurveyError> {
        self.options.iter().find(|o| o.id.eq_ignore_ascii_case(option_id)).ok_or_else(|| {
            SurveyError::UnknownOption {
                given: option_id.to_string(),
                expected: self.options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// The option a key press picks, if any.
    pub fn option_for_key(&self, key: char) -> Option<&ShownOption> {
        let key = key.to_ascii_lowercase();
        self.options.iter().find(|o| o.keys.contains(&key))
    }
}
