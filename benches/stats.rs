//! Agreement and metrics over a million answers, crowd aggregation over
//! 200k answers, bootstrap intervals and adaptive overlap's fit and
//! decision: `cargo bench --bench stats`.
//! Prints wall time for the pure computations (what the API adds is the
//! SQLite read of the answers).
use hardneg::domain::adaptive::{Adaptive, Decision, Reliability, Stop};
use hardneg::domain::aggregate::{self, Model, Options};
use hardneg::domain::agreement::{bootstrap_agreement, study_agreement, DEFAULT_RESAMPLES};
use hardneg::domain::category::Category;
use hardneg::domain::metrics::{aggregate, Outcome};
use hardneg::domain::rng::SplitMix64;
use std::time::Instant;

fn main() {
    let mut rng = SplitMix64::new(7);
    // 1M ratings: 250k items, each rated by 4 of 10 annotators (5 categories).
    let mut ratings = Vec::with_capacity(1_000_000);
    for item in 0..250_000u64 {
        let first = rng.below(10) as u64;
        let truth = rng.below(5);
        for k in 0..4u64 {
            let annotator = (first + k * 2) % 10;
            let label = if rng.next_f64() < 0.8 { truth } else { rng.below(5) };
            ratings.push((item, annotator, label));
        }
    }
    for run in 1..=3 {
        let start = Instant::now();
        let s = study_agreement(&ratings, 5);
        println!(
            "agreement, 1,000,000 answers (run {run}): {:.0} ms; {} pairs, mean kappa {:.3}, Fleiss {:.3}, alpha {:.3}",
            start.elapsed().as_secs_f64() * 1e3,
            s.pairs.len(),
            s.mean_kappa.unwrap_or(f64::NAN),
            s.fleiss_kappa.unwrap_or(f64::NAN),
            s.krippendorff_alpha.unwrap_or(f64::NAN)
        );
    }
    let outcomes: Vec<(Category, Outcome)> = (0..1_000_000)
        .map(|i| {
            let b = rng.next_u64();
            (Category::ALL[i % 7], Outcome::from_flags(b & 1 == 1, b & 2 == 2, b & 4 == 4, b & 8 == 8))
        })
        .collect();
    let start = Instant::now();
    let r = aggregate(outcomes.iter().copied());
    println!(
        "metrics, 1,000,000 outcomes: {:.1} ms; I2T {:.2}, T2I {:.2}, Group {:.2}",
        start.elapsed().as_secs_f64() * 1e3,
        r.overall.i2t,
        r.overall.t2i,
        r.overall.group
    );
    aggregation(&mut rng);
    bootstrap(&mut rng);
    adaptive_costs(&mut rng);
}

/// Dawid–Skene and MACE over 200,000 answers: 50,000 items × 4 answers from
/// 100 people of accuracy 0.55–0.95, 5 options (wrong answers uniform).
fn aggregation(rng: &mut SplitMix64) {
    let mut answers = Vec::with_capacity(200_000);
    let mut truth = Vec::with_capacity(50_000);
    let accuracy = |p: u64| 0.55 + 0.4 * p as f64 / 99.0;
    for item in 0..50_000u64 {
        let t = rng.below(5);
        truth.push(t);
        let first = rng.below(100) as u64;
        for x in 0..4u64 {
            let person = (first + x * 25) % 100;
            let label = if rng.next_f64() < accuracy(person) { t } else { (t + 1 + rng.below(4)) % 5 };
            answers.push((item, person, label));
        }
    }
    // As the server runs MACE: its restarts on every core.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for run in 1..=2 {
        for model in [Model::DawidSkene, Model::Mace] {
            let start = Instant::now();
            let a = aggregate::aggregate(model, &answers, 5, &[], &Options { threads, ..Options::for_model(model) })
                .expect("valid input");
            let right = a.items.iter().zip(&truth).filter(|(i, &t)| i.label == t).count();
            println!(
                "{model:?}, 200,000 answers (run {run}): {:.0} ms; {} iterations (MACE: of the best of 10 restarts), converged {}, label accuracy {:.3}",
                start.elapsed().as_secs_f64() * 1e3,
                a.iterations,
                a.converged,
                right as f64 / 50_000.0
            );
        }
    }
}

/// Bootstrap intervals: 5 annotator pairs, each sharing its own 100 items.
fn bootstrap(rng: &mut SplitMix64) {
    let mut ratings = Vec::new();
    for pair in 0..5u64 {
        for item in 0..100u64 {
            let t = rng.below(3);
            for who in [2 * pair, 2 * pair + 1] {
                let label = if rng.next_f64() < 0.8 { t } else { rng.below(3) };
                ratings.push((pair * 100 + item, who, label));
            }
        }
    }
    for run in 1..=3 {
        let start = Instant::now();
        let b = bootstrap_agreement(&ratings, 3, DEFAULT_RESAMPLES, 7);
        let mean = b.mean_kappa.expect("defined");
        println!(
            "bootstrap CIs, 5 pairs x 100 items, {DEFAULT_RESAMPLES} resamples (run {run}): {:.1} ms; mean kappa [{:.3}, {:.3}]",
            start.elapsed().as_secs_f64() * 1e3,
            mean.low,
            mean.high
        );
    }
}

/// Adaptive overlap's costs on the answer path (studies::adaptive): the
/// reliability fit (refitted once a study's answers grow by a tenth, outside
/// the writer's gate) and one item's decision (inside it, with each rater's
/// rows earned again without the item's raters), for a link study of
/// `items` items in bundles of 20, 3 answers an item, 5 values.
fn adaptive_costs(rng: &mut SplitMix64) {
    for items in [2_000u64, 10_000, 40_000] {
        let mut answers = Vec::new();
        let mut by_item: Vec<Vec<(u64, usize)>> = vec![Vec::new(); items as usize];
        let mut person = 0u64;
        for bundle in 0..items / 20 {
            for _copy in 0..3 {
                person += 1;
                let good = rng.next_f64() < 0.7;
                for item in bundle * 20..(bundle + 1) * 20 {
                    let truth = (item % 5) as usize;
                    let class = if good && rng.next_f64() < 0.9 { truth } else { rng.below(5) };
                    answers.push((item, person, class));
                    by_item[item as usize].push((person, class));
                }
            }
        }
        let start = Instant::now();
        let rel = Reliability::fit(&answers, &[], 5);
        let fit = start.elapsed();
        let rule = Adaptive {
            min: 2,
            max: 5,
            stop: Stop::Posterior { threshold: 0.95 },
            allow_unchosen: false,
            end_uninformative: true,
        };
        let start = Instant::now();
        let mut stops = 0;
        for (item, given) in by_item.iter().enumerate().take(1_000) {
            stops += usize::from(matches!(rule.decide(item as u64, given, &rel), Decision::Stop { .. }));
        }
        println!(
            "adaptive, {items} items, {} answers, {person} people: fit {:.1} ms; one item's decision {:.1} µs ({stops} of 1,000 stop)",
            answers.len(),
            fit.as_secs_f64() * 1e3,
            start.elapsed().as_secs_f64() * 1e6 / 1_000.0
        );
    }
}
