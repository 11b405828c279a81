//! Crowd aggregation on a study's answers: settling items under
//! `resolve = "dawid_skene"` / `"mace"`, and each person's estimated
//! reliability for the agreement report (pure models in `domain::aggregate`).
use crate::domain::aggregate::{
    aggregate, aggregate_pooling_sparse, answers_of_fitted_people, Aggregation, Model, Options,
};
use crate::domain::resolution::{ItemState, Posterior, ResolvedBy};
use crate::domain::survey::SurveyKind;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// Runs `model` with the study's seed on the `(item, person, class)` answers
/// of the people who gave at least 2 (one answer cannot estimate a
/// reliability): each person's own figures, as the agreement report and the
/// approve list show them. Fails only when nobody has given 2 yet.
pub fn fit(
    model: Model,
    answers: &[(u64, u64, usize)],
    k: usize,
    gold: &[(u64, usize)],
    seed: u64,
) -> Result<Aggregation, String> {
    let opts = options(model, seed);
    let min = opts.min_answers_per_person;
    let fitted = answers_of_fitted_people(answers, min);
    if fitted.is_empty() && !answers.is_empty() {
        return Err(format!(
            "nobody has given {min} answers yet; at least {min} per person are needed to estimate a reliability"
        ));
    }
    // Sorted by item: gold on an item only the others answered has no evidence here.
    let gold: Vec<(u64, usize)> =
        gold.iter().copied().filter(|g| fitted.binary_search_by_key(&g.0, |r| r.0).is_ok()).collect();
    aggregate(model, &fitted, k, &gold, &opts).map_err(|e| e.to_string())
}

/// The model's defaults with the study's seed, MACE's restarts on every core.
fn options(model: Model, seed: u64) -> Options {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    Options { seed, threads, ..Options::for_model(model) }
}

/// Fits kept for reuse: every outcome read (research page, status, export)
/// settles the study, and the answers seldom change between reads. Keyed
/// by a hash of everything the fit reads, so a changed answer, adjudication
/// or seed misses; a few studies' worth is plenty.
static FITS: Mutex<Vec<(u64, Arc<Aggregation>)>> = Mutex::new(Vec::new());
const FITS_KEPT: usize = 8;

/// [`fit`] for settling, reusing the last fit of the very same inputs.
/// People with a single answer (adaptive overlap's follow-up bundles make
/// them) are not fitted: their answers count at the pooled crowd's
/// confusion, so they never hold the whole study up.
pub fn fit_cached(
    model: Model,
    answers: &[(u64, u64, usize)],
    k: usize,
    gold: &[(u64, usize)],
    seed: u64,
) -> Result<Arc<Aggregation>, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (model as u8, answers, k, gold, seed).hash(&mut h);
    let key = h.finish();
    if let Some(hit) = FITS.lock().ok().and_then(|f| f.iter().find(|(k, _)| *k == key).map(|(_, a)| Arc::clone(a))) {
        return Ok(hit);
    }
    let opts = options(model, seed);
    let fitted = Arc::new(aggregate_pooling_sparse(model, answers, k, gold, &opts).map_err(|e| e.to_string())?);
    if let Ok(mut fits) = FITS.lock() {
        if fits.len() >= FITS_KEPT {
            fits.remove(0);
        }
        fits.push((key, Arc::clone(&fitted)));
    }
    Ok(fitted)
}

/// The value's index among the kind's values (the model's class).
pub fn class_of(kind: SurveyKind, value: &str) -> Option<usize> {
    kind.values().iter().position(|v| *v == value)
}

