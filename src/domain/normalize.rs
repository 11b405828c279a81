//! BiVLC Step 1 caption normalisation.
//!
//! * [`NormalizeMode::Bivlc`] reproduces the released BiVLC captions byte for
//!   byte. The released code is Python:
//!   `s = s.strip(); s = s[0].upper() + s[1:].lower(); if not s.endswith('.'): s += '.'`
//!   so it lower-cases named entities and acronyms too ("TV" → "tv") and
//!   appends "." after other final punctuation ("Wow!" → "Wow!."). Empty or
//!   all-whitespace text gives "" (where Python would raise IndexError).
//! * [`NormalizeMode::PreserveEntities`] is what the paper describes: the same
//!   steps, but words that look like names or acronyms keep their case.
//! * [`NormalizeMode::None`] returns the text untouched, not even trimmed.
//!
//! PreserveEntities rule. The stripped text is split on whitespace into tokens
//! (the whitespace itself is kept as is). A token's *core* is the token with
//! leading and trailing non-alphanumeric characters removed ("(TV)," → "TV").
//! A token keeps its original case, punctuation included, when its core
//!  (a) has an upper-case letter after its first character — acronyms and
//!      camel case: "TV", "USA", "U.S.", "3D", "MP3", "iPhone", "eBay",
//!      "McDonald's", "Coca-Cola"; or
//!  (b) starts with an upper-case letter and the token is not the first of
//!      the text — proper nouns mid-sentence: "Frisbee", "London", "I".
//! Every other token is lower-cased, and, as in bivlc, the first token's first
//! character is upper-cased — unless that token was kept by (a), so "iPhone"
//! does not become "IPhone". A capitalised first word is indistinguishable
//! from sentence case, so "London bridge" and "The bridge" are treated alike.
//! Only the first token counts as a sentence start: after an inner "." the
//! next capital is kept, which is harmless ("Mr. Smith" must keep "Smith").
//! Exception: when the casing carries no information — at least 3 tokens start
//! with a letter and none of them with a lower-case one (ALL CAPS or Title Case
//! captions) — the whole text falls back to bivlc, otherwise every word of
//! "A MAN RIDING A WAVE" would count as an acronym.
//!
//! Whitespace and case follow Python: strip removes what `str.isspace` accepts
//! (Unicode White_Space plus U+001C..U+001F), and upper/lower use full Unicode
//! mappings ("ß" → "SS", final sigma), which Rust's `to_uppercase` /
//! `to_lowercase` also implement.
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NormalizeMode {
    /// Default: the published dataset is what results are compared against.
    #[default]
    Bivlc,
    PreserveEntities,
    None,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown normalisation mode {0:?} (expected one of: bivlc, preserve-entities, none)")]
pub struct NormalizeModeError(pub String);

impl NormalizeMode {
    pub const ALL: [NormalizeMode; 3] = [NormalizeMode::Bivlc, NormalizeMode::PreserveEntities, NormalizeMode::None];

    pub fn as_str(self) -> &'static str {
        match self {
            NormalizeMode::Bivlc => "bivlc",
            NormalizeMode::PreserveEntities => "preserve-entities",
            NormalizeMode::None => "none",
        }
    }

    /// Case-insensitive, surrounding whitespace ignored (like `Category::parse`).
    pub fn parse(s: &str) -> Result<Self, NormalizeModeError> {
        let wanted = s.trim().to_ascii_lowercase();
        NormalizeMode::ALL.into_iter().find(|m| m.as_str() == wanted).ok_or_else(|| NormalizeModeError(s.to_string()))
    }
}

impl FromStr for NormalizeMode {
    type Err = NormalizeModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NormalizeMode::parse(s)
    }
}

impl fmt::Display for NormalizeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub fn normalize(text: &str, mode: NormalizeMode) -> String {
    match mode {
        NormalizeMode::Bivlc => bivlc(text),
        NormalizeMode::PreserveEntities => preserve_entities(text),
        NormalizeMode::None => text.to_owned(),
    }
}

/// Python's `str.isspace`: Unicode White_Space plus the four information
/// separators U+001C..U+001F, which Python counts and Rust does not.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// `t[0].upper() + t[1:].lower()` appended to `out`.
fn push_sentence_case(out: &mut String, t: &str) {
    let mut chars = t.chars();
    if let Some(first) = chars.next() {
        out.extend(first.to_uppercase());
        out.push_str(&chars.as_str().to_lowercase());
    }
}

