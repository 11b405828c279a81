//! SugarCrepe++'s expert check of its triplets (Dumpala et al., 2024): an
//! expert sees the image, the two positives (P1, P2) and the hard negative
//! (N), marks the triplet valid or not valid, and may correct P2, tagging
//! what was wrong with one of the five error kinds. The stored value is the
//! verdict and the tag (`valid`, `valid:<tag>`, `not_valid:<tag>`); the
//! corrected P2 is the answer's text (`domain::answer_text`).
//!
//! Rules: a correction needs a tag and makes the value `valid:<tag>` (valid
//! once P2 is replaced); `not_valid` needs a tag and takes no correction (the
//! triplet is dropped, so there is no P2 to fix); `valid` alone takes neither.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError};
use crate::domain::answer_text::{TextField, TextUse};

pub mod stats;

pub const INSTRUCTIONS: &str = "Look at the image and read the three descriptions. P1 and P2 should both \
describe the image and say the same thing in different words; N should not describe it. Mark the triplet \
Valid when that holds, else Not valid and tag the error. If only P2 is wrong, correct it in the text box, \
tag the error, and mark the triplet Valid. Keys: v = valid, n = not valid, 1–5 = error tag, e = edit P2, \
Enter = submit.";

/// The five error kinds, in the order of their digit keys (1–5).
pub const TAGS: [&str; 5] = ["negligible_change", "hallucination", "spatial_mismatch", "change_of_meaning", "superfluous_detail"];
pub const TAG_LABELS: [&str; 5] =
    ["Negligible change", "Hallucination", "Spatial mismatch", "Change of meaning", "Superfluous detail"];

pub const VALID: &str = "valid";
pub const NOT_VALID: &str = "not_valid";

/// `valid`, then `valid:<tag>` (P2 corrected) and `not_valid:<tag>` per tag.
pub const VALUES: [&str; 11] = [
    "valid",
    "valid:negligible_change",
    "valid:hallucination",
    "valid:spatial_mismatch",
    "valid:change_of_meaning",
    "valid:superfluous_detail",
    "not_valid:negligible_change",
    "not_valid:hallucination",
    "not_valid:spatial_mismatch",
    "not_valid:change_of_meaning",
    "not_valid:superfluous_detail",
];

/// The corrected P2: at most 300 characters, one line.
pub const CORRECTION: TextField =
    TextField {
    name: "corrected_p2",
    label: "Corrected P2",
    max_chars: 300,
    wanted: correction_wanted,
    differs_from: None,
    rule: "a corrected P2 goes with the verdict Valid and an error tag; Valid alone and Not valid take none",
};

#[cfg(feature = "ssr")]
mod export;
#[cfg(feature = "ssr")]
pub mod server;
pub mod ui;

pub const KIND: KindSpec = KindSpec {
    name: "triplet_check",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer,
    role: Role::Report(Report::Own),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: false, paraphrase: true, negative_b: false, captions: false, caption_type: false },
    adjudicated: true, // two experts per triplet; a third settles what they disagree on
    raters: Some(2),
    attention: Attention {
        targets: &[VALID],
        instruction: "Attention check: whatever the image and the descriptions show, select {option} for this item.",
    },
    texts: &[CORRECTION],
};

/// Reads an answer (`valid`, `valid:<tag>`, `not_valid:<tag>`), refusing
/// one that breaks the rules in the card's words: the verdict, the tag or
/// the missing tag, not a list of eleven stored values.
fn answer(p: &Presentation, option: &str) -> Result<(String, String), SurveyError> {
    crate::domain::survey::one_option(p, option).map_err(|_| {
        // The labels on the card, each with the id an API client sends.
        let tags: Vec<String> = TAGS.iter().zip(TAG_LABELS).map(|(t, l)| format!("{l} ({t})")).collect();
        let tags = tags.join(", ");
        let lower = option.trim().to_ascii_lowercase();
        let (verdict, tag) = match lower.split_once(':') {
            Some((v, t)) => (v, Some(t)),
            None => (lower.as_str(), None),
        };
        SurveyError::Refused(match (verdict, tag) {
            (VALID | NOT_VALID, Some(t)) => format!("unknown error tag {t:?}; expected one of {tags}"),
            (NOT_VALID, None) => format!("Not valid needs an error tag: one of {tags}"),
            _ => format!("unknown verdict {verdict:?}; expected {VALID} or {NOT_VALID} (with an error tag after a colon)"),
        })
    })
}

