//! Adaptive overlap against a fixed one on a simulated Step 3 study:
//! `cargo bench --bench adaptive`. 2,000 items with 5 options, 40 people of
//! accuracy 0.55–0.95 (seeded; wrong answers spread evenly). Every strategy
//! asks the same people in the same order per item and each person gives
//! the same answer to an item whichever strategy asks, so the figures differ
//! only by the strategy. The loop runs through the functions the server
//! uses: `Adaptive::decide` for each round, Dawid–Skene for the accuracies
//! `stop = "posterior"` reads (refitted between rounds, as the server does
//! once answers have grown by a tenth).
//!
//! Cost: answers × seconds per answer at US$12/h (BiVLC's rate). Seconds per
//! answer: `HARDNEG_SECONDS_PER_ANSWER`, default 10 s — an assumption, not a
//! measurement (hardneg's demo answers are synthetic); put a pilot's median
//! `elapsed_ms` here.
use hardneg::domain::adaptive::{Adaptive, Decision, Stop, PRIOR_ACCURACY};
use hardneg::domain::aggregate::{aggregate, Model, Options};
use hardneg::domain::rng::{mix, shuffle, SplitMix64};
use std::collections::HashMap;

const ITEMS: usize = 2_000;
const K: usize = 5;
const PEOPLE: usize = 40;
const SEED: u64 = 20_240_611;
const DOLLARS_PER_HOUR: f64 = 12.0;

struct World {
    truth: Vec<usize>,
    accuracy: Vec<f64>,
    /// Per item, the people in the order they are asked.
    order: Vec<Vec<usize>>,
}

impl World {
    fn new() -> World {
        let mut rng = SplitMix64::new(SEED);
        let truth = (0..ITEMS).map(|_| rng.below(K)).collect();
        let accuracy = (0..PEOPLE).map(|_| 0.55 + 0.40 * rng.next_f64()).collect();
        let order = (0..ITEMS)
            .map(|i| {
                let mut p: Vec<usize> = (0..PEOPLE).collect();
                shuffle(&mut p, mix(&[SEED, i as u64]));
                p
            })
            .collect();
        World { truth, accuracy, order }
    }

    /// What person `p` answers on item `i`, the same whoever asks.
    fn answer(&self, i: usize, p: usize) -> usize {
        let mut rng = SplitMix64::new(mix(&[SEED, 0xA5, i as u64, p as u64]));
        if rng.next_f64() < self.accuracy[p] {
            self.truth[i]
        } else {
            (self.truth[i] + 1 + rng.below(K - 1)) % K
        }
    }
}

struct Outcome {
    answers: usize,
    labels: Vec<usize>,
    /// The labels `resolve = "dawid_skene"` gives the same answers.
    model_labels: Vec<usize>,
    max_per_item: usize,
}

/// Runs a rule round by round: every item starts with `min` answers; each
/// round, items the rule does not stop get one more.
fn run(world: &World, rule: Adaptive) -> Outcome {
    let mut given: Vec<Vec<usize>> = (0..ITEMS).map(|i| (0..rule.min).map(|j| world.order[i][j]).collect()).collect();
    let mut labels = vec![None; ITEMS];
    while labels.iter().any(Option::is_none) {
        let accuracy = match rule.stop {
            Stop::Posterior { .. } => fitted_accuracies(world, &given),
            Stop::Agree => HashMap::new(),
        };
        for i in 0..ITEMS {
            if labels[i].is_some() {
                continue;
            }
            let answers: Vec<(usize, f64)> = given[i]
                .iter()
                .map(|&p| (world.answer(i, p), accuracy.get(&(p as u64)).copied().unwrap_or(PRIOR_ACCURACY)))
                .collect();
            match rule.decide(&answers, K) {
                Decision::Stop { label, .. } => labels[i] = Some(label),
                Decision::More => {
                    let next = world.order[i][given[i].len()];
                    given[i].push(next);
                }
            }
        }
    }
    let opts = Options { seed: SEED, ..Options::dawid_skene() };
    let fitted = aggregate(Model::DawidSkene, &triples(world, &given), K, &[], &opts).expect("every person answers");
    Outcome {
        model_labels: (0..ITEMS).map(|i| fitted.item(i as u64).map_or(0, |p| p.label)).collect(),
        answers: given.iter().map(Vec::len).sum(),
        labels: labels.into_iter().map(|l| l.unwrap_or(0)).collect(),
        max_per_item: given.iter().map(Vec::len).max().unwrap_or(0),
    }
}

