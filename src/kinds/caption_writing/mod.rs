//! HNC's caption-pair writing (Dönmez et al., "Hard Negative Captions"): an
//! annotator sees an image and an assigned caption type (attribute,
//! relation, counting…: data from the import, shown as written) and writes a
//! positive caption, true of the image, and a negative one, false of it and
//! differing in the assigned type; or skips the image with a reason. The
//! stored value is `written` or `skip:<reason>`; the two captions are the
//! answer's texts (`domain::answer_text`), the negative refused when it is
//! the positive again. A study may check the words against a vocabulary
//! (`domain::vocabulary`, docs/study-spec.md).
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError};
use crate::domain::answer_text::{TextField, TextUse};

pub mod stats;

/// HNC's three conditions on a pair, then the keys.
pub const INSTRUCTIONS: &str = "Look at the image and its assigned caption type, then write a pair that meets \
three conditions. (1) The positive caption is true of the image and the negative caption is false of it. \
(2) The negative differs from the positive only in what the type names (an attribute, a relation, an \
object, a count…) and is otherwise the same caption. (3) Both are fluent, plausible English that uses only \
the study's vocabulary, if it has one. If you cannot, skip the image and say why. Keys: p = positive box, \
n = negative box, Ctrl+Enter = submit, s = skip.";

pub const WRITTEN: &str = "written";

/// Why an image is skipped, in the order the card lists them.
pub const SKIP_REASONS: [&str; 3] = ["unclear_image", "type_does_not_apply", "other"];
pub const SKIP_LABELS: [&str; 3] = ["Unclear image", "Type does not apply", "Other"];

pub const VALUES: [&str; 4] = ["written", "skip:unclear_image", "skip:type_does_not_apply", "skip:other"];

const fn caption(name: &'static str, label: &'static str, differs_from: Option<&'static str>) -> TextField {
    TextField {
        name,
        label,
        max_chars: 300,
        wanted: pair_wanted,
        differs_from,
        rule: "both captions go with \"written\", neither with a skip",
    }
}

/// The two captions: at most 300 characters, one line each; the negative must differ.
pub const TEXTS: [TextField; 2] = [
    caption("positive", "Positive caption (true of the image)", None),
    caption("negative", "Negative caption (false of the image, changed in the assigned type)", Some("positive")),
];

#[cfg(feature = "ssr")]
mod export;
#[cfg(feature = "ssr")]
mod form;
#[cfg(feature = "ssr")]
pub mod write;
#[cfg(feature = "ssr")]
pub mod server;
pub mod ui;

pub const KIND: KindSpec = KindSpec {
    name: "caption_writing",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Report(Report::Own),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: false, paraphrase: false, negative_b: false, captions: false, caption_type: true },
    // Two writers' different pairs are two pairs, not a disagreement.
    adjudicated: false,
    raters: None,
    attention: Attention {
        targets: &["skip:other"],
        instruction: "Attention check: whatever the image shows, write nothing and choose {option} for this item.",
    },
    texts: &TEXTS,
};

fn pair_wanted(value: &str) -> TextUse {
    match value {
        WRITTEN => TextUse::Required,
        _ => TextUse::Refused,
    }
}

/// The skip reason of a stored value, if it is a skip.
pub fn skip_reason(value: &str) -> Option<&'static str> {
    let reason = value.strip_prefix("skip:")?;
    SKIP_REASONS.iter().copied().find(|&r| r == reason)
}

fn label(value: &str) -> String {
    match skip_reason(value) {
        Some(r) => format!("Skip: {}", SKIP_LABELS[SKIP_REASONS.iter().position(|&x| x == r).unwrap_or(0)]),
        None => "Submit the pair".into(),
    }
}

/// The prompt is `Type: <type>`; the options are every value without keys:
/// the writing card composes texts and skip itself (`ui::caption_writing`).
pub fn present(item: &ItemData, _seed: u64) -> Result<Presentation, SurveyError> {
    let image =
        item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("caption writing needs the image".into()))?;
    let kind = item
        .caption_type
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| SurveyError::BadItem("caption writing needs an assigned caption type".into()))?;
    let options = VALUES
        .iter()
        .map(|&v| ShownOption { id: v.into(), label: label(v), keys: Vec::new(), image: None, text: None, value: v.into() })
        .collect();
    Ok(Presentation {
        prompt_text: format!("Type: {kind}"),
        prompt_image: Some(image),
        options,
        shown_order: vec![0],
        instructions: None,
    })
}

