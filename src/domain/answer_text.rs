//! Free-text parts of answers (docs/study-spec.md, "Free-text answers"). A
//! kind that takes text declares its [`TextField`]s (the triplet check one,
//! HNC's caption writing two); the stored value stays a small categorical
//! part (agreement, distributions) and each text is kept beside it, one row
//! per field. Every text from a client passes [`check_texts`] before
//! anything is stored.

use super::resolution::{ResolveRule, ResolvedBy};

/// The text box a kind's answer may carry.
pub struct TextField {
    /// The field's name in errors, the API's `text` documentation and exports.
    pub name: &'static str,
    /// What the annotator sees beside the box.
    pub label: &'static str,
    /// At most this many characters (Unicode scalar values) after trimming.
    pub max_chars: usize,
    /// Whether an answer storing a given value needs the text, may carry it, or must not.
    pub wanted: fn(&str) -> TextUse,
    /// A field this one must differ from (HNC: the negative from the
    /// positive), compared after [`normalise`].
    pub differs_from: Option<&'static str>,
    /// The kind's rule for when the text goes with an answer, said after a
    /// refusal of a missing or unwanted text (empty: nothing to add).
    pub rule: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextUse {
    Required,
    Optional,
    Refused,
}

/// Why a text was refused; the message names the box as the annotator
/// sees it and the field as the API knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub field: &'static str,
    /// The box's label; empty where the text matched no box.
    pub label: &'static str,
    pub reason: String,
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.label {
            "" => write!(f, "field {:?}: {}", self.field, self.reason),
            label => write!(f, "{} (field {:?}): {}", short(label), self.field, self.reason),
        }
    }
}

impl std::error::Error for TextError {}

/// A box's label without its parenthesised gloss ("Positive caption (true
/// of the image)" is "Positive caption" in a message).
fn short(label: &str) -> &str {
    label.split(" (").next().unwrap_or(label)
}

impl TextField {
    /// The text to store with an answer storing `value`: trimmed, blank as
    /// none, bounded, free of control characters (a single line), and given
    /// exactly when the value wants it.
    pub fn check(&self, value: &str, text: Option<&str>) -> Result<Option<String>, TextError> {
        let refuse = |reason: String| TextError { field: self.name, label: self.label, reason };
        // Blank also when only invisible characters are left (a zero-width space is no correction).
        let text = text.map(str::trim).filter(|t| t.chars().any(|c| !invisible(c) && !c.is_whitespace()));
        if let Some(t) = text {
            let n = t.chars().count();
            if n > self.max_chars {
                return Err(refuse(format!("{n} characters; at most {} are allowed", self.max_chars)));
            }
            if let Some((at, c)) = t.chars().enumerate().find(|&(_, c)| c.is_control() || not_plain(c)) {
                return Err(refuse(format!(
                    "control character U+{:04X} at character {}; only one line of plain text is allowed",
                    c as u32,
                    at + 1
                )));
            }
        }
        let with_rule = |said: String| match self.rule {
            "" => said,
            rule => format!("{said} ({rule})"),
        };
        match ((self.wanted)(value), text) {
            (TextUse::Required, None) => Err(refuse(with_rule("required with this answer".into()))),
            (TextUse::Refused, Some(_)) => Err(refuse(with_rule("must be empty with this answer".into()))),
            (_, t) => Ok(t.map(str::to_string)),
        }
    }
}

/// Characters that show nothing: Unicode's default-ignorable code points
/// (zero-width spaces and joiners, direction marks such as U+200E from
/// pasted right-to-left text, variation selectors, a soft hyphen, fillers).
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Not one line of plain text, though not control characters: the line and
/// paragraph separators, and the direction overrides that turn text around.
fn not_plain(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}') || crate::domain::names::direction_override(c)
}

/// Two imported texts that read the same on a page: [`normalise`]d after
/// Unicode canonical composition (NFC), so `cafe` + U+0301 is `café`.
pub fn reads_the_same(a: &str, b: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    let nfc = |t: &str| normalise(&t.nfc().collect::<String>());
    nfc(a) == nfc(b)
}

