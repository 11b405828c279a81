//! The study spec the unit tests start from (here and in `kinds/tests.rs`):
//! every field at its default, annotators "all"; a test changes what it checks.
use super::{AnnotatorsSpec, AssignmentSpec, StudySpec};

pub fn spec(kind: &str) -> StudySpec {
    StudySpec {
        name: "s".into(),
        kind: kind.into(),
        dataset: "demo".into(),
        instructions: None,
        annotators: Some(AnnotatorsSpec::Keyword("all".into())),
        seed: None,
        source: None,
        agreement: None,
        resolve: None,
        primary: None,
        assignment: AssignmentSpec::default(),
        access: None,
        link: None,
        vocabulary: None,
        prolific: None,
        vocabulary_strict: None,
    }
}