/// The assigned type back from a prompt made by [`present`].
pub fn read_prompt(prompt: &str) -> Option<&str> {
    prompt.strip_prefix("Type: ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item() -> ItemData {
        ItemData { positive_image: Some("img".into()), caption_type: Some("attribute".into()), ..ItemData::default() }
    }

    #[test]
    fn shows_the_image_and_the_assigned_type_and_every_value() {
        let p = present(&item(), 5).unwrap();
        assert_eq!((p.prompt_image.as_deref(), read_prompt(&p.prompt_text)), (Some("img"), Some("attribute")));
        assert_eq!(present(&item(), 77).unwrap(), p, "nothing is shuffled");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, VALUES);
        assert_eq!(p.resolve("skip:type_does_not_apply").unwrap().label, "Skip: Type does not apply");
        assert_eq!(p.resolve("written").unwrap().label, "Submit the pair");
        assert!(p.resolve("skip").is_err() && p.resolve("skip:bored").is_err(), "a skip needs a listed reason");
    }

    #[test]
    fn refuses_items_without_image_or_type() {
        let mut bad = item();
        bad.caption_type = Some(" ".into());
        assert!(SurveyKind::of(&KIND).present(&bad, 0).unwrap_err().to_string().contains("caption type"));
        let mut bad = item();
        bad.positive_image = None;
        assert!(present(&bad, 0).is_err());
    }

    #[test]
    fn a_pair_needs_both_captions_differing_and_a_skip_takes_none() {
        let kind = SurveyKind::of(&KIND);
        let pair = [("positive", "A red dog."), ("negative", "A blue dog.")];
        let stored = kind.answer_texts("written", &pair).unwrap();
        assert_eq!(stored, [("positive", "A red dog.".to_string()), ("negative", "A blue dog.".to_string())]);
        let e = kind.answer_texts("written", &[("positive", "A red dog."), ("negative", " a  RED dog. ")]).unwrap_err();
        assert!(e.field == "negative" && e.reason.contains("must differ"), "{e}");
        let e = kind.answer_texts("written", &[("positive", "A red dog.")]).unwrap_err();
        assert!(e.field == "negative" && e.reason.contains("required"), "{e}");
        let e = kind.answer_texts("written", &[("positive", &"x".repeat(301)), ("negative", "b")]).unwrap_err();
        assert!(e.field == "positive" && e.reason.contains("301 characters; at most 300"), "{e}");
        let e = kind.answer_texts("skip:other", &pair).unwrap_err();
        assert!(e.field == "positive" && e.reason.contains("must be empty"), "{e}");
        assert_eq!(kind.answer_texts("skip:unclear_image", &[]).unwrap(), []);
    }

    #[test]
    fn skip_reasons_come_from_the_list() {
        assert_eq!(skip_reason("skip:other"), Some("other"));
        assert_eq!(skip_reason("written"), None);
        assert_eq!(skip_reason("skip:bored"), None);
        assert!(VALUES[1..].iter().all(|v| skip_reason(v).is_some()));
        assert!(matches!(SurveyKind::of(&KIND).report(), Some(Report::Own)) && !KIND.adjudicated);
    }
}

#[cfg(test)]
/// The vocabulary a spec may give: only kinds taking text (this one) accept it.
mod vocabulary_tests {
    use crate::domain::survey::SurveyKind;
    use crate::domain::vocabulary::*;
    use crate::kinds::{caption_writing, four_image};

    #[test]
    fn a_spec_vocabulary_is_a_list_or_a_file_inside_the_data_directory() {
        let writing = SurveyKind::of(&caption_writing::KIND);
        let words = VocabularySpec::Words(vec!["Dog".into(), "red".into()]);
        let (source, strict) = for_study(writing, Some(words), Some(true)).unwrap().unwrap();
        assert_eq!((source, strict), (VocabularySource::Words(Vocabulary::new(["dog", "red"])), true));
        let file = VocabularySpec::File("vocabularies/gqa.txt".into());
        assert!(for_study(writing, Some(file.clone()), None).unwrap().unwrap().1, "strict by default");
        assert!(!for_study(writing, Some(file), Some(false)).unwrap().unwrap().1, "warns when asked");
        for bad in ["/etc/passwd", "../secret.txt", "a/../../b", ""] {
            let e = for_study(writing, Some(VocabularySpec::File(bad.into())), None).unwrap_err();
            assert!(e.contains("relative to the data directory"), "{bad}: {e}");
        }
        assert!(for_study(writing, Some(VocabularySpec::Words(vec![",".into()])), None)
            .unwrap_err()
            .contains("no words"));
        assert!(for_study(writing, None, Some(false)).unwrap_err().contains("needs a vocabulary"));
        let e = for_study(SurveyKind::of(&four_image::KIND), Some(VocabularySpec::Words(vec!["a".into()])), None);
        assert!(e.unwrap_err().contains("takes no text"));
        assert_eq!(for_study(writing, None, None).unwrap(), None);
    }
}
