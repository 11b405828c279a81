//! Simulated annotators with known confusion matrices, for the tests.
use crate::domain::rng::SplitMix64;

/// `confusion[truth][answer]` with `accuracy` on the diagonal; the rest goes
/// to `(truth + shift) % k` when `shift` is given (a systematic confusion),
/// else spreads evenly over the other classes.
pub fn confusion(accuracy: f64, k: usize, shift: Option<usize>) -> Vec<Vec<f64>> {
    (0..k)
        .map(|t| {
            (0..k)
                .map(|a| match shift {
                    _ if a == t => accuracy,
                    Some(s) if a == (t + s) % k => 1.0 - accuracy,
                    Some(_) => 0.0,
                    None => (1.0 - accuracy) / (k - 1) as f64,
                })
                .collect()
        })
        .collect()
}

pub struct Simulated {
    pub truth: Vec<usize>,
    pub answers: Vec<(u64, u64, usize)>,
}

impl Simulated {
    /// Each person's share of right answers in the simulated data.
    pub fn accuracy_of(&self, person: u64) -> f64 {
        let mine: Vec<_> = self.answers.iter().filter(|a| a.1 == person).collect();
        mine.iter().filter(|a| self.truth[a.0 as usize] == a.2).count() as f64 / mine.len() as f64
    }

    /// Share of items whose label equals the truth.
    pub fn score(&self, labels: &[usize]) -> f64 {
        labels.iter().zip(&self.truth).filter(|(l, t)| l == t).count() as f64 / self.truth.len() as f64
    }

    /// Majority vote, ties broken at random (seeded), as a fair baseline.
    pub fn majority(&self, k: usize, seed: u64) -> Vec<usize> {
        let mut rng = SplitMix64::new(seed);
        let mut votes = vec![vec![0usize; k]; self.truth.len()];
        for &(i, _, l) in &self.answers {
            votes[i as usize][l] += 1;
        }
        votes
            .iter()
            .map(|v| {
                let max = *v.iter().max().unwrap();
                let tied: Vec<usize> = (0..k).filter(|&c| v[c] == max).collect();
                tied[rng.below(tied.len())]
            })
            .collect()
    }
}

/// `items` items with uniform truths over `k` classes; each is answered by
/// `per_item` distinct people drawn at random from `people` (person id =
/// index), who answer by their confusion matrix.
pub fn simulate(seed: u64, items: usize, k: usize, people: &[Vec<Vec<f64>>], per_item: usize) -> Simulated {
    let mut rng = SplitMix64::new(seed);
    let mut truth = Vec::with_capacity(items);
    let mut answers = Vec::new();
    let mut who: Vec<usize> = (0..people.len()).collect();
    for i in 0..items {
        let t = rng.below(k);
        truth.push(t);
        for x in 0..per_item {
            let j = x + rng.below(who.len() - x);
            who.swap(x, j);
        }
        for &w in &who[..per_item] {
            let (mut u, mut a) = (rng.next_f64(), 0);
            while a + 1 < k && u >= people[w][t][a] {
                u -= people[w][t][a];
                a += 1;
            }
            answers.push((i as u64, w as u64, a));
        }
    }
    Simulated { truth, answers }
}
