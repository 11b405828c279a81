//! SugarCrepe++'s human evaluation, text-only (TOT): the same triplet as
//! `odd_one_out` without the image; the annotator picks the caption whose
//! meaning differs. A kind of its own rather than a spec option, so that a
//! study's kind says which setting its accuracy belongs to (the paper reports
//! ITT and TOT side by side) and the image is never loaded for it.
use crate::domain::triplets::{present_triplet as triplet, CORRECT, VALUES};
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, SurveyError};

pub const INSTRUCTIONS: &str = "Read the three descriptions. Two of them mean the same thing in different \
words; select the one description whose meaning is different.";

pub const KIND: KindSpec = KindSpec {
    name: "odd_one_out_text",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Report(Report::Accuracy { correct: CORRECT, setting: "TOT" }),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: false, chosen_image: false, paraphrase: true, negative_b: false, captions: false, caption_type: false },
    adjudicated: false,
    raters: None,
    attention: Attention { targets: &VALUES, instruction: "Attention check: whatever the descriptions say, select {option} for this item." },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    triplet(item, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_the_three_captions_and_no_image_in_the_same_seeded_order_as_itt() {
        let item = ItemData {
            caption: "A red star above a green circle.".into(),
            paraphrase: Some("A green circle below a red star.".into()),
            negative_caption: "A green star above a red circle.".into(),
            positive_image: Some("img".into()),
            ..ItemData::default()
        };
        for seed in 0..10 {
            let p = present(&item, seed).unwrap();
            assert!(p.prompt_image.is_none() && p.options.iter().all(|o| o.image.is_none()));
            let itt = crate::kinds::odd_one_out::present(&item, seed).unwrap();
            assert_eq!(p.options, itt.options);
        }
        let negative = present(&item, 2).unwrap().options.into_iter().find(|o| o.value == CORRECT).unwrap();
        assert_eq!(negative.text.as_deref(), Some("A green star above a red circle."));
    }
}