/// Settles every complete, unadjudicated item with the model's most probable
/// value and records its posterior; adjudicated values are clamped as gold.
/// If the model cannot run (nobody has two answers yet), the states stay as
/// `resolve` left them (disagreements wait for adjudication).
/// `outcomes` yields each item's id, state and posterior slot. Adaptive
/// overlap narrows it ([`Scope`]).
pub fn settle<'a>(
    model: Model,
    kind: SurveyKind,
    seed: u64,
    answers: &[(u64, u64, usize)],
    adjudicated: &HashMap<i64, String>,
    scope: &Scope,
    outcomes: impl Iterator<Item = (i64, &'a mut ItemState, &'a mut Option<Posterior>)>,
) {
    if answers.is_empty() {
        return;
    }
    let answered: HashSet<u64> = answers.iter().map(|a| a.0).collect();
    let mut gold: Vec<(u64, usize)> = adjudicated
        .iter()
        .filter(|(i, _)| answered.contains(&(**i as u64)))
        .filter_map(|(i, v)| Some((*i as u64, class_of(kind, v)?)))
        .collect();
    gold.sort_unstable(); // a stable order: the fit cache is keyed by its inputs
    let fitted = match fit_cached(model, answers, kind.values().len(), &gold, seed) {
        Ok(a) => a,
        Err(e) => {
            tracing::info!("{model:?} cannot settle the study yet ({e}); disagreements wait for adjudication");
            return;
        }
    };
    let mut given: HashMap<u64, Vec<usize>> = HashMap::new();
    if scope.only_given {
        answers.iter().for_each(|&(i, _, c)| given.entry(i).or_default().push(c));
    }
    let mut givers: HashMap<u64, Vec<u64>> = HashMap::new();
    if model == Model::Mace {
        answers.iter().for_each(|&(i, p, _)| givers.entry(i).or_default().push(p));
    }
    for (id, state, posterior) in outcomes {
        if matches!(state, ItemState::Pending { .. }) || adjudicated.contains_key(&id) || scope.settled.contains(&id) {
            continue;
        }
        // A disagreement among people MACE finds answering at random would be
        // settled by their habits: it waits for adjudication instead.
        let uninformed = givers.get(&(id as u64)).is_some_and(|g| fitted.none_informed(g));
        if uninformed && matches!(state, ItemState::Disputed { .. }) {
            continue;
        }
        if let Some(p) = fitted.item(id as u64) {
            // The model's most probable value is one nobody gave: a pick among
            // the given ones would be a guess between values it finds unlikely
            // (an audit's items were settled at posterior 0), so a disagreement waits.
            let unchosen = given.get(&(id as u64)).is_some_and(|g| !g.contains(&p.label));
            if unchosen && matches!(state, ItemState::Disputed { .. }) {
                continue;
            }
            let label = match given.get(&(id as u64)) {
                // The most probable value somebody gave (ties to the smaller).
                Some(g) => *g
                    .iter()
                    .min_by(|&&a, &&b| p.probabilities[b].total_cmp(&p.probabilities[a]).then(a.cmp(&b)))
                    .unwrap_or(&p.label),
                None => p.label,
            };
            let by = match state {
                // Settled on a value somebody gave, an item every answer agrees on stays
                // theirs (as under every other rule); the model adds its posterior.
                ItemState::Final { by: by @ (ResolvedBy::Single | ResolvedBy::Unanimous), .. } if scope.only_given => {
                    *by
                }
                _ => ResolvedBy::from(model),
            };
            *state = ItemState::Final { value: kind.values()[label].to_string(), by };
            *posterior = Some(Posterior { value: p.probabilities[label], model: model.into() });
        }
    }
}

