//! A yes/no check with a known answer, the worked example of a kind (README,
//! "How to add a survey kind"): the item's image with one caption, by a
//! seeded choice the positive (the right answer is yes) or the hard negative
//! (no); the annotator says whether the caption matches the image. The
//! stored value is whether they were right, so the shared accuracy report
//! gives human accuracy per subset; the option id (`yes` / `no`) keeps what
//! they answered.
use crate::domain::rng::shuffle;
use crate::domain::survey::{
    one_option, Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError,
};

pub const INSTRUCTIONS: &str = "Look at the image and read the description. Does the description match the \
image? Answer Yes or No. Pay close attention to word order and details. Keys: y = yes, n = no.";

/// Stored values: the annotator's yes/no against the known answer.
pub const VALUES: [&str; 2] = ["right", "wrong"];

pub const KIND: KindSpec = KindSpec {
    name: "caption_match",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: one_option,
    role: Role::Report(Report::Accuracy { correct: "right", setting: "yes/no" }),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: None, positive_image: true, chosen_image: false, paraphrase: false, negative_b: false, captions: true, caption_type: false },
    adjudicated: false, // the answer is known: a wrong one is data, not a dispute
    raters: None,
    attention: Attention { targets: &VALUES, instruction: "Attention check: whatever the image shows, select {option} for this item." },
    texts: &[],
};

/// Whether the seed shows the positive caption (else the hard negative).
pub fn shows_positive(seed: u64) -> bool {
    let mut which = [true, false];
    shuffle(&mut which, seed);
    which[0]
}

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let image = item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("caption match needs the image".into()))?;
    let positive = shows_positive(seed);
    let caption = if positive { &item.caption } else { &item.negative_caption };
    if caption.trim().is_empty() {
        return Err(SurveyError::BadItem("caption match needs the caption and its hard negative".into()));
    }
    let option = |id: &str, label: &str, keys: [char; 2], right: bool| ShownOption {
        id: id.into(),
        label: label.into(),
        keys: keys.to_vec(),
        image: None,
        text: None,
        value: VALUES[usize::from(!right)].into(),
    };
    Ok(Presentation {
        prompt_text: caption.clone(),
        prompt_image: Some(image),
        options: vec![option("yes", "Yes", ['y', '1'], positive), option("no", "No", ['n', '2'], !positive)],
        // Which caption was shown: 0 the positive, 1 the hard negative.
        shown_order: vec![usize::from(!positive)],
        instructions: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::accuracy::{accuracy_by_subset, Judged};
    use crate::domain::category::Category;
    use crate::domain::survey::SurveyKind;

    fn item() -> ItemData {
        ItemData {
            caption: "A red circle left of a blue square.".into(),
            negative_caption: "A blue circle left of a red square.".into(),
            positive_image: Some("img".into()),
            ..ItemData::default()
        }
    }

    #[test]
    fn the_seed_picks_the_caption_and_yes_is_right_only_for_the_positive() {
        let it = item();
        let mut shown = std::collections::HashSet::new();
        for seed in 0..40 {
            let p = present(&it, seed).unwrap();
            assert_eq!(p.prompt_image.as_deref(), Some("img"));
            let positive = p.prompt_text == it.caption;
            assert!(positive || p.prompt_text == it.negative_caption);
            assert_eq!(positive, shows_positive(seed));
            shown.insert(positive);
            let (yes, no) = (p.resolve("YES").unwrap(), p.option_for_key('n').unwrap());
            assert_eq!((yes.value.as_str(), no.value.as_str()), if positive { ("right", "wrong") } else { ("wrong", "right") });
            assert_eq!(p, present(&it, seed).unwrap(), "seeded");
        }
        assert_eq!(shown.len(), 2, "both captions occur");
        assert!(present(&ItemData { positive_image: None, ..item() }, 0).is_err());
    }

    #[test]
    fn the_shared_accuracy_report_counts_right_answers_per_subset() {
        let kind = SurveyKind::of(&KIND);
        let Some(Report::Accuracy { correct, .. }) = kind.report() else { panic!("an accuracy kind") };
        let subset = Category::ALL[0];
        // One annotator says yes to every item: right exactly on the items showing the positive.
        let judged: Vec<Judged> = (0..10)
            .map(|seed| {
                let p = present(&item(), seed).unwrap();
                let (_, value) = kind.answer(&p, "yes").unwrap();
                Judged { category: subset, annotator: 1, correct: value == *correct }
            })
            .collect();
        let positives = (0..10).filter(|&s| shows_positive(s)).count();
        let all = accuracy_by_subset(&judged).pop().unwrap();
        assert_eq!((all.answers, all.correct), (10, positives));
        assert!(kind.curation().is_none() && !KIND.adjudicated);
    }
}