fn correction_wanted(value: &str) -> TextUse {
    match split(value) {
        Some((true, Some(_))) => TextUse::Required,
        _ => TextUse::Refused,
    }
}

/// A stored value as (valid, tag).
pub fn split(value: &str) -> Option<(bool, Option<&'static str>)> {
    let (verdict, tag) = match value.split_once(':') {
        Some((v, t)) => (v, Some(*TAGS.iter().find(|&&x| x == t)?)),
        None => (value, None),
    };
    match (verdict, tag) {
        (VALID, _) => Some((true, tag)),
        (NOT_VALID, Some(_)) => Some((false, tag)),
        _ => None,
    }
}

/// What an option reads: "Valid", "Valid, P2 corrected: Hallucination", "Not valid: Hallucination".
fn label(value: &str) -> String {
    let tag_label = |t: &str| TAGS.iter().position(|&x| x == t).map_or("", |i| TAG_LABELS[i]);
    match split(value) {
        Some((true, None)) => "Valid".into(),
        Some((true, Some(t))) => format!("Valid, P2 corrected: {}", tag_label(t)),
        Some((false, t)) => format!("Not valid: {}", tag_label(t.unwrap_or_default())),
        None => value.into(),
    }
}

/// The prompt is the triplet, one caption a line (`P1: `, `P2: `, `N: `), in
/// that fixed order: nothing is hidden or shuffled in an expert check. The
/// options are every value, without keys: the survey card composes verdict,
/// tag and correction itself (`ui::triplet_check`).
pub fn present(item: &ItemData, _seed: u64) -> Result<Presentation, SurveyError> {
    let image =
        item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("a triplet check needs the image".into()))?;
    let p2 = item
        .paraphrase
        .as_ref()
        .ok_or_else(|| SurveyError::BadItem("a triplet check needs a second positive caption (p2)".into()))?;
    let options = VALUES
        .iter()
        .map(|&v| ShownOption { id: v.into(), label: label(v), keys: Vec::new(), image: None, text: None, value: v.into() })
        .collect();
    Ok(Presentation {
        prompt_text: format!("P1: {}\nP2: {}\nN: {}", item.caption, p2, item.negative_caption),
        prompt_image: Some(image),
        options,
        shown_order: vec![0, 1, 2],
        instructions: None,
    })
}

/// The triplet back from a prompt made by [`present`]: (P1, P2, N).
pub fn read_prompt(prompt: &str) -> Option<(&str, &str, &str)> {
    let mut lines = prompt.lines();
    let p1 = lines.next()?.strip_prefix("P1: ")?;
    let p2 = lines.next()?.strip_prefix("P2: ")?;
    let n = lines.next()?.strip_prefix("N: ")?;
    Some((p1, p2, n))
}

