//! A study's vocabulary (HNC restricted its captions to GQA's words): which
//! words of a text it does not know. Tokenisation, documented in
//! docs/study-spec.md ("Vocabulary"): lower case; a word is a run of letters,
//! digits and apostrophes, so punctuation and hyphens split words; a
//! possessive `'s` and other apostrophes are dropped; numbers written in
//! digits are always known (counting captions); a word ending in `s`, `es`
//! or `ies` is known when its singular (`s` and `es` removed, `ies` → `y`)
//! is, so a vocabulary lists singulars.
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vocabulary {
    words: BTreeSet<String>,
}

/// The words of a text, lower case, in order, as the vocabulary compares them.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| {
            let w = w.to_lowercase();
            let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(&w).to_string();
            w.replace(['\'', '’'], "")
        })
        .filter(|w| !w.is_empty())
        .collect()
}

impl Vocabulary {
    /// The vocabulary of the given words (each tokenised like a text).
    pub fn new<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> Vocabulary {
        Vocabulary { words: words.into_iter().flat_map(|w| tokens(w.as_ref())).collect() }
    }

    /// A vocabulary file: one word a line; blank lines and `#` comments are skipped.
    pub fn parse_file(text: &str) -> Result<Vocabulary, String> {
        let v = Vocabulary::new(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')));
        match v.is_empty() {
            true => Err("lists no words (one word a line)".into()),
            false => Ok(v),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// The words, sorted, one a line (how a study stores it).
    pub fn to_lines(&self) -> String {
        self.words.iter().map(String::as_str).collect::<Vec<_>>().join("\n")
    }

    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(String::as_str)
    }

    /// Whether a token (from [`tokens`]) is known, plurals by their singular.
    pub fn knows(&self, token: &str) -> bool {
        let has = |w: &str| self.words.contains(w);
        if has(token) || token.chars().all(|c| c.is_ascii_digit()) {
            return true;
        }
        let singulars = [
            token.strip_suffix("ies").map(|s| format!("{s}y")),
            token.strip_suffix("es").map(str::to_string),
            token.strip_suffix('s').map(str::to_string),
        ];
        singulars.into_iter().flatten().any(|s| !s.is_empty() && has(&s))
    }

    /// The distinct words of `text` the vocabulary does not know, in order of first use.
    pub fn unknown(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in tokens(text) {
            if !self.knows(&t) && !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary {
        Vocabulary::new(["a", "Dog", "red", "box", "puppy", "on", "the", "table", "two", "man"])
    }

    #[test]
    fn tokens_are_lower_case_words_without_punctuation() {
        assert_eq!(
            tokens("A red-haired dog's toy, on (the) TABLE!"),
            ["a", "red", "haired", "dog", "toy", "on", "the", "table"]
        );
        assert_eq!(tokens("  "), Vec::<String>::new());
        assert_eq!(tokens("don't 3 dogs’s"), ["dont", "3", "dogs"]);
        assert_eq!(tokens("café au lait"), ["café", "au", "lait"], "letters beyond ASCII are letters");
    }

    #[test]
    fn unknown_words_are_named_once_in_order() {
        let v = vocab();
        assert_eq!(v.unknown("A red dog on the table."), Vec::<String>::new());
        assert_eq!(v.unknown("A blue dog on a blue sofa"), ["blue", "sofa"]);
        assert_eq!(v.unknown(""), Vec::<String>::new());
    }

    #[test]
    fn plurals_are_known_by_their_singular_and_numbers_always() {
        let v = vocab();
        for known in ["dogs", "boxes", "puppies", "tables", "2", "10", "the dog's"] {
            assert!(v.unknown(known).is_empty(), "{known}");
        }
        // No irregular plurals, and no singular from a word that merely ends in s.
        assert_eq!(v.unknown("men"), ["men"]);
        assert_eq!(v.unknown("s es ies"), ["s", "es", "ies"]);
        assert_eq!(v.unknown("two thirds"), ["thirds"]);
    }

    #[test]
    fn a_file_lists_one_word_a_line_with_comments() {
        let v = Vocabulary::parse_file("# GQA, cut down\ndog\n\n  Red \ndog\n").unwrap();
        assert_eq!(v.words().collect::<Vec<_>>(), ["dog", "red"]);
        assert_eq!(v.to_lines(), "dog\nred");
        assert_eq!(Vocabulary::new(v.to_lines().lines()), v, "stored and read back unchanged");
        assert!(Vocabulary::parse_file("# nothing\n\n").unwrap_err().contains("no words"));
    }
}

/// `vocabulary = ["dog", "red"]` or `vocabulary = "vocabularies/gqa.txt"` as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum VocabularySpec {
    Words(Vec<String>),
    File(String),
}

/// Where a study's vocabulary comes from, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VocabularySource {
    Words(Vocabulary),
    /// A path relative to the data directory, with no `..`: a spec (which may
    /// come over HTTP) can never make the server read outside it.
    File(String),
}

/// The spec's vocabulary for a study of `kind`: only kinds whose answers
/// carry text take one; `vocabulary_strict` needs one. Strict unless the
/// spec says `vocabulary_strict = false` (HNC's vocabulary is a must; the
/// warning mode is the researcher's explicit choice).
pub fn for_study(
    kind: crate::domain::survey::SurveyKind,
    spec: Option<VocabularySpec>,
    strict: Option<bool>,
) -> Result<Option<(VocabularySource, bool)>, String> {
    let source = match spec {
        None if strict.is_some() => return Err("vocabulary_strict needs a vocabulary".into()),
        None => return Ok(None),
        Some(_) if kind.spec().texts.is_empty() => {
            return Err(format!("kind {kind} takes no text, so it has no words to check"))
        }
        Some(VocabularySpec::Words(words)) => {
            let v = Vocabulary::new(&words);
            if v.is_empty() {
                return Err("the list has no words".into());
            }
            VocabularySource::Words(v)
        }
        Some(VocabularySpec::File(path)) => {
            let p = std::path::Path::new(&path);
            let inside = !path.trim().is_empty()
                && p.components().all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
            if !inside {
                return Err(format!(
                    "{path:?}: a vocabulary file is named relative to the data directory, without `..`"
                ));
            }
            VocabularySource::File(path)
        }
    };
    Ok(Some((source, strict.unwrap_or(true))))
}
