//! Bootstrap 95% confidence intervals for every agreement coefficient.
//! The item is the unit of sampling: a resample draws as many items as the
//! study has, with replacement, each bringing all its ratings; every
//! coefficient is recomputed on it, and the interval is the 2.5th and 97.5th
//! percentile of the defined values (numpy's default linear interpolation).
//! Fleiss' kappa keeps the original sample's modal rater count m. Each item's
//! contributions are precomputed once, so a resample costs O(items + pairs·k²).
use super::alpha::AlphaAcc;
use super::fleiss::FleissAcc;
use super::study::{group, modal_raters, Grouped};
use super::{mean_kappa, PairAgreement};
use crate::domain::rng::SplitMix64;
use serde::Serialize;

pub const DEFAULT_RESAMPLES: usize = 1000;
pub const LEVEL: f64 = 0.95;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// Resamples on which the coefficient was defined (the interval uses only those).
    pub defined: usize,
}

impl Interval {
    /// The central `LEVEL` percentile interval of the defined values; `None` if there are none.
    pub fn from_values(values: impl IntoIterator<Item = Option<f64>>) -> Option<Interval> {
        let mut v: Vec<f64> = values.into_iter().flatten().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let tail = (1.0 - LEVEL) / 2.0;
        Some(Interval { low: percentile(&v, tail), high: percentile(&v, 1.0 - tail), defined: v.len() })
    }
}

