//! SugarCrepe++'s human evaluation, image-to-text (ITT): an image with three
//! captions — two positives that say the same thing in different words (P1,
//! P2) and the hard negative (N) — in a seeded order; the annotator picks the
//! caption that does not fit the image. The text-only setting (TOT) is the
//! kind in `odd_one_out_text/`, built from the same triplet.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, SurveyError};
// The triplet both SugarCrepe++ settings show (the text-only one is `odd_one_out_text`).
use crate::domain::triplets::{present_triplet as triplet, CORRECT, VALUES};

pub const INSTRUCTIONS: &str = "Look at the image and read the three descriptions. Two of them describe \
the image; select the one description that does NOT match the image. Pay close attention to word order.";

pub const KIND: KindSpec = KindSpec {
    name: "odd_one_out",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Report(Report::Accuracy { correct: CORRECT, setting: "ITT" }),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: false, paraphrase: true, negative_b: false, captions: false, caption_type: false },
    adjudicated: false, // it measures people; a wrong pick is data, not a dispute
    raters: None,
    attention: Attention { targets: &VALUES, instruction: "Attention check: whatever the descriptions say, select {option} for this item." },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let image = item
        .positive_image
        .clone()
        .ok_or_else(|| SurveyError::BadItem("odd-one-out (ITT) needs the image".into()))?;
    let mut p = triplet(item, seed)?;
    p.prompt_image = Some(image);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item() -> ItemData {
        ItemData {
            caption: "A red circle to the left of a blue square.".into(),
            negative_caption: "A blue circle to the left of a red square.".into(),
            paraphrase: Some("A blue square to the right of a red circle.".into()),
            positive_image: Some("img".into()),
            ..ItemData::default()
        }
    }

    #[test]
    fn shows_the_image_and_three_lettered_captions() {
        let p = present(&item(), 3).unwrap();
        assert_eq!(p.prompt_image.as_deref(), Some("img"));
        assert!(p.prompt_text.is_empty());
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "C"], "no None: a forced choice");
        assert!(p.options.iter().all(|o| o.image.is_none() && o.text.is_some()));
    }

    #[test]
    fn stored_value_names_the_caption_whatever_its_position() {
        let it = item();
        let mut orders = std::collections::HashSet::new();
        for seed in 0..60 {
            let p = present(&it, seed).unwrap();
            for o in &p.options {
                let want = match o.text.as_deref() {
                    Some(t) if t == it.caption => "p1",
                    Some(t) if Some(t) == it.paraphrase.as_deref() => "p2",
                    _ => "negative",
                };
                assert_eq!(o.value, want);
            }
            orders.insert(p.shown_order.clone());
        }
        assert_eq!(orders.len(), 6, "every order of three occurs");
        assert_eq!(present(&it, 11).unwrap(), present(&it, 11).unwrap(), "seeded");
    }

    #[test]
    fn keys_pick_the_three_positions() {
        let p = present(&item(), 5).unwrap();
        assert_eq!(p.option_for_key('1').unwrap().id, "A");
        assert_eq!(p.option_for_key('c').unwrap().id, "C");
        assert!(p.option_for_key('4').is_none());
        assert_eq!(p.resolve("b").unwrap().value, VALUES[p.shown_order[1]]);
    }

    #[test]
    fn refuses_items_without_p2_or_image() {
        let mut bad = item();
        bad.paraphrase = None;
        let e = SurveyKind::of(&KIND).present(&bad, 0).unwrap_err().to_string();
        assert!(e.contains("p2"), "{e}");
        let mut bad = item();
        bad.positive_image = None;
        assert!(present(&bad, 0).is_err());
    }

    #[test]
    fn reports_accuracy_against_the_negative() {
        let kind = SurveyKind::of(&KIND);
        assert!(matches!(kind.report(), Some(Report::Accuracy { correct: "negative", setting: "ITT" })));
        assert!(kind.curation().is_none() && kind.outcome_fn().is_none() && !KIND.adjudicated);
    }
}
