//! People with too few answers to estimate a reliability of their own must
//! not stop the model for everyone. Adaptive overlap makes such people (a
//! follow-up bundle of one item gives its taker one answer), so the study
//! layer fits the model without them and weighs each of their answers at
//! the pooled crowd's confusion: what every fitted answer says about how an
//! answer relates to the truth. That is how the stop rule treats someone
//! its fit has not seen (`domain::adaptive::reliability`).
use super::Model;
use super::{aggregate, argmax, AggregateError, Aggregation, ItemPosterior, Options, PersonReliability};
use std::collections::BTreeMap;

type Answers = Vec<(u64, u64, usize)>;

/// The answers a model can fit people on: one per (item, person), the later
/// winning, of everyone with at least `min` such answers (sorted by item,
/// then person). Empty when nobody has that many yet.
pub fn answers_of_fitted_people(answers: &[(u64, u64, usize)], min: usize) -> Answers {
    split_sparse(&super::prepared::last_answers(answers), min).0
}

/// Deduplicated answers split into those of people with at least `min` of
/// them and the rest.
fn split_sparse(dedup: &[(u64, u64, usize)], min: usize) -> (Answers, Answers) {
    let mut per_person: BTreeMap<u64, usize> = BTreeMap::new();
    dedup.iter().for_each(|r| *per_person.entry(r.1).or_default() += 1);
    let min = min.max(1);
    dedup.iter().copied().partition(|r| per_person[&r.1] >= min)
}

/// Pseudo-answers spread evenly over a pooled confusion row: a class the
/// fitted crowd never gave for a truth keeps a small chance, so one sparse
/// answer cannot veto a truth outright.
const POOLED_SMOOTHING: f64 = 1.0;

/// [`aggregate`] over the people with at least `opts.min_answers_per_person`
/// answers; the others' answers are folded into their items' posteriors at
/// the pooled confusion (items only they answered start from the class
/// priors). Those people are listed with `pooled = true` and an accuracy
/// from the final posteriors. Fails as [`aggregate`] does, and with
/// [`AggregateError::TooFewAnswers`] only when nobody has enough answers.
pub fn aggregate_pooling_sparse(
    model: Model,
    answers: &[(u64, u64, usize)],
    k: usize,
    gold: &[(u64, usize)],
    opts: &Options,
) -> Result<Aggregation, AggregateError> {
    if let Some((index, &(item, person, label))) = answers.iter().enumerate().find(|(_, a)| a.2 >= k) {
        return Err(AggregateError::LabelOutOfRange { index, item, person, label, k });
    }
    // One answer per (item, person), the later winning, as the models read them.
    let dedup = super::prepared::last_answers(answers);
    let (fitted, sparse) = split_sparse(&dedup, opts.min_answers_per_person);
    if sparse.is_empty() || fitted.is_empty() {
        return aggregate(model, &dedup, k, gold, opts);
    }
    let mut fitted_items: Vec<u64> = fitted.iter().map(|r| r.0).collect();
    fitted_items.dedup(); // sorted by item already
    let fit_gold: Vec<(u64, usize)> =
        gold.iter().copied().filter(|g| fitted_items.binary_search(&g.0).is_ok()).collect();
    if let Some(&(item, label)) = gold.iter().find(|g| g.1 >= k) {
        return Err(AggregateError::GoldOutOfRange { item, label, k });
    }
    let mut agg = aggregate(model, &fitted, k, &fit_gold, opts)?;
    let pooled = pooled_confusion(&agg, &fitted);

    let gold_of: BTreeMap<u64, usize> = gold.iter().copied().collect();
    let mut by_item: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    sparse.iter().for_each(|r| by_item.entry(r.0).or_default().push(r.2));
    for (item, labels) in by_item {
        let mut row = match (gold_of.get(&item), agg.item(item)) {
            (Some(&g), _) => (0..k).map(|c| f64::from(u8::from(c == g))).collect(),
            (None, Some(p)) => p.probabilities.clone(),
            (None, None) => agg.priors.clone(),
        };
        if !gold_of.contains_key(&item) {
            for &l in &labels {
                row.iter_mut().enumerate().for_each(|(t, x)| *x *= pooled[t][l]);
            }
            let sum: f64 = row.iter().sum();
            if sum > 0.0 && sum.is_finite() {
                row.iter_mut().for_each(|x| *x /= sum);
            }
        }
        let best = argmax(&row);
        let posterior = ItemPosterior { item, label: best, posterior: row[best], probabilities: row };
        match agg.items.binary_search_by_key(&item, |i| i.item) {
            Ok(x) => agg.items[x] = posterior,
            Err(x) => agg.items.insert(x, posterior),
        }
    }
    let mut people: BTreeMap<u64, (usize, f64)> = BTreeMap::new();
    for &(item, person, label) in &sparse {
        let p = agg.item(item).map_or(0.0, |i| i.probabilities[label]);
        let e = people.entry(person).or_default();
        e.0 += 1;
        e.1 += p;
    }
    for (person, (answers, right)) in people {
        let row = PersonReliability {
            person,
            answers,
            accuracy: right / answers as f64,
            confusion: None,
            competence: None,
            strategy: None,
            pooled: true,
        };
        let at = agg.people.binary_search_by_key(&person, |p| p.person).unwrap_or_else(|x| x);
        agg.people.insert(at, row);
    }
    Ok(agg)
}

