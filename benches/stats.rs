//! Agreement and metrics over a million answers, crowd aggregation over
//! 200k answers and bootstrap intervals: `cargo bench --bench stats`.
//! Prints wall time for the pure computations (what the API adds is the
//! SQLite read of the answers).
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
    for run in 1..=2 {
        for model in [Model::DawidSkene, Model::Mace] {
            let start = Instant::now();
            let a = aggregate::aggregate(model, &answers, 5, &[], &Options::for_model(model)).expect("valid input");
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
