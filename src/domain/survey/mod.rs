//! What a survey kind is made of: an item, what the annotator sees
//! (prompt and options in a seeded on-screen order), the stored value.
//! The kinds themselves and their list live in the `kinds` folder, above this
//! pure core; code here that needs the list takes it as a parameter.
use serde::{Deserialize, Serialize};

mod kind;
pub use kind::{AnswerFn, Attention, Curation, KindSpec, Needs, Report, Role, SurveyKind};

/// Everything a kind may draw from an instance. Image fields are content
/// hashes; the shell turns them into URLs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemData {
    pub caption: String,
    pub negative_caption: String,
    pub positive_image: Option<String>,
    pub candidate_images: Vec<String>,
    /// The generated image an earlier study chose (Step 4's second image).
    pub chosen_image: Option<String>,
    /// A second positive caption with the same meaning (SugarCrepe++'s P2).
    pub paraphrase: Option<String>,
    /// A second hard negative (SugarCrepe's A/B/Tie; `negative_caption` is A).
    pub negative_b: Option<String>,
    /// The caption type assigned to a writing item (HNC), as imported.
    pub caption_type: Option<String>,
    /// Which of a kind's several questions about the instance (human baseline: 0–3).
    pub query: u8,
}

/// What a final answer means for the instance in the curation pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Step 3: an image shows the negative caption; Step 4: the real image wins.
    Kept,
    /// Step 3 "None": no candidate shows the negative caption.
    Discarded,
    /// Step 4: the generated image matches the original caption better.
    Ambiguous,
    /// Step 4: both images match the original caption.
    Both,
}

impl Verdict {
    pub fn keeps(self) -> bool {
        self == Verdict::Kept
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Kept => "kept",
            Verdict::Discarded => "discarded",
            Verdict::Ambiguous => "ambiguous",
            Verdict::Both => "both",
        }
    }
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
    /// Instructions for this question when they differ from the study's
    /// (the human baseline's two parts).
    pub instructions: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SurveyError {
    #[error("unknown option {given:?}; expected {expected}")]
    UnknownOption { given: String, expected: String },
    #[error("item is not usable for this survey kind: {0}")]
    BadItem(String),
    /// An answer that breaks a kind's own rule, said in the kind's words.
    #[error("{0}")]
    Refused(String),
}

impl ShownOption {
    /// The option at screen position `pos`: letter A, B, ... with keys `1`/`a`, `2`/`b`, ...
    pub fn lettered(pos: usize, image: Option<String>, text: Option<String>, value: &str) -> ShownOption {
        let letter = char::from(b'A' + pos as u8);
        ShownOption {
            id: letter.to_string(),
            label: letter.to_string(),
            keys: vec![char::from(b'1' + pos as u8), letter.to_ascii_lowercase()],
            image,
            text,
            value: value.to_string(),
        }
    }

    /// A fixed extra answer after the lettered ones (None, Both).
    pub fn extra(id: &str, label: &str, keys: &[char]) -> ShownOption {
        ShownOption {
            id: id.into(),
            label: label.into(),
            keys: keys.to_vec(),
            image: None,
            text: None,
            value: id.into(),
        }
    }
}

/// Reads an answer naming one option: its id and stored value (most kinds).
pub fn one_option(p: &Presentation, option: &str) -> Result<(String, String), SurveyError> {
    p.resolve(option).map(|o| (o.id.clone(), o.value.clone()))
}

impl Presentation {
    /// Maps the option id an annotator sent to the value to store.
    pub fn resolve(&self, option_id: &str) -> Result<&ShownOption, SurveyError> {
        self.options.iter().find(|o| o.id.eq_ignore_ascii_case(option_id)).ok_or_else(|| SurveyError::UnknownOption {
            given: option_id.to_string(),
            expected: format!("one of {}", self.options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(", ")),
        })
    }

    /// The option a key press picks, if any (the browser's keys, as the kinds' tests check them).
    #[cfg(test)]
    pub fn option_for_key(&self, key: char) -> Option<&ShownOption> {
        let key = key.to_ascii_lowercase();
        self.options.iter().find(|o| o.keys.contains(&key))
    }
}
