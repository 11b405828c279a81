//! A problem with one field of a `[link]` table, shared by its parsers.

/// A problem with one field of the spec: its name and what is wrong
/// (`domain::study` wraps it in its `SpecError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}