/// The value an expert's choices store: verdict, and the tag when one is picked.
pub fn compose(valid: bool, tag: Option<&str>) -> String {
    match (valid, tag) {
        (true, None) => VALID.into(),
        (v, Some(t)) => format!("{}:{t}", if v { VALID } else { NOT_VALID }),
        (false, None) => NOT_VALID.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item() -> ItemData {
        ItemData {
            caption: "A red circle left of a blue square.".into(),
            paraphrase: Some("A blue square right of a red circle.".into()),
            negative_caption: "A blue circle left of a red square.".into(),
            positive_image: Some("img".into()),
            ..ItemData::default()
        }
    }

    #[test]
    fn shows_the_image_and_the_triplet_in_a_fixed_order() {
        let p = present(&item(), 3).unwrap();
        assert_eq!(p.prompt_image.as_deref(), Some("img"));
        assert_eq!(
            read_prompt(&p.prompt_text),
            Some(("A red circle left of a blue square.", "A blue square right of a red circle.", "A blue circle left of a red square."))
        );
        assert_eq!(present(&item(), 99).unwrap(), p, "no seeded order: experts see the triplet as it is");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, VALUES);
        assert!(p.options.iter().all(|o| o.keys.is_empty() && o.value == o.id), "the card composes the answer");
        assert_eq!(p.resolve("not_valid:hallucination").unwrap().label, "Not valid: Hallucination");
        assert_eq!(p.resolve("valid:spatial_mismatch").unwrap().label, "Valid, P2 corrected: Spatial mismatch");
        assert_eq!(p.resolve("VALID").unwrap().value, "valid");
        assert!(p.resolve("not_valid").is_err(), "not valid needs a tag");
    }

    #[test]
    fn a_refused_answer_names_the_rule_it_breaks() {
        let p = present(&item(), 0).unwrap();
        assert_eq!(answer(&p, "Not_Valid:Hallucination").unwrap(), ("not_valid:hallucination".into(), "not_valid:hallucination".into()));
        let said = |a: &str| answer(&p, a).unwrap_err().to_string();
        assert_eq!(
            said("not_valid"),
            "Not valid needs an error tag: one of Negligible change (negligible_change), Hallucination \
             (hallucination), Spatial mismatch (spatial_mismatch), Change of meaning (change_of_meaning), \
             Superfluous detail (superfluous_detail)"
        );
        assert!(said("valid:typo").starts_with("unknown error tag \"typo\"; expected one of Negligible change (negligible_change),"));
        assert!(said("not_valid:").starts_with("unknown error tag \"\""));
        assert!(said("maybe").starts_with("unknown verdict \"maybe\"; expected valid or not_valid"));
        assert!(said("").starts_with("unknown verdict \"\""));
    }

    #[test]
    fn refuses_items_without_p2_or_image() {
        let mut bad = item();
        bad.paraphrase = None;
        assert!(SurveyKind::of(&KIND).present(&bad, 0).unwrap_err().to_string().contains("p2"));
        let mut bad = item();
        bad.positive_image = None;
        assert!(present(&bad, 0).is_err());
    }

    #[test]
    fn every_value_splits_into_verdict_and_tag_and_composes_back() {
        for v in VALUES {
            let (valid, tag) = split(v).unwrap();
            assert_eq!(compose(valid, tag), v);
        }
        assert_eq!(split("valid:hallucination"), Some((true, Some("hallucination"))));
        for bad in ["not_valid", "valid:typo", "maybe", "valid:", ""] {
            assert_eq!(split(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_correction_needs_a_tag_and_a_valid_verdict() {
        let kind = SurveyKind::of(&KIND);
        let fixed = "A blue square to the right of a red circle.";
        assert_eq!(kind.answer_text("valid:hallucination", Some(fixed)).unwrap().as_deref(), Some(fixed));
        let e = kind.answer_text("valid:hallucination", None).unwrap_err().to_string();
        assert!(e.contains("corrected_p2") && e.contains("required"), "{e}");
        let e = kind.answer_text("valid", Some(fixed)).unwrap_err().to_string();
        assert!(e.contains("corrected_p2") && e.contains("must be empty"), "a correction without a tag: {e}");
        assert!(e.ends_with("(a corrected P2 goes with the verdict Valid and an error tag; Valid alone and Not valid take none)"), "{e}");
        let e = kind.answer_text("not_valid:hallucination", Some(fixed)).unwrap_err().to_string();
        assert!(e.contains("must be empty"), "{e}");
        assert_eq!(kind.answer_text("not_valid:hallucination", Some("  ")).unwrap(), None);
        let e = kind.answer_text("valid:hallucination", Some(&"x".repeat(301))).unwrap_err().to_string();
        assert!(e.contains("301 characters; at most 300"), "{e}");
        let e = kind.answer_text("valid:hallucination", Some("a\u{0}b")).unwrap_err().to_string();
        assert!(e.contains("control character U+0000"), "{e}");
    }

    #[test]
    fn is_adjudicated_and_reports_validation() {
        let kind = SurveyKind::of(&KIND);
        assert!(matches!(kind.report(), Some(Report::Own)) && KIND.adjudicated);
        assert!(kind.curation().is_none() && kind.outcome_fn().is_none());
    }
}
