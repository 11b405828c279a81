//! Crowd aggregation on a study's answers: settling items under
//! `resolve = "dawid_skene"` / `"mace"`, and each person's estimated
//! reliability for the agreement report (pure models in `domain::aggregate`).
use crate::domain::aggregate::{aggregate, Aggregation, Model, Options};
use crate::domain::resolution::{ItemState, ResolvedBy};
use crate::domain::survey::SurveyKind;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

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

/// Fits kept for reuse: every outcome read (research page, status, export)
/// settles the study, and the answers seldom change between reads. Keyed
/// by a hash of everything the fit reads, so a changed answer, adjudication
/// or seed misses; a few studies' worth is plenty.
static FITS: Mutex<Vec<(u64, Arc<Aggregation>)>> = Mutex::new(Vec::new());
const FITS_KEPT: usize = 8;

/// [`fit`], reusing the last fit of the very same inputs.
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
    let fitted = Arc::new(fit(model, answers, k, gold, seed)?);
    if let Ok(mut fits) = FITS.lock() {
        if fits.len() >= FITS_KEPT {
            fits.remove(0);
        }
        fits.push((key, Arc::clone(&fitted)));
    }
    Ok(fitted)
}

/// Each person's estimated accuracy under the study's model (Dawid–Skene
/// when `resolve` is not a model), for `stop = "posterior"`. Refitted once
/// the study's answers have grown by a tenth since the last fit, so the
/// answer path does not refit the whole study on every answer; empty while
/// the model cannot run (everyone then counts at the prior accuracy).
/// Remembered per study id in this process (one server serves one database).
pub async fn accuracies(
    db: &sqlx::SqlitePool,
    meta: &crate::state::StudyMeta,
) -> Result<Arc<HashMap<u64, f64>>, crate::error::ServiceError> {
    /// Per study: the answers counted at its last fit, and the accuracies.
    type Last = Vec<(i64, i64, Arc<HashMap<u64, f64>>)>;
    static LAST: Mutex<Last> = Mutex::new(Vec::new());
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM counted_answers WHERE study_id = ?")
        .bind(meta.id)
        .fetch_one(db)
        .await?;
    let last = LAST.lock().ok().and_then(|l| l.iter().find(|e| e.0 == meta.id).map(|e| (e.1, Arc::clone(&e.2))));
    if let Some((n, acc)) = &last {
        if count >= *n && (count - n) * 10 < (*n).max(1) {
            return Ok(Arc::clone(acc));
        }
    }
    let rows: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT instance_id, user_id, value FROM counted_answers WHERE study_id = ?")
            .bind(meta.id)
            .fetch_all(db)
            .await?;
    // Someone with a single answer so far (a participant just started) would
    // stop the model for everyone; they count at the prior until their second.
    let mut per_person: HashMap<i64, usize> = HashMap::new();
    for (_, u, _) in &rows {
        *per_person.entry(*u).or_default() += 1;
    }
    let answers: Vec<(u64, u64, usize)> = rows
        .iter()
        .filter(|(_, u, _)| per_person[u] >= 2)
        .filter_map(|(i, u, v)| Some((*i as u64, *u as u64, class_of(meta.kind, v)?)))
        .collect();
    let model = meta.resolve.model().unwrap_or(Model::DawidSkene);
    let acc: HashMap<u64, f64> = match fit_cached(model, &answers, meta.kind.values().len(), &[], meta.seed) {
        Ok(a) => a.people.iter().map(|p| (p.person, p.accuracy)).collect(),
        Err(_) => HashMap::new(),
    };
    let acc = Arc::new(acc);
    if let Ok(mut l) = LAST.lock() {
        l.retain(|e| e.0 != meta.id);
        l.push((meta.id, count, Arc::clone(&acc)));
    }
    Ok(acc)
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