/// numpy's `percentile(..., method="linear")` of ascending `sorted` at `q` in [0, 1].
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Annotators are ids here; reports name them (`map_annotators`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairInterval<A = u64> {
    pub a: A,
    pub b: A,
    pub kappa: Option<Interval>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapCis<A = u64> {
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
    /// Every annotator pair sharing an item, ordered by (a, b) as in `StudyAgreement`.
    pub pairs: Vec<PairInterval<A>>,
    pub mean_kappa: Option<Interval>,
    pub fleiss_kappa: Option<Interval>,
    pub krippendorff_alpha: Option<Interval>,
}

impl BootstrapCis {
    pub fn map_annotators<B>(self, f: impl Fn(u64) -> B) -> BootstrapCis<B> {
        let pairs = self.pairs.into_iter().map(|p| PairInterval { a: f(p.a), b: f(p.b), kappa: p.kappa }).collect();
        BootstrapCis {
            resamples: self.resamples,
            seed: self.seed,
            level: self.level,
            pairs,
            mean_kappa: self.mean_kappa,
            fleiss_kappa: self.fleiss_kappa,
            krippendorff_alpha: self.krippendorff_alpha,
        }
    }
}

/// Every coefficient on one resample (`None` where undefined).
#[derive(Debug, Clone, PartialEq)]
pub struct Coefficients {
    pub pair_kappas: Vec<Option<f64>>,
    pub mean_kappa: Option<f64>,
    pub fleiss_kappa: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
}

struct ItemParts {
    categories: Vec<usize>,
    /// Flat indices into the pairs' k × k confusion tables.
    cells: Vec<usize>,
    /// Category counts, for items with the modal rater count.
    fleiss: Option<Vec<u64>>,
}

/// A study's ratings prepared for resampling. Items are in ascending id order.
pub struct Bootstrap {
    k: usize,
    items: Vec<ItemParts>,
    pairs: Vec<(u64, u64)>,
}

impl Bootstrap {
    /// `k` widens to cover every label, as in `study_agreement`.
    pub fn new(ratings: &[(u64, u64, usize)], k: usize) -> Bootstrap {
        let k = ratings.iter().map(|r| r.2 + 1).max().unwrap_or(0).max(k).max(1);
        let Grouped { rows, bounds, .. } = group(ratings);
        let (modal_m, _) = modal_raters(&bounds);
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        for &(s, e) in &bounds {
            for (x, ra) in rows[s..e].iter().enumerate() {
                pairs.extend(rows[s + x + 1..e].iter().map(|rb| (ra.1, rb.1)));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let items = bounds
            .iter()
            .map(|&(s, e)| {
                let raters = &rows[s..e];
                let mut cells = Vec::new();
                for (x, ra) in raters.iter().enumerate() {
                    for rb in &raters[x + 1..] {
                        let slot = pairs.binary_search(&(ra.1, rb.1)).expect("collected above");
                        cells.push(slot * k * k + ra.2 * k + rb.2);
                    }
                }
                let fleiss = (Some(raters.len()) == modal_m).then(|| {
                    let mut c = vec![0u64; k];
                    raters.iter().for_each(|r| c[r.2] += 1);
                    c
                });
                ItemParts { categories: raters.iter().map(|r| r.2).collect(), cells, fleiss }
            })
            .collect();
        Bootstrap { k, items, pairs }
    }

    pub fn items(&self) -> usize {
        self.items.len()
    }

    /// Coefficients with item `i` counted `weights[i]` times.
    pub fn coefficients(&self, weights: &[u32]) -> Coefficients {
        let (k, kk) = (self.k, self.k * self.k);
        let mut confusion = vec![0u64; self.pairs.len() * kk];
        let mut fleiss = FleissAcc::new(k);
        let mut alpha = AlphaAcc::new(k);
        let mut any_fleiss = false;
        for (item, &w) in self.items.iter().zip(weights) {
            for &cell in &item.cells {
                confusion[cell] += w as u64;
            }
            for _ in 0..w {
                alpha.add(item.categories.iter().copied()).expect("k covers every label");
                if let Some(c) = &item.fleiss {
                    fleiss.add(c);
                    any_fleiss = true;
                }
            }
        }
        let agreements: Vec<PairAgreement> = confusion
            .chunks(kk)
            .map(|t| PairAgreement::from_confusion(t.chunks(k).map(<[u64]>::to_vec).collect()).expect("square"))
            .collect();
        Coefficients {
            pair_kappas: agreements.iter().map(|a| a.kappa).collect(),
            mean_kappa: mean_kappa(&agreements).ok(),
            fleiss_kappa: if any_fleiss { fleiss.finish().ok().map(|f| f.kappa) } else { None },
            krippendorff_alpha: alpha.finish().ok().map(|a| a.alpha),
        }
    }

    /// Coefficients on the resample that drew these item positions.
    pub fn on_indices(&self, indices: &[usize]) -> Coefficients {
        let mut weights = vec![0u32; self.items.len()];
        indices.iter().for_each(|&i| weights[i] += 1);
        self.coefficients(&weights)
    }

    /// Intervals over the given resamples (each a list of item positions:
    /// the tests' fixed draws).
    #[cfg(test)]
    pub fn intervals_over(&self, resamples: &[Vec<usize>], seed: u64) -> BootstrapCis {
        self.summarise(resamples.iter().map(|r| self.on_indices(r)).collect(), seed)
    }

    /// `resamples` seeded resamples of the items (drawn one at a time, so
    /// memory stays at one weight vector).
    pub fn intervals(&self, resamples: usize, seed: u64) -> BootstrapCis {
        let mut rng = SplitMix64::new(seed);
        let n = self.items.len();
        let mut weights = vec![0u32; n];
        let mut all = Vec::with_capacity(resamples);
        for _ in 0..resamples {
            weights.iter_mut().for_each(|w| *w = 0);
            (0..n).for_each(|_| weights[rng.below(n)] += 1);
            all.push(self.coefficients(&weights));
        }
        self.summarise(all, seed)
    }

    fn summarise(&self, all: Vec<Coefficients>, seed: u64) -> BootstrapCis {
        let of = |f: &dyn Fn(&Coefficients) -> Option<f64>| Interval::from_values(all.iter().map(f));
        BootstrapCis {
            resamples: all.len(),
            seed,
            level: LEVEL,
            pairs: self
                .pairs
                .iter()
                .enumerate()
                .map(|(p, &(a, b))| PairInterval { a, b, kappa: of(&|c| c.pair_kappas[p]) })
                .collect(),
            mean_kappa: of(&|c| c.mean_kappa),
            fleiss_kappa: of(&|c| c.fleiss_kappa),
            krippendorff_alpha: of(&|c| c.krippendorff_alpha),
        }
    }
}

/// Bootstrap intervals for a study's `(item, annotator, category)` ratings.
pub fn bootstrap_agreement(ratings: &[(u64, u64, usize)], k: usize, resamples: usize, seed: u64) -> BootstrapCis {
    Bootstrap::new(ratings, k).intervals(resamples, seed)
}
