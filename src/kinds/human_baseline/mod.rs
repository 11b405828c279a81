//! BiVLC's human baseline: four binary queries per instance, as the
//! Winoground scores need them. I2T shows an image and the two captions; T2I
//! shows a caption and the two images. Sides are seeded and recorded; the
//! stored value names the caption (c0 = original, c1 = negative) or the image
//! (i0 = real, i1 = the chosen generated one), never the side.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Role, ShownOption, SurveyError, SurveyKind};
use crate::domain::metrics::Outcome;
use crate::domain::rng::shuffle;

pub const I2T_INSTRUCTIONS: &str =
    "Choose the description that BEST represents the image. Pay close attention to word order.";
pub const T2I_INSTRUCTIONS: &str =
    "Choose the image that BEST matches the description. Aesthetic defects are accepted, such as deformed faces, arms, hands etc.";
pub const INSTRUCTIONS: &str = "Part 1: choose the description that BEST represents the image. \
Part 2: choose the image that BEST matches the description.";

pub const VALUES: [&str; 4] = ["c0", "c1", "i0", "i1"];

pub const KIND: KindSpec = KindSpec {
    name: "human_baseline",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Measurement { outcome: outcome_of, queries: &["ipos2t", "ineg2t", "tpos2i", "tneg2i"] },
    // The final survivors: of Step 4 when it ran, else of Step 3.
    sources: &[SurveyKind::of(&crate::kinds::ambiguity::KIND), SurveyKind::of(&crate::kinds::four_image::KIND)],
    // Part 1 image-to-text, part 2 text-to-image (see [`Query`]).
    questions: &[&[0, 1], &[2, 3]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: true, paraphrase: false, negative_b: false, captions: false, caption_type: false },
    adjudicated: false, // forced choices measure people; nothing to settle
    raters: None,
    attention: Attention { targets: &["c0", "c1"], instruction: "Attention check: whatever the image shows, select {option} for this item." },
    texts: &[],
};

/// The four queries of an instance, in the order of `Outcome`'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// The real image (I0) with both captions: C0 is right.
    ImagePos = 0,
    /// The generated image (I1) with both captions: C1 is right.
    ImageNeg = 1,
    /// The original caption (C0) with both images: I0 is right.
    TextPos = 2,
    /// The negative caption (C1) with both images: I1 is right.
    TextNeg = 3,
}

impl Query {
    pub const ALL: [Query; 4] = [Query::ImagePos, Query::ImageNeg, Query::TextPos, Query::TextNeg];

    pub fn from_index(i: u8) -> Option<Query> {
        Query::ALL.get(i as usize).copied()
    }

    /// I2T queries come first in an annotator's survey (part 1), then T2I.
    pub fn part(self) -> u8 {
        (self as u8) / 2
    }

    pub fn correct_value(self) -> &'static str {
        VALUES[self as usize]
    }
}

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let query =
        Query::from_index(item.query).ok_or_else(|| SurveyError::BadItem(format!("unknown query {}", item.query)))?;
    let real = item
        .positive_image
        .clone()
        .ok_or_else(|| SurveyError::BadItem("the human baseline needs the real image".into()))?;
    let generated = item
        .chosen_image
        .clone()
        .ok_or_else(|| SurveyError::BadItem("the human baseline needs the generated image".into()))?;
    let mut order = [0usize, 1];
    shuffle(&mut order, seed);
    let image_query = matches!(query, Query::ImagePos | Query::ImageNeg);
    let options = order
        .iter()
        .enumerate()
        .map(|(pos, &which)| {
            let (image, text, value) = if image_query {
                let text = if which == 0 { &item.caption } else { &item.negative_caption };
                (None, Some(text.clone()), VALUES[which])
            } else {
                let image = if which == 0 { &real } else { &generated };
                (Some(image.clone()), None, VALUES[2 + which])
            };
            ShownOption::lettered(pos, image, text, value)
        })
        .collect();
    let (prompt_text, prompt_image, instructions) = match query {
        Query::ImagePos => (String::new(), Some(real), I2T_INSTRUCTIONS),
        Query::ImageNeg => (String::new(), Some(generated), I2T_INSTRUCTIONS),
        Query::TextPos => (item.caption.clone(), None, T2I_INSTRUCTIONS),
        Query::TextNeg => (item.negative_caption.clone(), None, T2I_INSTRUCTIONS),
    };
    Ok(Presentation {
        prompt_text,
        prompt_image,
        options,
        shown_order: order.to_vec(),
        instructions: Some(instructions),
    })
}