/// Which items a model `resolve` settles: by default every complete one.
/// Under adaptive overlap, not those its stop rule `settled`, and (unless
/// the study allows unchosen values) only on a value somebody gave.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub settled: HashSet<i64>,
    pub only_given: bool,
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
        let kind = SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap();
        #[rustfmt::skip]
        let answers = [(1, 10, 0), (1, 20, 0), (1, 30, 0), (2, 10, 4), (2, 20, 4), (2, 30, 1),
                       (3, 10, 2), (3, 20, 2), (3, 30, 4), (4, 10, 1)];
        let adjudicated = HashMap::from([(2i64, "1".to_string())]);
        for (model, only_given) in [Model::DawidSkene, Model::Mace].into_iter().flat_map(|m| [(m, false), (m, true)]) {
            let mut states = [
                ItemState::Final { value: "0".into(), by: ResolvedBy::Unanimous },
                ItemState::Final { value: "1".into(), by: ResolvedBy::Adjudication },
                ItemState::Disputed { values: vec!["2".into(), "none".into()] },
                ItemState::Pending { answered: 1, expected: 3 },
            ];
            let mut posteriors = [None; 4];
            let items = states.iter_mut().zip(posteriors.iter_mut()).zip(1i64..).map(|((s, p), id)| (id, s, p));
            settle(model, kind, 7, &answers, &adjudicated, &Scope { only_given, ..Default::default() }, items);
            // On a value somebody gave, a unanimous item stays unanimous (with the model's posterior).
            let unanimous = if only_given { ResolvedBy::Unanimous } else { ResolvedBy::from(model) };
            assert_eq!(final_value(&states[0]), Some(("0", unanimous)));
            assert_eq!(final_value(&states[1]), Some(("1", ResolvedBy::Adjudication)), "adjudication stands");
            assert_eq!(final_value(&states[2]), Some(("2", ResolvedBy::from(model))), "{model:?}");
            assert!(matches!(states[3], ItemState::Pending { .. }));
            assert!(posteriors[0].unwrap().value > 0.5 && posteriors[2].unwrap().value > 0.5, "{posteriors:?}");
            assert_eq!(posteriors[0].unwrap().model, model.into(), "the posterior names its model");
            assert_eq!((posteriors[1], posteriors[3]), (None, None));
        }
    }

    /// People 3 and 4 answer 0 and 2 wherever people 1 and 2 answer 3, and
    /// agree with everyone elsewhere: on an item only 3 and 4 answered (0
    /// and 2), Dawid–Skene's most probable value is 3, which nobody chose.
    #[test]
    fn a_model_preferring_a_value_nobody_gave_leaves_the_disagreement_and_stops_alone() {
        let kind = SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap();
        let mut answers: Vec<(u64, u64, usize)> = Vec::new();
        for i in 0..30 {
            answers.extend([(100 + i, 1, 3), (100 + i, 2, 3), (100 + i, 3, 0), (100 + i, 4, 2)]);
        }
        for (block, class) in [(200, 0), (300, 2), (400, 1)] {
            for i in 0..20 {
                answers.extend((1..=4).map(|p| (block + i, p, class)));
            }
        }
        answers.extend([(1, 3, 0), (1, 4, 2), (2, 3, 0), (2, 4, 2)]);
        let run = |scope: &Scope| {
            let mut states = [
                ItemState::Disputed { values: vec!["0".into(), "2".into()] },
                ItemState::Disputed { values: vec!["0".into(), "2".into()] },
            ];
            let mut posteriors = [None; 2];
            let items = states.iter_mut().zip(posteriors.iter_mut()).zip(1i64..).map(|((s, p), id)| (id, s, p));
            settle(Model::DawidSkene, kind, 7, &answers, &HashMap::new(), scope, items);
            (states, posteriors)
        };
        let (free, _) = run(&Scope::default());
        assert_eq!(final_value(&free[0]), Some(("3", ResolvedBy::DawidSkene)), "the model alone picks 3");
        let scope = Scope { settled: HashSet::from([2]), only_given: true };
        let (states, posteriors) = run(&scope);
        assert!(
            matches!(states[0], ItemState::Disputed { .. }) && posteriors[0].is_none(),
            "the model's value is one nobody gave: no guess between 0 and 2, adjudication"
        );
        let fitted = fit(Model::DawidSkene, &answers, 5, &[], 7).unwrap();
        assert!(fitted.item(1).unwrap().probabilities[0] < 0.5 && fitted.item(1).unwrap().probabilities[2] < 0.5);
        assert!(
            matches!(states[1], ItemState::Disputed { .. }) && posteriors[1].is_none(),
            "item 2 was settled by its stop"
        );
    }

    /// Three careful people agree on items 1–40; two answer them at random.
    /// Item 100 only the random two answered, and they disagree: MACE finds
    /// no information in them, so it waits; an item one careful person
    /// answered is settled; Dawid–Skene settles both.
    #[test]
    fn mace_leaves_a_disagreement_among_uninformed_people_to_adjudication() {
        let kind = SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap();
        let mut answers: Vec<(u64, u64, usize)> = Vec::new();
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for item in 1..=40u64 {
            answers.extend([10, 20, 30].map(|p| (item, p, (item % 5) as usize)));
            for p in [40, 50] {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                answers.push((item, p, (rng % 5) as usize));
            }
        }
        answers.extend([(100, 40, 1), (100, 50, 3), (101, 40, 1), (101, 10, 3)]);
        let fitted = fit(Model::Mace, &answers, 5, &[], 7).unwrap();
        assert!(fitted.none_informed(&[40, 50]), "{:?} {:?}", fitted.person(40), fitted.person(50));
        for model in [Model::Mace, Model::DawidSkene] {
            let mut states = [
                ItemState::Disputed { values: vec!["1".into(), "3".into()] },
                ItemState::Disputed { values: vec!["1".into(), "3".into()] },
            ];
            let mut posteriors = [None; 2];
            let items = states.iter_mut().zip(posteriors.iter_mut()).zip(100i64..).map(|((s, p), id)| (id, s, p));
            let scope = Scope { only_given: true, ..Default::default() };
            settle(model, kind, 7, &answers, &HashMap::new(), &scope, items);
            let waits = matches!(states[0], ItemState::Disputed { .. }) && posteriors[0].is_none();
            assert_eq!(waits, model == Model::Mace, "{model:?}: {:?}", states[0]);
            assert_eq!(final_value(&states[1]), Some(("3", ResolvedBy::from(model))), "the careful person's value");
        }
    }

    #[test]
    fn a_fit_is_reused_for_the_same_inputs_only() {
        #[rustfmt::skip]
        let answers = [(1, 10, 0), (1, 20, 0), (2, 10, 3), (2, 20, 3), (3, 10, 1), (3, 20, 2), (4, 10, 2), (4, 20, 2)];
        let a = fit_cached(Model::DawidSkene, &answers, 5, &[], 9).unwrap();
        assert!(Arc::ptr_eq(&a, &fit_cached(Model::DawidSkene, &answers, 5, &[], 9).unwrap()));
        let mut changed = answers;
        changed[5].2 = 1;
        let b = fit_cached(Model::DawidSkene, &changed, 5, &[], 9).unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(b.item(3).unwrap().label, 1, "both now say 1");
        assert!(!Arc::ptr_eq(&a, &fit_cached(Model::DawidSkene, &answers, 5, &[(3, 2)], 9).unwrap()), "gold");
        assert!(!Arc::ptr_eq(&a, &fit_cached(Model::Mace, &answers, 5, &[], 9).unwrap()), "model");
        assert_eq!(fit(Model::DawidSkene, &answers, 5, &[], 9).unwrap(), *a, "the kept fit is the fresh one");
    }

    #[test]
    fn a_person_with_one_answer_holds_nobody_up_and_nobody_fitted_leaves_states_standing() {
        let kind = SurveyKind::parse_in(crate::kinds::KINDS, "four_image").unwrap();
        let run = |answers: &[(u64, u64, usize)]| {
            let mut state = ItemState::Disputed { values: vec!["0".into(), "none".into()] };
            let mut posterior = None;
            let items = std::iter::once((1, &mut state, &mut posterior));
            settle(Model::DawidSkene, kind, 7, answers, &HashMap::new(), &Scope::default(), items);
            (state, posterior)
        };
        // Person 30 has a single answer: fitted without, weighed at the crowd's confusion.
        let (state, posterior) = run(&[(1, 10, 0), (1, 30, 4), (2, 10, 1), (2, 20, 1), (1, 20, 0)]);
        assert_eq!(final_value(&state), Some(("0", ResolvedBy::DawidSkene)));
        assert!(posterior.unwrap().value > 0.5, "{posterior:?}");
        // Nobody has two answers: no model, the disagreement waits.
        let (state, posterior) = run(&[(1, 10, 0), (1, 30, 4)]);
        assert!(matches!(state, ItemState::Disputed { .. }));
        assert_eq!(posterior, None);
        // Each person's own figures: fitted without person 30, and only nobody fitted is an error.
        let answers = [(1, 10, 0), (1, 30, 4), (2, 10, 1), (2, 20, 1), (1, 20, 0), (3, 40, 2)];
        let fitted = fit(Model::Mace, &answers, 5, &[(2, 3), (3, 2)], 7).unwrap();
        assert!(fitted.person(30).is_none() && fitted.person(40).is_none());
        assert!(fitted.person(10).is_some() && fitted.person(20).is_some());
        assert_eq!(fitted.item(2).map(|i| i.label), Some(3), "gold on a fitted item holds");
        assert!(fitted.item(3).is_none(), "an item only the others answered is not in the fit");
        // Person 10's two answers are one (the later wins) after the change of mind.
        assert!(fit(Model::Mace, &[(1, 10, 0), (1, 30, 4), (1, 10, 2)], 5, &[], 7)
            .unwrap_err()
            .contains("nobody has given 2 answers yet"));
    }
}