/// `pooled[truth][answer]`: the fitted answers' soft counts (each answer
/// counts toward every truth by its item's posterior), rows summing to 1.
fn pooled_confusion(agg: &Aggregation, fitted: &[(u64, u64, usize)]) -> Vec<Vec<f64>> {
    let k = agg.k;
    let mut counts = vec![vec![POOLED_SMOOTHING / k as f64; k]; k];
    for &(item, _, label) in fitted {
        if let Some(p) = agg.item(item) {
            for (t, row) in counts.iter_mut().enumerate() {
                row[label] += p.probabilities[t];
            }
        }
    }
    for row in &mut counts {
        let sum: f64 = row.iter().sum();
        row.iter_mut().for_each(|x| *x /= sum);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::super::sim::{confusion, simulate};
    use super::*;

    /// Six people on 300 items, plus 40 one-answer people on the first 40 items.
    fn crowd_with_singletons() -> (Vec<usize>, Vec<(u64, u64, usize)>) {
        let people: Vec<Vec<Vec<f64>>> =
            [0.9, 0.85, 0.8, 0.75, 0.7, 0.6].iter().map(|&a| confusion(a, 5, None)).collect();
        let sim = simulate(52, 300, 5, &people, 3);
        let mut answers = sim.answers.clone();
        for i in 0..40u64 {
            // Each singleton gives the right answer: it must help its item.
            answers.push((i, 1000 + i, sim.truth[i as usize]));
        }
        (sim.truth, answers)
    }

    #[test]
    fn a_one_answer_person_no_longer_stops_the_model() {
        let (_, answers) = crowd_with_singletons();
        for model in [Model::DawidSkene, Model::Mace] {
            let opts = Options::for_model(model);
            assert!(matches!(aggregate(model, &answers, 5, &[], &opts), Err(AggregateError::TooFewAnswers { .. })));
            let a = aggregate_pooling_sparse(model, &answers, 5, &[], &opts).unwrap();
            assert_eq!(a.items.len(), 300, "{model:?}: every item settled");
            let pooled: Vec<u64> = a.people.iter().filter(|p| p.pooled).map(|p| p.person).collect();
            assert_eq!(pooled, (1000..1040).collect::<Vec<_>>());
            assert!(a.people.windows(2).all(|w| w[0].person < w[1].person), "people in id order");
            for row in &a.items {
                assert!((row.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn a_pooled_answer_moves_its_item_toward_what_it_says_and_nothing_else() {
        let (_, answers) = crowd_with_singletons();
        let opts = Options::dawid_skene();
        let without: Vec<_> = answers.iter().copied().filter(|a| a.1 < 1000).collect();
        let base = aggregate(Model::DawidSkene, &without, 5, &[], &opts).unwrap();
        let with = aggregate_pooling_sparse(Model::DawidSkene, &answers, 5, &[], &opts).unwrap();
        for item in 0..300u64 {
            let (b, w) = (base.item(item).unwrap(), with.item(item).unwrap());
            if item < 40 {
                let said = answers.iter().find(|a| a.0 == item && a.1 >= 1000).unwrap().2;
                assert!(w.probabilities[said] >= b.probabilities[said] - 1e-12, "item {item}");
            } else {
                assert_eq!(b, w, "item {item}: no pooled answer, the fit's own posterior");
            }
        }
    }

    #[test]
    fn an_item_only_pooled_people_answered_starts_from_the_priors_and_gold_stays_clamped() {
        let (_, mut answers) = crowd_with_singletons();
        answers.push((5000, 2000, 3));
        answers.push((5001, 2001, 1));
        let opts = Options::dawid_skene();
        let a = aggregate_pooling_sparse(Model::DawidSkene, &answers, 5, &[(5001, 4), (0, 2)], &opts).unwrap();
        assert_eq!(a.item(5000).unwrap().label, 3, "one pooled answer, flat-ish priors");
        assert_eq!(a.item(5001).unwrap().label, 4, "gold clamps an item only a pooled person answered");
        assert_eq!(a.item(5001).unwrap().posterior, 1.0);
        assert_eq!(a.item(0).unwrap().label, 2, "gold clamps a fitted item too");
    }

    #[test]
    fn the_order_answers_come_in_changes_nothing() {
        let (_, answers) = crowd_with_singletons();
        let mut shuffled = answers.clone();
        crate::domain::rng::shuffle(&mut shuffled, 99);
        for model in [Model::DawidSkene, Model::Mace] {
            let opts = Options::for_model(model);
            let a = aggregate_pooling_sparse(model, &answers, 5, &[], &opts).unwrap();
            let b = aggregate_pooling_sparse(model, &shuffled, 5, &[], &opts).unwrap();
            assert_eq!(a, b, "{model:?}");
        }
    }

    #[test]
    fn without_enough_answers_anywhere_it_still_refuses_and_bad_labels_are_named() {
        let opts = Options::dawid_skene();
        let e = aggregate_pooling_sparse(Model::DawidSkene, &[(1, 1, 0), (2, 2, 1)], 5, &[], &opts).unwrap_err();
        assert!(matches!(e, AggregateError::TooFewAnswers { answers: 1, .. }), "{e}");
        let e = aggregate_pooling_sparse(Model::DawidSkene, &[(1, 1, 0), (1, 2, 7)], 5, &[], &opts).unwrap_err();
        assert!(matches!(e, AggregateError::LabelOutOfRange { index: 1, label: 7, .. }), "{e}");
    }
}
