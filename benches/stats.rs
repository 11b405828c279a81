//! Agreement and metrics over a million answers: `cargo bench --bench stats`.
//! Prints wall time for the pure computations (what the API adds is the
//! SQLite read of the answers).
use hardneg::domain::agreement::study_agreement;
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
}
