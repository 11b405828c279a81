//! HNC's second group: validators check written caption pairs (items made
//! from a `caption_writing` study's pairs, `written_pairs.rs`). One
//! question with four answers, so agreement (Cohen's kappa) and adjudication
//! work on one value: `valid` (the positive is true of the image and the
//! negative false), `positive_wrong`, `negative_wrong`, `both_wrong`. Only
//! pairs settled `valid` reach the export.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError, SurveyKind};

pub const INSTRUCTIONS: &str = "Look at the image and read the two captions. The positive caption should be true \
of the image, the negative caption false of it. Answer Valid when both hold, else say which is wrong. Keys: \
1/v = valid, 2/p = positive wrong, 3/n = negative wrong, 4/b = both wrong.";

pub const VALID: &str = "valid";
pub const VALUES: [&str; 4] = ["valid", "positive_wrong", "negative_wrong", "both_wrong"];
const LABELS: [&str; 4] = ["Valid", "Positive is wrong", "Negative is wrong", "Both are wrong"];
const KEYS: [[char; 2]; 4] = [['1', 'v'], ['2', 'p'], ['3', 'n'], ['4', 'b']];

#[cfg(feature = "ssr")]
mod export;
pub mod stats;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
mod written_pairs;

pub const KIND: KindSpec = KindSpec {
    name: "pair_validation",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Report(Report::Own),
    sources: &[SurveyKind::of(&crate::kinds::caption_writing::KIND)],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: false, paraphrase: false, negative_b: false, captions: true, caption_type: false },
    adjudicated: true, // validators who disagree: a third person settles the pair
    raters: Some(2),
    attention: Attention {
        targets: &[VALID],
        instruction: "Attention check: whatever the image and the captions show, select {option} for this item.",
    },
    texts: &[],
};

/// The prompt is the pair, `Positive: ` then `Negative: ` (with the type
/// when known), in that fixed order: the labels say which is which, so
/// there is nothing to hide by shuffling. The options keep a fixed order too.
pub fn present(item: &ItemData, _seed: u64) -> Result<Presentation, SurveyError> {
    let image =
        item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("a pair validation needs the image".into()))?;
    if item.caption.trim().is_empty() || item.negative_caption.trim().is_empty() {
        return Err(SurveyError::BadItem("a pair validation needs a positive and a negative caption".into()));
    }
    let mut prompt_text = format!("Positive: {}\nNegative: {}", item.caption, item.negative_caption);
    if let Some(t) = item.caption_type.as_deref() {
        prompt_text.push_str(&format!("\nType: {t}"));
    }
    let options = VALUES
        .iter()
        .zip(LABELS)
        .zip(KEYS)
        .map(|((&v, label), keys)| ShownOption {
            id: v.into(),
            label: label.into(),
            keys: keys.to_vec(),
            image: None,
            text: None,
            value: v.into(),
        })
        .collect();
    Ok(Presentation { prompt_text, prompt_image: Some(image), options, shown_order: vec![0, 1], instructions: None })
}

/// The pair back from a prompt made by [`present`]: (positive, negative).
pub fn read_prompt(prompt: &str) -> Option<(&str, &str)> {
    let mut lines = prompt.lines();
    let positive = lines.next()?.strip_prefix("Positive: ")?;
    let negative = lines.next()?.strip_prefix("Negative: ")?;
    Some((positive, negative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> ItemData {
        ItemData {
            caption: "A red dog.".into(),
            negative_caption: "A blue dog.".into(),
            positive_image: Some("img".into()),
            caption_type: Some("attribute".into()),
            ..ItemData::default()
        }
    }

    #[test]
    fn shows_the_pair_in_a_fixed_order_with_keys() {
        let p = present(&item(), 1).unwrap();
        assert_eq!(read_prompt(&p.prompt_text), Some(("A red dog.", "A blue dog.")));
        assert!(p.prompt_text.ends_with("\nType: attribute"));
        assert_eq!(present(&item(), 2).unwrap(), p);
        let kind = SurveyKind::of(&KIND);
        for (key, value) in [('v', "valid"), ('2', "positive_wrong"), ('n', "negative_wrong"), ('B', "both_wrong")] {
            assert_eq!(p.option_for_key(key).unwrap().value, value);
            assert_eq!(kind.answer(&p, value).unwrap(), (value.to_string(), value.to_string()));
        }
        assert!(kind.answer(&p, "maybe").is_err());
        assert!(kind.answer_texts("valid", &[("text", "x")]).is_err(), "no text with a validation");
    }

    #[test]
    fn refuses_items_without_a_pair_or_image() {
        let mut bad = item();
        bad.negative_caption = String::new();
        assert!(present(&bad, 0).unwrap_err().to_string().contains("negative caption"));
        let mut bad = item();
        bad.positive_image = None;
        assert!(present(&bad, 0).is_err());
    }

    #[test]
    fn takes_written_pairs_and_is_adjudicated() {
        let kind = SurveyKind::of(&KIND);
        assert_eq!(KIND.sources, [SurveyKind::of(&crate::kinds::caption_writing::KIND)]);
        assert!(matches!(kind.report(), Some(Report::Own)) && KIND.adjudicated);
    }
}
