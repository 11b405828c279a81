//! Dataset names: they appear in file names, URLs, the exported README card
//! and CLI output, so only a plain charset is accepted (docs/import.md).

/// The rule, as error messages state it.
pub const DATASET_NAME_RULE: &str =
    "1 to 64 characters among letters a-z A-Z, digits, '-', '_' and '.', not starting with '.'";

/// Checks a new dataset's name against [`DATASET_NAME_RULE`].
pub fn check_dataset_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        let shown: String = name.chars().take(80).collect();
        let more = if name.chars().count() > 80 { "…" } else { "" };
        Err(format!("dataset name {shown:?}{more} is not allowed: use {DATASET_NAME_RULE}"))
    }
}

/// The name "Start Step 4" gives the next study: the step's label in the
/// name and anything after it (e.g. " (four images)") become the next
/// step's label, else the label is appended.
pub fn next_step_name(name: &str, label: &str, next_label: &str) -> String {
    match name.rfind(label) {
        Some(at) => format!("{}{next_label}", &name[..at]),
        None => format!("{name} - {next_label}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_step_replaces_the_step_in_the_name() {
        assert_eq!(next_step_name("Demo: BiVLC Step 3 (four images)", "Step 3", "Step 4"), "Demo: BiVLC Step 4");
        assert_eq!(next_step_name("E2E Step 3", "Step 3", "Step 4"), "E2E Step 4");
        assert_eq!(next_step_name("S3 pairs", "Step 3", "Step 4"), "S3 pairs - Step 4");
    }

    #[test]
    fn plain_names_pass() {
        for name in ["demo", "bivlc-v1.2", "A_b-9", "x", &"a".repeat(64), "first50"] {
            assert_eq!(check_dataset_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn anything_else_is_refused_naming_the_rule() {
        let long = "a".repeat(65);
        for name in ["", ".hidden", "..", "a b", "a\nb", "<b>x</b>", "a/b", "a\\b", "é", "a%20", "a\"b", long.as_str()]
        {
            let err = check_dataset_name(name).unwrap_err();
            assert!(err.contains(DATASET_NAME_RULE), "{err}");
        }
        let err = check_dataset_name(&"x".repeat(1000)).unwrap_err();
        assert!(err.len() < 300 && err.contains('…'), "the name is shortened in the message: {err}");
    }
}