fn outcome_of(answers: &[Option<&str>]) -> Option<Outcome> {
    outcome(answers.try_into().ok()?)
}

/// Winoground's elementary successes of one annotator on one instance, once
/// all four of their answers are in (indexed by [`Query`]).
pub fn outcome(answers: [Option<&str>; 4]) -> Option<Outcome> {
    let [a, b, c, d] = answers;
    let right = |q: Query, v: Option<&str>| v.map(|v| v == q.correct_value());
    Some(Outcome {
        ipos2t: right(Query::ImagePos, a)?,
        ineg2t: right(Query::ImageNeg, b)?,
        tpos2i: right(Query::TextPos, c)?,
        tneg2i: right(Query::TextNeg, d)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(query: u8) -> ItemData {
        ItemData {
            caption: "A red circle left of a square.".into(),
            negative_caption: "A square left of a red circle.".into(),
            positive_image: Some("real".into()),
            candidate_images: vec![],
            chosen_image: Some("gen".into()),
            paraphrase: None,
            negative_b: None,
            caption_type: None,
            query,
        }
    }

    #[test]
    fn image_queries_show_the_image_and_both_captions() {
        for (q, img) in [(0, "real"), (1, "gen")] {
            let p = present(&item(q), 4).unwrap();
            assert_eq!(p.prompt_image.as_deref(), Some(img));
            assert_eq!(p.instructions, Some(I2T_INSTRUCTIONS));
            let texts: Vec<_> = p.options.iter().map(|o| o.text.clone().unwrap()).collect();
            assert!(texts.contains(&item(q).caption) && texts.contains(&item(q).negative_caption));
            for o in &p.options {
                let want = if o.text.as_deref() == Some(item(q).caption.as_str()) { "c0" } else { "c1" };
                assert_eq!(o.value, want);
                assert!(o.image.is_none());
            }
        }
    }

    #[test]
    fn text_queries_show_the_caption_and_both_images() {
        for (q, caption) in [(2, item(0).caption), (3, item(0).negative_caption)] {
            let p = present(&item(q), 9).unwrap();
            assert_eq!(p.prompt_text, caption);
            assert!(p.prompt_image.is_none());
            assert_eq!(p.instructions, Some(T2I_INSTRUCTIONS));
            for o in &p.options {
                let want = if o.image.as_deref() == Some("real") { "i0" } else { "i1" };
                assert_eq!(o.value, want);
            }
        }
    }

    #[test]
    fn sides_vary_with_the_seed_and_keys_pick_them() {
        let orders: std::collections::HashSet<_> = (0..30).map(|s| present(&item(2), s).unwrap().shown_order).collect();
        assert_eq!(orders.len(), 2);
        let p = present(&item(0), 1).unwrap();
        assert_eq!(p.option_for_key('2').unwrap().id, "B");
        assert_eq!(p.option_for_key('a').unwrap().id, "A");
        assert_eq!(p.options.len(), 2, "no None or Both: a forced choice");
    }

    #[test]
    fn outcome_needs_all_four_answers_and_scores_each() {
        assert_eq!(outcome([Some("c0"), Some("c1"), Some("i0"), None]), None);
        let all_right = outcome([Some("c0"), Some("c1"), Some("i0"), Some("i1")]).unwrap();
        assert!(all_right.ipos2t && all_right.ineg2t && all_right.tpos2i && all_right.tneg2i);
        let o = outcome([Some("c0"), Some("c0"), Some("i0"), Some("i0")]).unwrap();
        assert_eq!((o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i), (true, false, true, false));
    }

    #[test]
    fn refuses_unknown_queries_and_missing_images() {
        assert!(present(&item(4), 0).is_err());
        let mut bad = item(0);
        bad.chosen_image = None;
        assert!(present(&bad, 0).is_err());
        assert_eq!(Query::TextNeg.part(), 1);
        assert_eq!(Query::ImageNeg.part(), 0);
    }
}
