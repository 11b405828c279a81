//! A study spec as researchers write it (TOML in the shell), parsed into a
//! typed [`Study`]: once parsed, a study cannot name an unknown kind or rule.
use super::assignment::{Annotators, AssignmentRule};
use super::survey::SurveyKind;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    pub name: String,
    pub kind: String,
    pub dataset: String,
    pub instructions: Option<String>,
    pub annotators: AnnotatorsSpec,
    pub seed: Option<u64>,
    #[serde(default)]
    pub assignment: AssignmentSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AnnotatorsSpec {
    Keyword(String),
    Names(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignmentSpec {
    #[serde(default = "default_rule")]
    pub rule: String,
}

impl Default for AssignmentSpec {
    fn default() -> Self {
        AssignmentSpec { rule: default_rule() }
    }
}

fn default_rule() -> String {
    "each_annotator_all".into()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub name: String,
    pub kind: SurveyKind,
    pub dataset: String,
    pub instructions: String,
    pub annotators: Annotators,
    pub seed: u64,
    pub rule: AssignmentRule,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
}

fn field(field: &'static str, message: impl Into<String>) -> SpecError {
    SpecError::Field { field, message: message.into() }
}

impl StudySpec {
    /// `default_seed` is used when the spec names none, so that a study's
    /// orders are still fixed (and recorded) from creation on.
    pub fn parse(self, default_seed: u64) -> Result<Study, SpecError> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err(field("name", "must not be empty"));
        }
        let kind = SurveyKind::parse(&self.kind).ok_or_else(|| {
            let known: Vec<_> = SurveyKind::ALL.iter().map(|k| k.as_str()).collect();
            field("kind", format!("unknown kind {:?}; known kinds: {}", self.kind, known.join(", ")))
        })?;
        if self.dataset.trim().is_empty() {
            return Err(field("dataset", "must name a dataset"));
        }
        let annotators = match self.annotators {
            AnnotatorsSpec::Keyword(k) if k == "all" => Annotators::All,
            AnnotatorsSpec::Keyword(k) => {
                return Err(field("annotators", format!("expected \"all\" or a list of usernames, got {k:?}")))
            }
            AnnotatorsSpec::Names(names) if names.is_empty() => {
                return Err(field("annotators", "the list is empty"))
            }
            AnnotatorsSpec::Names(names) => Annotators::Named(names),
        };
        let rule = match self.assignment.rule.as_str() {
            "each_annotator_all" => AssignmentRule::EachAnnotatorAll,
            other => {
                return Err(field("assignment.rule", format!("unknown rule {other:?}; known rules: each_annotator_all")))
            }
        };
        let instructions = self
            .instructions
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| kind.default_instructions().to_string());
        Ok(Study {
            name,
            kind,
            dataset: self.dataset.trim().to_string(),
            instructions,
            annotators,
            seed: self.seed.unwrap_or(default_seed),
            rule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(annotators: AnnotatorsSpec) -> StudySpec {
        StudySpec {
            name: " Step 3 ".into(),
            kind: "four_image".into(),
            dataset: "demo".into(),
            instructions: None,
            annotators,
            seed: None,
            assignment: AssignmentSpec::default(),
        }
    }

    #[test]
    fn parses_a_minimal_spec_with_defaults() {
        let s = spec(AnnotatorsSpec::Keyword("all".into())).parse(42).unwrap();
        assert_eq!(s.name, "Step 3");
        assert_eq!(s.kind, SurveyKind::FourImage);
        assert_eq!(s.annotators, Annotators::All);
        assert_eq!(s.seed, 42);
        assert_eq!(s.rule, AssignmentRule::EachAnnotatorAll);
        assert!(s.instructions.starts_with("Select one image"));
    }

    #[test]
    fn names_the_field_that_is_wrong() {
        let mut bad = spec(AnnotatorsSpec::Keyword("everyone".into()));
        assert!(bad.clone().parse(0).unwrap_err().to_string().starts_with("field `annotators`"));
        bad.annotators = AnnotatorsSpec::Names(vec![]);
        assert!(bad.clone().parse(0).is_err());
        bad.annotators = AnnotatorsSpec::Names(vec!["ana".into()]);
        bad.kind = "five_image".into();
        let e = bad.clone().parse(0).unwrap_err().to_string();
        assert!(e.contains("field `kind`") && e.contains("four_image"), "{e}");
        bad.kind = "four_image".into();
        bad.assignment.rule = "random".into();
        assert!(bad.clone().parse(0).unwrap_err().to_string().contains("assignment.rule"));
        bad.assignment.rule = "each_annotator_all".into();
        bad.name = "  ".into();
        assert!(bad.parse(0).unwrap_err().to_string().contains("field `name`"));
    }

    #[test]
    fn keeps_explicit_seed_names_and_instructions() {
        let mut s = spec(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into()]));
        s.seed = Some(5);
        s.instructions = Some("Be careful.".into());
        let s = s.parse(42).unwrap();
        assert_eq!(s.seed, 5);
        assert_eq!(s.instructions, "Be careful.");
        assert_eq!(s.annotators, Annotators::Named(vec!["ana".into(), "bo".into()]));
    }
}
