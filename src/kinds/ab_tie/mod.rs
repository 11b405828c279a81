//! SugarCrepe's human comparison of negative sources (appendix E.2): the
//! positive caption and two hard negatives from two sources, in seeded
//! positions that hide the sources; the annotator answers twice about the
//! same screen, once for commonsense and once for grammar: A better, B
//! better, or tie. Stored values name the criterion and the negative as
//! imported (a, b), never the side it was shown on.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError};
use crate::domain::rng::shuffle;

pub const CRITERIA: [&str; 2] = ["commonsense", "grammar"];

pub const COMMONSENSE: &str = "The description at the top is true. Compare descriptions A and B: which of the \
two is more plausible, describing a scene that makes more sense in the real world? Choose Tie if neither is.";
pub const GRAMMAR: &str = "Compare descriptions A and B: which of the two is more fluent and grammatical \
English? Choose Tie if neither is.";
pub const INSTRUCTIONS: &str = "Each item asks two questions about the same two descriptions: first which is \
more plausible (commonsense), then which is more fluent (grammar). Choose Tie if neither is better.";

/// Per criterion: negative a better, negative b better, tie.
pub const VALUES: [&str; 6] =
    ["commonsense_a", "commonsense_b", "commonsense_tie", "grammar_a", "grammar_b", "grammar_tie"];

pub const KIND: KindSpec = KindSpec {
    name: "ab_tie",
    instructions: INSTRUCTIONS,
    values: &VALUES,
    present,
    answer: crate::domain::survey::one_option,
    role: Role::Report(Report::Preference { criteria: &CRITERIA }),
    sources: &[],
    // Asked together: commonsense, then grammar, options in the same places.
    questions: &[&[0, 1]],
    needs: Needs { candidates: None, positive_image: false, chosen_image: false, paraphrase: false, negative_b: true, captions: false, caption_type: false },
    adjudicated: false, // judgements of the sources, not of the instance
    raters: None,
    attention: Attention { targets: &["commonsense_a", "commonsense_b", "commonsense_tie"], instruction: "Attention check: whatever the descriptions say, select {option} for this item." },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let criterion = item.query as usize;
    let instructions = [COMMONSENSE, GRAMMAR]
        .get(criterion)
        .copied()
        .ok_or_else(|| SurveyError::BadItem(format!("unknown question {}", item.query)))?;
    let b = item
        .negative_b
        .as_ref()
        .ok_or_else(|| SurveyError::BadItem("A/B/Tie needs a second negative caption (negative_b)".into()))?;
    let negatives = [&item.negative_caption, b];
    // The seed is the item's, the same for both questions: sides stay put.
    let mut order = [0usize, 1];
    shuffle(&mut order, seed);
    let mut options: Vec<ShownOption> = order
        .iter()
        .enumerate()
        .map(|(pos, &which)| {
            ShownOption::lettered(pos, None, Some(negatives[which].clone()), VALUES[criterion * 3 + which])
        })
        .collect();
    let mut tie = ShownOption::extra("tie", "Tie", &['3', 't']);
    tie.value = VALUES[criterion * 3 + 2].to_string();
    options.push(tie);
    Ok(Presentation {
        prompt_text: item.caption.clone(),
        prompt_image: None,
        options,
        shown_order: order.to_vec(),
        instructions: Some(instructions),
    })
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item(query: u8) -> ItemData {
        ItemData {
            caption: "A dog runs on the beach.".into(),
            negative_caption: "A beach runs on the dog.".into(),
            negative_b: Some("A cat runs on the beach.".into()),
            query,
            ..ItemData::default()
        }
    }

    #[test]
    fn shows_the_positive_two_negatives_and_tie_with_the_criterion_as_instructions() {
        let p = present(&item(0), 4).unwrap();
        assert_eq!(p.prompt_text, "A dog runs on the beach.");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "tie"]);
        assert_eq!(p.instructions, Some(COMMONSENSE));
        assert_eq!(present(&item(1), 4).unwrap().instructions, Some(GRAMMAR));
        assert!(p.options.iter().all(|o| o.image.is_none()));
        assert_eq!(p.option_for_key('t').unwrap().value, "commonsense_tie");
    }

    #[test]
    fn values_name_criterion_and_negative_and_sides_stay_for_the_second_question() {
        let mut orders = std::collections::HashSet::new();
        for seed in 0..30 {
            let (c, g) = (present(&item(0), seed).unwrap(), present(&item(1), seed).unwrap());
            assert_eq!(c.shown_order, g.shown_order, "same places for both questions");
            for (o, o2) in c.options.iter().zip(&g.options) {
                let which = match o.text.as_deref() {
                    Some("A beach runs on the dog.") => "a",
                    Some(_) => "b",
                    None => "tie",
                };
                assert_eq!(o.value, format!("commonsense_{which}"));
                assert_eq!(o2.value, format!("grammar_{which}"));
            }
            orders.insert(c.shown_order);
        }
        assert_eq!(orders.len(), 2, "sources are hidden: both sides occur");
    }

    #[test]
    fn split_value_reads_back_every_stored_value() {
        // The preference report splits this kind's values with its criteria.
        let split_value = |v| crate::domain::preference::split_value(v, &CRITERIA);
        for v in VALUES {
            let (criterion, choice) = split_value(v).unwrap();
            assert_eq!(format!("{criterion}_{choice}"), v);
        }
        assert_eq!(split_value("grammar_c"), None);
        assert_eq!(split_value("style_a"), None);
    }

    #[test]
    fn refuses_items_without_a_second_negative_or_a_third_question() {
        let mut bad = item(0);
        bad.negative_b = None;
        assert!(SurveyKind::of(&KIND).present(&bad, 0).unwrap_err().to_string().contains("negative_b"));
        assert!(present(&item(2), 0).is_err());
        assert_eq!(SurveyKind::of(&KIND).question_count(), 2);
    }

    #[test]
    fn each_question_is_named_by_its_criterion_with_its_own_values() {
        let kind = SurveyKind::of(&KIND);
        assert_eq!(kind.question_names(), CRITERIA);
        assert_eq!(kind.question_values(0), VALUES[..3]);
        assert_eq!(kind.question_values(1), VALUES[3..]);
        let baseline = SurveyKind::parse("human_baseline").unwrap();
        assert_eq!(baseline.question_names(), ["ipos2t", "ineg2t", "tpos2i", "tneg2i"]);
        assert_eq!((baseline.question_values(1), baseline.question_values(2)), (vec!["c0", "c1"], vec!["i0", "i1"]));
        assert_eq!(SurveyKind::parse("four_image").unwrap().question_names(), ["question 1"]);
    }
}