fn with_final_period(mut s: String) -> String {
    if !s.is_empty() && !s.ends_with('.') {
        s.push('.');
    }
    s
}

fn bivlc(text: &str) -> String {
    let s = py_strip(text);
    let mut out = String::with_capacity(s.len() + 1);
    push_sentence_case(&mut out, s);
    with_final_period(out)
}

/// Alternating runs of non-whitespace (`false`) and whitespace (`true`).
fn runs(s: &str) -> impl Iterator<Item = (bool, &str)> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let space = is_py_space(rest.chars().next()?);
        let end = rest.find(|c| is_py_space(c) != space).unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        rest = tail;
        Some((space, run))
    })
}

fn core(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric())
}

/// Rule (a): an upper-case letter after the core's first character.
fn has_inner_capital(token: &str) -> bool {
    core(token).chars().skip(1).any(char::is_uppercase)
}

/// Rule (b): the core starts with an upper-case letter.
fn is_capitalised(token: &str) -> bool {
    core(token).chars().next().is_some_and(char::is_uppercase)
}

/// ALL CAPS or Title Case: no word starts lower-case, over at least 3 words.
fn casing_is_uninformative(s: &str) -> bool {
    let initials: Vec<char> = runs(s)
        .filter(|(space, _)| !space)
        .filter_map(|(_, t)| core(t).chars().next().filter(|c| c.is_alphabetic()))
        .collect();
    initials.len() >= 3 && !initials.iter().any(|c| c.is_lowercase())
}