/// A text as compared for sameness: invisible characters dropped, runs of
/// whitespace collapsed, lower case.
pub fn normalise(text: &str) -> String {
    let seen: String = text.chars().filter(|&c| !invisible(c)).collect();
    seen.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The texts to store with an answer storing `value`: each of `fields`
/// checked ([`TextField::check`]) against what was `given` by name, names
/// that are no field refused, and each `differs_from` rule held.
pub fn check_texts(
    fields: &'static [TextField],
    value: &str,
    given: &[(&str, &str)],
) -> Result<Vec<(&'static str, String)>, TextError> {
    let unknown = given.iter().find(|(n, t)| !t.trim().is_empty() && !fields.iter().any(|f| f.name == *n));
    if let Some((name, _)) = unknown {
        let known: Vec<&str> = fields.iter().map(|f| f.name).collect();
        let reason = match known.is_empty() {
            true => format!("{name:?}: this kind's answers carry no text"),
            false => format!("{name:?}: no such text field; this kind's are {}", known.join(", ")),
        };
        // Named by the request's field it came in: `text` (no name) or the `texts` map.
        let field = if name.is_empty() { "text" } else { "texts" };
        return Err(TextError { field, label: "", reason });
    }
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for field in fields {
        let text = given.iter().find(|(n, _)| *n == field.name).map(|(_, t)| *t);
        if let Some(t) = field.check(value, text)? {
            out.push((field.name, t));
        }
    }
    for field in fields {
        let Some(other) = field.differs_from else { continue };
        let text = |name: &str| out.iter().find(|(n, _)| *n == name).map(|(_, t)| normalise(t));
        if let (Some(mine), Some(theirs)) = (text(field.name), text(other)) {
            if mine == theirs {
                let other = fields.iter().find(|f| f.name == other).map_or(other, |f| short(f.label));
                return Err(TextError {
                    field: field.name,
                    label: field.label,
                    reason: format!("the same text as {other} (ignoring case and spacing); it must differ"),
                });
            }
        }
    }
    Ok(out)
}

/// A text with its runs of whitespace collapsed to one space and trimmed:
/// how texts are compared, and the form an agreed text is exported in (so
/// that it does not depend on whose answer came first).
pub fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether answers that stored the same value also agree on their texts:
/// equal once runs of whitespace are collapsed (a text and no text differ).
pub fn texts_agree(texts: &[Option<&str>]) -> bool {
    let norm = |t: &Option<&str>| t.map(collapsed);
    texts.windows(2).all(|w| norm(&w[0]) == norm(&w[1]))
}

/// How an item settled on `by` stands when the answers that stored its value
/// differ in their texts: `first` and `primary` pick a text as they pick a
/// value (the earliest answer's; the primary annotator's, if it gave that
/// value); anything else that settled it (all agreeing, a model, the stop
/// rule) chose a value, not a text, so a person adjudicates (None). An
/// adjudicated item stays as the adjudicator settled it.
pub fn settled_despite_texts(rule: ResolveRule, by: ResolvedBy, primary_gave_it: bool) -> Option<ResolvedBy> {
    match (by, rule) {
        (ResolvedBy::Adjudication, _) => Some(ResolvedBy::Adjudication),
        (_, ResolveRule::First) => Some(ResolvedBy::First),
        (_, ResolveRule::Primary) if primary_gave_it => Some(ResolvedBy::Primary),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELD: TextField = TextField {
        name: "corrected_p2",
        label: "Corrected P2",
        max_chars: 10,
        wanted: |v| match v {
            "needs" => TextUse::Required,
            "refuses" => TextUse::Refused,
            _ => TextUse::Optional,
        },
        differs_from: None,
        rule: "",
    };

    const PAIR: [TextField; 2] = [
        TextField {
            name: "positive",
            label: "P",
            max_chars: 20,
            wanted: |_| TextUse::Required,
            differs_from: None,
            rule: "",
        },
        TextField {
            name: "negative",
            label: "N",
            max_chars: 20,
            wanted: |_| TextUse::Required,
            differs_from: Some("positive"),
            rule: "",
        },
    ];

    #[test]
    fn several_fields_are_checked_by_name_and_must_differ_where_declared() {
        let out = check_texts(&PAIR, "w", &[("negative", " a cat "), ("positive", "a dog")]).unwrap();
        assert_eq!(out, [("positive", "a dog".to_string()), ("negative", "a cat".to_string())]);
        let e = check_texts(&PAIR, "w", &[("positive", "a  Dog"), ("negative", "A dog ")]).unwrap_err();
        assert_eq!(e.field, "negative");
        assert_eq!(
            e.to_string(),
            "N (field \"negative\"): the same text as P (ignoring case and spacing); it must differ"
        );
        let e = check_texts(&PAIR, "w", &[("positive", "a dog")]).unwrap_err();
        assert_eq!((e.field, e.reason.as_str()), ("negative", "required with this answer"));
        let e = check_texts(&PAIR, "w", &[("positive", "a"), ("negative", "b"), ("caption", "c")]).unwrap_err();
        assert!(e.to_string().contains("\"caption\": no such text field; this kind's are positive, negative"), "{e}");
        assert_eq!(e.field, "texts", "a name in the texts map");
        let e = check_texts(&PAIR, "w", &[("", "a caption")]).unwrap_err();
        assert_eq!(e.field, "text", "the single text");
        let e = check_texts(&PAIR, "w", &[("positive", "a"), ("negative", "b\u{7}")]).unwrap_err();
        assert_eq!(e.field, "negative");
        // What shows nothing changes nothing: the same text, or no text.
        let e = check_texts(&PAIR, "w", &[("positive", "a red dog"), ("negative", "a red\u{200B} dog")]).unwrap_err();
        assert!(e.to_string().contains("the same text as P"), "{e}");
        let e = check_texts(&PAIR, "w", &[("positive", "a dog"), ("negative", "\u{200B}\u{FEFF}")]).unwrap_err();
        assert_eq!(e.reason, "required with this answer");
        for odd in ["a\u{2028}b", "a\u{202E}b"] {
            let e = check_texts(&PAIR, "w", &[("positive", "a dog"), ("negative", odd)]).unwrap_err();
            assert!(e.reason.contains("only one line of plain text"), "{odd:?}: {e}");
        }
        let e = check_texts(&[], "w", &[("text", "x")]).unwrap_err();
        assert!(e.to_string().contains("carry no text"), "{e}");
        assert_eq!(check_texts(&[], "w", &[]).unwrap(), []);
    }

    #[test]
    fn normalise_collapses_spacing_and_case() {
        assert_eq!(normalise("  A  red\u{a0}Dog "), "a red dog");
    }

    #[test]
    fn trims_and_treats_blank_as_no_text() {
        assert_eq!(FIELD.check("any", Some("  a dog  ")).unwrap().as_deref(), Some("a dog"));
        assert_eq!(FIELD.check("any", Some("   ")).unwrap(), None);
        assert_eq!(FIELD.check("refuses", Some(" ")).unwrap(), None, "blank is no text");
        assert_eq!(FIELD.check("any", None).unwrap(), None);
    }

    #[test]
    fn texts_that_read_the_same_are_the_same() {
        for (a, b) in [
            ("A café by the sea.", "A cafe\u{301} by the sea."),
            ("A dog  on a mat.", "a dog\ton a\u{a0}mat."),
            ("A red car.", "A r\u{200b}ed c\u{ad}ar."),
            ("A dog on a mat.", "A dog\u{200e} on a\u{61c} mat\u{fe0f}.\u{e0041}"),
        ] {
            assert!(reads_the_same(a, b), "{a:?} {b:?}");
        }
        assert!(!reads_the_same("A red car.", "A red cat."));
        assert!(!reads_the_same("A café.", "A cafe."), "an accent is a change");
    }

    #[test]
    fn bounds_the_length_in_characters_not_bytes() {
        assert!(FIELD.check("any", Some("éééééééééé")).is_ok(), "10 characters, 20 bytes");
        let e = FIELD.check("any", Some("abcdefghijk")).unwrap_err();
        assert_eq!(e.to_string(), "Corrected P2 (field \"corrected_p2\"): 11 characters; at most 10 are allowed");
    }

    #[test]
    fn refuses_control_characters_with_their_place() {
        for (text, code, at) in [
            ("a\nb", "000A", 2),
            ("ab\u{7}", "0007", 3),
            ("a\tb", "0009", 2),
            ("x\u{85}y", "0085", 2),
            ("\u{7f}x", "007F", 1),
        ] {
            let e = FIELD.check("any", Some(text)).unwrap_err().to_string();
            assert!(
                e.starts_with("Corrected P2 (field \"corrected_p2\")")
                    && e.contains(code)
                    && e.contains(&format!("at character {at}")),
                "{e}"
            );
        }
        assert!(FIELD.check("any", Some("\na\n")).is_ok(), "surrounding newlines are trimmed");
    }

    #[test]
    fn the_value_decides_whether_text_is_needed() {
        let e = FIELD.check("needs", None).unwrap_err().to_string();
        assert_eq!(e, "Corrected P2 (field \"corrected_p2\"): required with this answer");
        let e = FIELD.check("refuses", Some("x")).unwrap_err().to_string();
        assert_eq!(e, "Corrected P2 (field \"corrected_p2\"): must be empty with this answer");
        assert!(FIELD.check("needs", Some("x")).is_ok() && FIELD.check("refuses", None).is_ok());
    }

    #[test]
    fn a_text_disagreement_is_settled_only_by_first_or_primary() {
        use ResolveRule as R;
        use ResolvedBy as B;
        assert_eq!(settled_despite_texts(R::First, B::Unanimous, false), Some(B::First));
        assert_eq!(settled_despite_texts(R::Primary, B::Unanimous, true), Some(B::Primary));
        assert_eq!(settled_despite_texts(R::Primary, B::Unanimous, false), None, "the primary gave another value");
        for by in [B::Unanimous, B::DawidSkene, B::Mace, B::Adaptive] {
            for rule in [R::Adjudication, R::DawidSkene, R::Mace] {
                assert_eq!(settled_despite_texts(rule, by, true), None, "{rule:?} {by:?}");
            }
        }
        for rule in ResolveRule::ALL {
            assert_eq!(settled_despite_texts(rule, B::Adjudication, false), Some(B::Adjudication));
        }
        assert_eq!(collapsed("  Same \n  fix\tone. "), "Same fix one.");
    }

    #[test]
    fn texts_agree_up_to_whitespace() {
        assert!(texts_agree(&[Some("a  dog"), Some("a dog")]));
        assert!(texts_agree(&[None, None]) && texts_agree(&[]) && texts_agree(&[Some("x")]));
        assert!(!texts_agree(&[Some("a dog"), Some("A dog")]), "case matters");
        assert!(!texts_agree(&[Some("a dog"), None]));
        assert!(!texts_agree(&[Some("a"), Some("a"), Some("b")]));
    }
}
