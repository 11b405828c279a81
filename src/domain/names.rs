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

/// A caption or source name a dataset file carries: far beyond any caption.
pub const MAX_IMPORTED_CHARS: usize = 2_000;

/// What is wrong with an imported text field (a caption, a source name),
/// if anything: empty, over [`MAX_IMPORTED_CHARS`], or holding a control or
/// direction-override character (a NUL would reach pages and exports).
pub fn imported_text_problem(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return Some("empty".into());
    }
    plain_text(text, MAX_IMPORTED_CHARS, true).err()
}

/// The embeddings and overrides that turn the text after them around (U+202E).
pub fn direction_override(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Instructions and consent texts are read by people: this is plenty.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// `text` as a person will read it (a study's name, its instructions): at
/// most `max` characters, and no control or direction-override characters
/// (a NUL; U+202E, which turns the text around), line breaks and tabs only
/// where `lines`.
pub fn plain_text(text: &str, max: usize, lines: bool) -> Result<(), String> {
    let n = text.chars().count();
    if n > max {
        return Err(format!("{n} characters; at most {max} are allowed"));
    }
    let allowed = |c: char| lines && matches!(c, '\n' | '\r' | '\t');
    match text.chars().enumerate().find(|&(_, c)| (c.is_control() && !allowed(c)) || direction_override(c)) {
        Some((at, c)) => Err(format!("character U+{:04X} at {} is not allowed", c as u32, at + 1)),
        None => Ok(()),
    }
}

/// Model run names head the rows of `hardneg compare`'s table and the
/// comparison page: the longest accepted, in characters.
pub const MAX_RUN_NAME_CHARS: usize = 200;

/// Refuses an empty name, one with control characters (a newline splits
/// the table's row) and one over [`MAX_RUN_NAME_CHARS`] characters.
pub fn check_run_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the run name is empty".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!("the run name holds the control character {c:?}"));
    }
    // As a study's name: the table's text must read as it was written.
    if let Some(c) = name.chars().find(|&c| direction_override(c)) {
        return Err(format!("the run name holds the direction override {c:?}"));
    }
    if name.trim() != name {
        return Err("the run name starts or ends with spaces".into());
    }
    let chars = name.chars().count();
    if chars > MAX_RUN_NAME_CHARS {
        return Err(format!("the run name has {chars} characters, at most {MAX_RUN_NAME_CHARS} are allowed"));
    }
    Ok(())
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

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn text_people_read_is_bounded_and_plain() {
        assert_eq!(plain_text("Step 3 (BiVLC)", 200, false), Ok(()));
        assert_eq!(plain_text("Line one.\nLine two.\tTabbed.", 100, true), Ok(()));
        assert_eq!(plain_text("a\nb", 100, false).unwrap_err(), "character U+000A at 2 is not allowed");
        assert_eq!(plain_text("ab\0", 100, true).unwrap_err(), "character U+0000 at 3 is not allowed");
        assert_eq!(plain_text("x\u{202E}y", 100, true).unwrap_err(), "character U+202E at 2 is not allowed");
        assert_eq!(plain_text(&"é".repeat(201), 200, false).unwrap_err(), "201 characters; at most 200 are allowed");
        assert_eq!(imported_text_problem(" \t "), Some("empty".into()));
        assert_eq!(imported_text_problem("a\u{7}b"), Some("character U+0007 at 2 is not allowed".into()));
        assert_eq!(imported_text_problem("A dog on a sofa."), None);
    }

    #[test]
    fn run_names_are_one_short_line() {
        for ok in ["CLIP ViT-B/32", "clip+ft", "a&b", "x#1", "é🙂", &"x".repeat(MAX_RUN_NAME_CHARS)] {
            assert_eq!(check_run_name(ok), Ok(()), "{ok:?}");
        }
        // Counted in characters, not bytes.
        assert_eq!(check_run_name(&"é".repeat(MAX_RUN_NAME_CHARS)), Ok(()));
        for (bad, says) in [
            ("", "empty"),
            ("   ", "empty"),
            ("two\nlines", "'\\n'"),
            ("tab\there", "'\\t'"),
            ("nul\0", "'\\0'"),
            ("esc\u{1b}[31m", "'\\u{1b}'"),
            ("del\u{7f}", "'\\u{7f}'"),
            ("c1\u{85}", "'\\u{85}'"),
            ("rtl\u{202e}evil", "direction override"),
            ("  padded  ", "spaces"),
        ] {
            let e = check_run_name(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let e = check_run_name(&"x".repeat(3000)).unwrap_err();
        assert!(e.contains("3000 characters, at most 200"), "{e}");
    }
}
