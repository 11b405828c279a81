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