fn preserve_entities(text: &str) -> String {
    let s = py_strip(text);
    if casing_is_uninformative(s) {
        return bivlc(s);
    }
    let mut out = String::with_capacity(s.len() + 1);
    let mut first = true;
    for (space, token) in runs(s) {
        if space {
            out.push_str(token);
            continue;
        }
        if has_inner_capital(token) || (!first && is_capitalised(token)) {
            out.push_str(token);
        } else if first {
            push_sentence_case(&mut out, token);
        } else {
            out.push_str(&token.to_lowercase());
        }
        first = false;
    }
    with_final_period(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> String {
        normalize(s, NormalizeMode::Bivlc)
    }

    fn p(s: &str) -> String {
        normalize(s, NormalizeMode::PreserveEntities)
    }

    #[test]
    fn bivlc_lowercases_everything_after_the_first_character() {
        assert_eq!(b("  a TV on a table "), "A tv on a table.");
        assert_eq!(b("A man holds a Frisbee."), "A man holds a frisbee.");
        assert_eq!(b("Coca-Cola cans"), "Coca-cola cans.");
        assert_eq!(b("the USA flag in London"), "The usa flag in london.");
        assert_eq!(b("iPhone on a desk"), "Iphone on a desk.");
    }

    #[test]
    fn bivlc_final_period_like_the_released_code() {
        assert_eq!(b("A dog."), "A dog.");
        assert_eq!(b("a dog. "), "A dog.");
        assert_eq!(b("Wow!"), "Wow!.");
        assert_eq!(b("Is it a cat?"), "Is it a cat?.");
        assert_eq!(b("a dog .."), "A dog ..");
        assert_eq!(b("."), ".");
        assert_eq!(b("x"), "X.");
    }

    #[test]
    fn empty_and_blank_text() {
        for mode in [NormalizeMode::Bivlc, NormalizeMode::PreserveEntities] {
            assert_eq!(normalize("", mode), "");
            assert_eq!(normalize(" \t\n\u{a0}\u{3000} ", mode), "");
        }
        assert_eq!(normalize("", NormalizeMode::None), "");
        assert_eq!(normalize("  ", NormalizeMode::None), "  ");
    }

    #[test]
    fn inner_whitespace_is_kept() {
        assert_eq!(b("a  dog\tsits \n here"), "A  dog\tsits \n here.");
        assert_eq!(p("a  TV\t on  it"), "A  TV\t on  it.");
    }

    #[test]
    fn python_whitespace_and_unicode_case() {
        // Checked against CPython 3.11.
        assert_eq!(b("élan vital"), "Élan vital.");
        assert_eq!(b("ÉLAN VITAL"), "Élan vital.");
        assert_eq!(b("Élan Vital"), "Élan vital.");
        assert_eq!(b("\u{a0}dog\u{2003}"), "Dog.");
        assert_eq!(b("\u{1c}dog\u{1f}"), "Dog."); // Python strips U+001C..U+001F
        assert_eq!(b("\u{200b}dog"), "\u{200b}dog."); // zero-width space is not whitespace
        assert_eq!(b("ßtraße"), "SStraße.");
        assert_eq!(b("ǆungla"), "Ǆungla."); // upper, not title case
        assert_eq!(b("ΟΔΟΣ ΣΟΦΙΑΣ"), "Οδο\u{3c2} σοφια\u{3c2}."); // final sigma
        assert_eq!(b("İstanbul İZMİR"), "İstanbul i\u{307}zmi\u{307}r.");
    }

    #[test]
    fn none_mode_is_identity() {
        for s in ["  a TV on a table ", "Wow!", "ÉLAN", "x\u{1c}"] {
            assert_eq!(normalize(s, NormalizeMode::None), s);
        }
    }

    #[test]
    fn preserve_entities_keeps_acronyms_and_names() {
        assert_eq!(p("  a TV on a table "), "A TV on a table.");
        assert_eq!(p("A man holds a Frisbee."), "A man holds a Frisbee.");
        assert_eq!(p("Coca-Cola cans"), "Coca-Cola cans.");
        assert_eq!(p("a Coca-Cola can in London"), "A Coca-Cola can in London.");
        assert_eq!(p("the USA flag, (U.S.) style"), "The USA flag, (U.S.) style.");
        assert_eq!(p("3D glasses and an MP3 player"), "3D glasses and an MP3 player.");
        assert_eq!(p("then I saw McDonald's"), "Then I saw McDonald's.");
        assert_eq!(p("a Man On a horse"), "A Man On a horse.");
        assert_eq!(p("Élan at the Élysée"), "Élan at the Élysée.");
    }

    #[test]
    fn preserve_entities_first_token() {
        assert_eq!(p("iPhone on a desk"), "iPhone on a desk.");
        assert_eq!(p("eBay logo"), "eBay logo.");
        assert_eq!(p("TV on a table"), "TV on a table.");
        assert_eq!(p("London bridge"), "London bridge.");
        assert_eq!(p("the bridge"), "The bridge.");
        assert_eq!(p("THE bridge"), "THE bridge."); // looks like an acronym
        assert_eq!(p("ßtraße sign"), "SStraße sign.");
    }

    #[test]
    fn preserve_entities_falls_back_when_casing_is_uninformative() {
        assert_eq!(p("A MAN RIDING A WAVE"), "A man riding a wave.");
        assert_eq!(p("A Dog On A Table"), "A dog on a table.");
        assert_eq!(p("USA TV"), "USA TV."); // too short to judge
        assert_eq!(p("TV IN 3 ROOMS in a house"), "TV IN 3 ROOMS in a house.");
    }

    #[test]
    fn preserve_entities_equals_bivlc_without_inner_capitals() {
        for s in ["  a dog on a table ", "wow!", "élan vital", "οδοσ σοφιασ", "a  b\tc.", "", "   ", "\u{1c}x"]
        {
            assert_eq!(p(s), b(s), "{s:?}");
        }
    }

    #[test]
    fn mode_parse_and_names() {
        for m in NormalizeMode::ALL {
            assert_eq!(NormalizeMode::parse(m.as_str()), Ok(m));
            assert_eq!(m.to_string().parse::<NormalizeMode>(), Ok(m));
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
        }
        assert_eq!(NormalizeMode::parse(" Preserve-Entities "), Ok(NormalizeMode::PreserveEntities));
        let err = NormalizeMode::parse("lower").unwrap_err();
        assert_eq!(err, NormalizeModeError("lower".into()));
        let msg = err.to_string();
        assert!(
            msg.contains("\"lower\"")
                && msg.contains("bivlc")
                && msg.contains("preserve-entities")
                && msg.contains("none")
        );
        assert_eq!(NormalizeMode::default(), NormalizeMode::Bivlc);
    }
}
