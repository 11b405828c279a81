//! Crowd aggregation on a study's answers: settling items under
//! `resolve = "dawid_skene"` / `"mace"`, and each person's estimated
//! reliability for the agreement report (pure models in `domain::aggregate`).
use crate::domain::aggregate::{aggregate, Aggregation, Model, Options};
use crate::domain::resolution::{ItemState, ResolvedBy};
use crate::domain::survey::SurveyKind;
use std::collections::{HashMap, HashSet};

/// Runs `model` on `(item, person, class)` answers with the study's seed.
pub fn fit(
    model: Model,
    answers: &[(u64, u64, usize)],
    k: usize,
    gold: &[(u64, usize)],
    seed: u64,
) -> Result<Aggregation, String> {
    aggregate(model, answers, k, gold, &Options { seed, ..Options::for_model(model) }).map_err(|e| e.to_string())
}

/// The value's index among the kind's values (the model's class).
pub fn class_of(kind: SurveyKind, value: &str) -> Option<usize> {
    kind.values().iter().position(|v| *v == value)
}

/// Settles every complete, unadjudicated item with the model's most probable
/// value and records its posterior; adjudicated values are clamped as gold.
/// If the model cannot run (e.g. a person with a single answer), the states
/// stay as `resolve` left them (disagreements wait for adjudication).
/// `outcomes` yields each item's id, state and posterior slot.
pub fn settle<'a>(
    model: Model,
    kind: SurveyKind,
    seed: u64,
    answers: &[(u64, u64, usize)],
    adjudicated: &HashMap<i64, String>,
    outcomes: impl Iterator<Item = (i64, &'a mut ItemState, &'a mut Option<f64>)>,
) {
    if answers.is_empty() {
        return;
    }
    let answered: HashSet<u64> = answers.iter().map(|a| a.0).collect();
    let gold: Vec<(u64, usize)> = adjudicated
        .iter()
        .filter(|(i, _)| answered.contains(&(**i as u64)))
        .filter_map(|(i, v)| Some((*i as u64, class_of(kind, v)?)))
        .collect();
    let fitted = match fit(model, answers, kind.values().len(), &gold, seed) {
        Ok(a) => a,
        Err(e) => {
            tracing::info!("{model:?} cannot settle the study yet ({e}); disagreements wait for adjudication");
            return;
        }
    };
    for (id, state, posterior) in outcomes {
        if matches!(state, ItemState::Pending { .. }) || adjudicated.contains_key(&id) {
            continue;
        }
        if let Some(p) = fitted.item(id as u64) {
            *state = ItemState::Final { value: kind.values()[p.label].to_string(), by: ResolvedBy::from(model) };
            *posterior = Some(p.posterior);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn final_value(s: &ItemState) -> Option<(&str, ResolvedBy)> {
        match s {
            ItemState::Final { value, by } => Some((value.as_str(), *by)),
            _ => None,
        }
    }

    /// Three people on four_image items 1–4 (values "0".."3", "none" = classes 0–4):
    /// person 30 dissents on item 3; item 4 is still pending; item 2 was adjudicated.
    #[test]
    fn settles_complete_items_with_the_models_value_and_posterior() {
        let kind = SurveyKind::parse("four_image").unwrap();
        #[rustfmt::skip]
        let answers = [(1, 10, 0), (1, 20, 0), (1, 30, 0), (2, 10, 4), (2, 20, 4), (2, 30, 1),
                       (3, 10, 2), (3, 20, 2), (3, 30, 4), (4, 10, 1)];
        let adjudicated = HashMap::from([(2i64, "1".to_string())]);
        for model in [Model::DawidSkene, Model::Mace] {
            let mut states = [
                ItemState::Final { value: "0".into(), by: ResolvedBy::Unanimous },
                ItemState::Final { value: "1".into(), by: ResolvedBy::Adjudication },
                ItemState::Disputed { values: vec!["2".into(), "none".into()] },
                ItemState::Pending { answered: 1, expected: 3 },
            ];
            let mut posteriors = [None; 4];
            let items = states.iter_mut().zip(posteriors.iter_mut()).zip(1i64..).map(|((s, p), id)| (id, s, p));
            settle(model, kind, 7, &answers, &adjudicated, items);
            assert_eq!(final_value(&states[0]), Some(("0", ResolvedBy::from(model))));
            assert_eq!(final_value(&states[1]), Some(("1", ResolvedBy::Adjudication)), "adjudication stands");
            assert_eq!(final_value(&states[2]), Some(("2", ResolvedBy::from(model))), "{model:?}");
            assert!(matches!(states[3], ItemState::Pending { .. }));
            assert!(posteriors[0].unwrap() > 0.5 && posteriors[2].unwrap() > 0.5, "{posteriors:?}");
            assert_eq!((posteriors[1], posteriors[3]), (None, None));
        }
    }

    #[test]
    fn when_the_model_cannot_run_the_states_stand() {
        let kind = SurveyKind::parse("four_image").unwrap();
        // Person 30 has a single answer: too few to estimate a reliability.
        let answers = [(1, 10, 0), (1, 30, 4), (2, 10, 1)];
        let mut states = [ItemState::Disputed { values: vec!["0".into(), "none".into()] }];
        let mut posterior = None;
        settle(
            Model::DawidSkene,
            kind,
            7,
            &answers,
            &HashMap::new(),
            std::iter::once((1, &mut states[0], &mut posterior)),
        );
        assert!(matches!(states[0], ItemState::Disputed { .. }));
        assert_eq!(posterior, None);
        assert!(fit(Model::Mace, &answers, 5, &[], 7).unwrap_err().contains("person 30 gave 1 answer(s)"));
    }
}
