//! BiVLC Step 4: the ORIGINAL caption with the real image and the generated
//! image chosen in Step 3, sides in a seeded random order, plus "Both".
//! Choosing the generated image or Both marks the instance ambiguous.
use crate::domain::survey::{Attention, Curation, ItemData, KindSpec, Needs, Presentation, Role, ShownOption, SurveyError, SurveyKind, Verdict};
use crate::domain::rng::shuffle;

pub const INSTRUCTIONS: &str = "Choose the image that best matches the description, in the case that both \
images match the description equally well choose Both. Aesthetic defects are accepted, such as deformed \
faces, arms, hands etc.";

/// Stored values name the image, not the side it was shown on.
pub const VALUES: [&str; 3] = ["real", "generated", "both"];

pub const KIND: KindSpec = KindSpec {
    name: "ambiguity",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Curation(Curation {
        step: 4,
        label: "Step 4",
        verdict,
        binary: ("real", "ambiguous"),
        binary_by_default: false,
        carried_image: |item, _| item.chosen_image.clone(), // the one Step 3 chose
        chosen_slot: |_| None, // its values judge the pair, they choose no candidate
    }),
    sources: &[SurveyKind::of(&crate::kinds::four_image::KIND)],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: true, paraphrase: false, negative_b: false, captions: false, caption_type: false },
    adjudicated: true,
    raters: None,
    attention: Attention { targets: &VALUES, instruction: "Attention check: whatever the images show, select {option} for this item." },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let real = item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("Step 4 needs the real image".into()))?;
    let generated = item
        .chosen_image
        .clone()
        .ok_or_else(|| SurveyError::BadItem("Step 4 needs the generated image chosen in Step 3".into()))?;
    let images = [real, generated];
    let mut order = [0usize, 1];
    shuffle(&mut order, seed);
    let mut options: Vec<ShownOption> = order
        .iter()
        .enumerate()
        .map(|(pos, &which)| ShownOption::lettered(pos, Some(images[which].clone()), None, VALUES[which]))
        .collect();
    options.push(ShownOption::extra("both", "Both", &['3', '0']));
    Ok(Presentation {
        prompt_text: item.caption.clone(),
        prompt_image: None,
        options,
        shown_order: order.to_vec(),
        instructions: None,
    })
}

pub fn verdict(value: &str) -> Option<Verdict> {
    match value {
        "real" => Some(Verdict::Kept),
        "generated" => Some(Verdict::Ambiguous),
        "both" => Some(Verdict::Both),
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
            positive_image: Some("real".into()),
            candidate_images: vec![],
            chosen_image: Some("gen".into()),
            paraphrase: None,
            negative_b: None,
            caption_type: None,
            query: 0,
        }
    }

    #[test]
    fn shows_the_original_caption_two_images_and_both() {
        let p = present(&item(), 1).unwrap();
        assert_eq!(p.prompt_text, "A red circle.");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "both"]);
    }

    #[test]
    fn stored_value_names_the_image_whatever_side_it_was_on() {
        let mut sides = std::collections::HashSet::new();
        for seed in 0..40 {
            let p = present(&item(), seed).unwrap();
            for (pos, &which) in p.shown_order.iter().enumerate() {
                let want = if which == 0 { ("real", "real") } else { ("generated", "gen") };
                assert_eq!(p.options[pos].value, want.0);
                assert_eq!(p.options[pos].image.as_deref(), Some(want.1));
            }
            sides.insert(p.shown_order.clone());
        }
        assert_eq!(sides.len(), 2, "both side orders occur");
    }

    #[test]
    fn keys_pick_sides_and_both() {
        let p = present(&item(), 2).unwrap();
        assert_eq!(p.option_for_key('1').unwrap().id, "A");
        assert_eq!(p.option_for_key('b').unwrap().id, "B");
        assert_eq!(p.option_for_key('3').unwrap().id, "both");
    }

    #[test]
    fn choosing_the_generated_image_or_both_drops_the_instance() {
        assert_eq!(verdict("real"), Some(Verdict::Kept));
        assert_eq!(verdict("generated"), Some(Verdict::Ambiguous));
        assert_eq!(verdict("both"), Some(Verdict::Both));
        assert!(!Verdict::Ambiguous.keeps() && !Verdict::Both.keeps() && Verdict::Kept.keeps());
        assert_eq!(verdict("none"), None);
    }

    #[test]
    fn refuses_items_without_both_images() {
        let mut bad = item();
        bad.chosen_image = None;
        assert!(matches!(SurveyKind::of(&KIND).present(&bad, 0), Err(SurveyError::BadItem(_))));
        let mut bad = item();
        bad.positive_image = None;
        assert!(present(&bad, 0).is_err());
    }
}