fn triples(world: &World, given: &[Vec<usize>]) -> Vec<(u64, u64, usize)> {
    given
        .iter()
        .enumerate()
        .flat_map(|(i, ps)| ps.iter().map(move |&p| (i as u64, p as u64, world.answer(i, p))))
        .collect()
}

fn fitted_accuracies(world: &World, given: &[Vec<usize>]) -> HashMap<u64, f64> {
    let opts = Options { seed: SEED, ..Options::dawid_skene() };
    match aggregate(Model::DawidSkene, &triples(world, given), K, &[], &opts) {
        Ok(a) => a.people.iter().map(|p| (p.person, p.accuracy)).collect(),
        Err(_) => HashMap::new(),
    }
}

fn accuracy(world: &World, labels: &[usize]) -> f64 {
    labels.iter().zip(&world.truth).filter(|(l, t)| l == t).count() as f64 / ITEMS as f64
}

fn main() {
    let seconds: f64 = std::env::var("HARDNEG_SECONDS_PER_ANSWER").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let world = World::new();
    let fixed = |k| Adaptive { min: k, max: k, stop: Stop::Agree };
    let strategies = [
        ("fixed overlap 3", fixed(3)),
        ("fixed overlap 5", fixed(5)),
        ("adaptive agree (min 2, max 5)", Adaptive { min: 2, max: 5, stop: Stop::Agree }),
        (
            "adaptive posterior >= 0.95 (min 2, max 5)",
            Adaptive { min: 2, max: 5, stop: Stop::Posterior { threshold: 0.95 } },
        ),
    ];
    println!(
        "simulated Step 3: {ITEMS} items, {K} options, {PEOPLE} people of accuracy 0.55-0.95, {seconds} s per answer, US${DOLLARS_PER_HOUR}/h"
    );
    println!(
        "{:<44} {:>8} {:>8} {:>9} {:>9} {:>9} {:>10}",
        "strategy", "answers", "per item", "accuracy", "(DS)", "cost US$", "vs fixed 5"
    );
    let mut results = Vec::new();
    for (name, rule) in strategies {
        let out = run(&world, rule);
        assert!(out.max_per_item <= rule.max, "{name}: an item got more than max");
        results.push((name, out.answers, accuracy(&world, &out.labels), accuracy(&world, &out.model_labels)));
    }
    let five = results[1].1 as f64;
    for (name, answers, acc, model_acc) in &results {
        println!(
            "{name:<44} {answers:>8} {:>8.2} {:>9.4} {:>9.4} {:>9.2} {:>9.1}%",
            *answers as f64 / ITEMS as f64,
            acc,
            model_acc,
            *answers as f64 * seconds / 3600.0 * DOLLARS_PER_HOUR,
            100.0 * (1.0 - *answers as f64 / five)
        );
    }
    println!("accuracy: the labels the rule itself gives (majority for fixed overlaps); (DS): Dawid-Skene over the same answers");
    let (_, _, five_acc, _) = results[1];
    for (name, answers, acc, _) in &results[2..] {
        let fewer = 1.0 - *answers as f64 / five;
        let met = *acc >= five_acc - 0.005 && fewer >= 0.35;
        println!(
            "target (fixed 5's accuracy within 0.5 points, >= 35% fewer answers): {name}: {}",
            if met { "met" } else { "NOT met" }
        );
    }
}
