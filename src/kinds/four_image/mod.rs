//! BiVLC Step 3: the negative caption with four candidate images, labelled
//! A–D in a seeded random order, plus "None".
use crate::domain::survey::{Attention, Curation, ItemData, KindSpec, Needs, Presentation, Role, ShownOption, SurveyError, Verdict};
use crate::domain::rng::shuffle;

pub const INSTRUCTIONS: &str = "Select one image that adequately represents the description. \
In case none of the images adequately represent the description, select the answer None. \
All information presented in the text description must appear in the image. \
Aesthetic defects are accepted, such as deformed faces, arms, hands etc.";

/// Stored values: the candidate slot (as imported, not as shown) or "none".
pub const VALUES: [&str; 5] = ["0", "1", "2", "3", "none"];

pub const KIND: KindSpec = KindSpec {
    name: "four_image",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Curation(Curation {
        step: 3,
        label: "Step 3",
        verdict,
        binary: ("image", "none"),
        binary_by_default: true, // BiVLC's Step 3 kappa: any image vs None
        carried_image: chosen_candidate,
        chosen_slot,
    }),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: Some((4, 4)), positive_image: false, chosen_image: false, paraphrase: false, negative_b: false, captions: false, caption_type: false },
    adjudicated: true,
    raters: None,
    attention: Attention { targets: &VALUES, instruction: "Attention check: whatever the images show, select {option} for this item." },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    if item.candidate_images.len() != 4 {
        return Err(SurveyError::BadItem(format!(
            "four-image survey needs 4 candidate images, found {}",
            item.candidate_images.len()
        )));
    }
    let mut order = [0usize, 1, 2, 3];
    shuffle(&mut order, seed);
    let mut options: Vec<ShownOption> = order
        .iter()
        .enumerate()
        .map(|(pos, &slot)| {
            ShownOption::lettered(pos, Some(item.candidate_images[slot].clone()), None, &slot.to_string())
        })
        .collect();
    options.push(ShownOption::extra("none", "None", &['0', 'n']));
    Ok(Presentation {
        prompt_text: item.negative_caption.clone(),
        prompt_image: None,
        options,
        shown_order: order.to_vec(),
        instructions: None,
    })
}

/// The candidate a kept instance's final answer chose: Step 4's generated image.
fn chosen_candidate(item: &ItemData, value: &str) -> Option<String> {
    item.candidate_images.get(chosen_slot(value)?).cloned()
}

/// A slot's value (`0`–`3`) names its candidate; `none` chooses none.
fn chosen_slot(value: &str) -> Option<usize> {
    value.parse().ok()
}

pub fn verdict(value: &str) -> Option<Verdict> {
    match value {
        "none" => Some(Verdict::Discarded),
        "0" | "1" | "2" | "3" => Some(Verdict::Kept),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item() -> ItemData {
        ItemData {
            caption: "A red circle.".into(),
            negative_caption: "A blue circle.".into(),
            positive_image: Some("p".into()),
            candidate_images: vec!["c0".into(), "c1".into(), "c2".into(), "c3".into()],
            chosen_image: None,
            paraphrase: None,
            negative_b: None,
            caption_type: None,
            query: 0,
        }
    }

    #[test]
    fn shows_negative_caption_four_labelled_images_and_none() {
        let p = present(&item(), 3).unwrap();
        assert_eq!(p.prompt_text, "A blue circle.");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "C", "D", "none"]);
        assert!(p.options[4].image.is_none());
    }

    #[test]
    fn option_values_follow_the_recorded_shown_order() {
        for seed in 0..20 {
            let p = present(&item(), seed).unwrap();
            for (pos, slot) in p.shown_order.iter().enumerate() {
                assert_eq!(p.options[pos].value, slot.to_string());
                assert_eq!(p.options[pos].image.as_deref(), Some(format!("c{slot}").as_str()));
            }
        }
    }

    #[test]
    fn order_is_seeded_and_varies_between_seeds() {
        assert_eq!(present(&item(), 9).unwrap(), present(&item(), 9).unwrap());
        let orders: std::collections::HashSet<_> = (0..50).map(|s| present(&item(), s).unwrap().shown_order).collect();
        assert!(orders.len() > 10, "only {} distinct orders", orders.len());
    }

    #[test]
    fn keys_digits_and_letters_pick_options() {
        let p = present(&item(), 1).unwrap();
        assert_eq!(p.option_for_key('1').unwrap().id, "A");
        assert_eq!(p.option_for_key('D').unwrap().id, "D");
        assert_eq!(p.option_for_key('0').unwrap().id, "none");
        assert_eq!(p.option_for_key('n').unwrap().id, "none");
        assert!(p.option_for_key('5').is_none());
    }

    #[test]
    fn resolve_accepts_ids_case_insensitively_and_names_valid_ones() {
        let p = present(&item(), 1).unwrap();
        assert_eq!(p.resolve("b").unwrap().id, "B");
        assert_eq!(p.resolve("NONE").unwrap().value, "none");
        let err = p.resolve("E").unwrap_err();
        assert_eq!(err.to_string(), "unknown option \"E\"; expected one of A, B, C, D, none");
    }

    #[test]
    fn refuses_items_without_four_candidates() {
        let mut bad = item();
        bad.candidate_images.pop();
        assert!(matches!(SurveyKind::of(&KIND).present(&bad, 0), Err(SurveyError::BadItem(_))));
    }

    #[test]
    fn every_stored_value_is_listed() {
        let p = present(&item(), 5).unwrap();
        for o in &p.options {
            assert!(VALUES.contains(&o.value.as_str()));
        }
        assert_eq!(SurveyKind::parse("four_image"), Some(SurveyKind::of(&KIND)));
        assert_eq!(verdict("2"), Some(Verdict::Kept));
        assert_eq!(verdict("none"), Some(Verdict::Discarded));
        assert_eq!(SurveyKind::of(&KIND).binary_category("3"), Some("image"));
        assert_eq!(SurveyKind::of(&KIND).binary_category("none"), Some("none"));
        assert_eq!(verdict("4"), None);
    }

    #[test]
    fn a_known_match_names_its_slot_and_no_match_none() {
        let c = SurveyKind::of(&KIND).curation().unwrap();
        assert_eq!((chosen_slot("2"), chosen_slot("none")), (Some(2), None));
        assert_eq!(c.known_value(&VALUES, &[]), Some("none"));
        assert_eq!(SurveyKind::of(&KIND).discarding_value(), Some("none"));
        assert_eq!(c.known_value(&VALUES, &[3]), Some("3"));
        assert_eq!(c.known_value(&VALUES, &[1, 2]), None, "several match: nothing to say");
        assert_eq!(c.known_value(&VALUES, &[4]), None, "no such slot");
    }
}
