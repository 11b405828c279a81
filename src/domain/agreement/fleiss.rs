//! Fleiss' kappa: many raters, the same number `m` on every item (which
//! raters they are may differ). With unequal `m` the formula's chance model
//! does not hold, so that is an error rather than a silent approximation —
//! use Krippendorff's alpha for ragged data.
use super::AgreementError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleiss {
    pub kappa: f64,
    /// Mean per-item agreement P̄.
    pub observed: f64,
    /// Chance agreement P_e = Σ_j p_j².
    pub expected: f64,
    /// Items used (N).
    pub items: usize,
    /// Raters per item (m).
    pub raters_per_item: u64,
}

/// Streaming accumulator, so `study_agreement` needs no per-item vectors.
#[derive(Debug, Clone, Default)]
pub(super) struct FleissAcc {
    items: usize,
    m: u64,
    /// Σ_i Σ_j n_ij².
    sum_sq: u128,
    /// Category totals C_j = Σ_i n_ij.
    totals: Vec<u64>,
    error: Option<AgreementError>,
}

impl FleissAcc {
    pub(super) fn new(k: usize) -> Self {
        FleissAcc { totals: vec![0; k], ..Default::default() }
    }

    /// Adds one item's counts over the `k` categories. The first error sticks.
    pub(super) fn add(&mut self, counts: &[u64]) {
        if self.error.is_some() {
            return;
        }
        let item = self.items;
        let m: u64 = counts.iter().sum();
        let err = if counts.len() != self.totals.len() {
            Some(AgreementError::RaggedCounts { item, expected: self.totals.len(), found: counts.len() })
        } else if item == 0 && m < 2 {
            Some(AgreementError::TooFewRaters(m))
        } else if item > 0 && m != self.m {
            Some(AgreementError::UnequalRaters { item, expected: self.m, found: m })
        } else {
            None
        };
        if err.is_some() {
            self.error = err;
            return;
        }
        self.m = m;
        self.items += 1;
        for (t, &c) in self.totals.iter_mut().zip(counts) {
            *t += c;
            self.sum_sq += c as u128 * c as u128;
        }
    }

    /// Kappa in exact integer arithmetic: with T = N·m, S = Σn_ij²,
    /// Q = ΣC_j², κ = (T(S−T) − Q(m−1)) / ((m−1)(T² − Q)).
    pub(super) fn finish(self) -> Result<Fleiss, AgreementError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.items == 0 {
            return Err(AgreementError::NoItems);
        }
        let m = self.m as u128;
        let t = self.items as u128 * m;
        let q: u128 = self.totals.iter().map(|&c| c as u128 * c as u128).sum();
        let observed = (self.sum_sq - t) as f64 / (t * (m - 1)) as f64;
        let expected = q as f64 / (t * t) as f64;
        if self.totals.iter().any(|&c| c as u128 == t) {
            return Err(AgreementError::FleissSingleCategory);
        }
        let num = (t * (self.sum_sq - t)) as i128 - (q * (m - 1)) as i128;
        let den = ((m - 1) * (t * t - q)) as i128;
        Ok(Fleiss { kappa: num as f64 / den as f64, observed, expected, items: self.items, raters_per_item: self.m })
    }
}

/// Fleiss' kappa from per-item count vectors over `k` categories
/// (`counts[i][j]` = raters who put item `i` in category `j`).
pub fn fleiss_kappa<R: AsRef<[u64]>>(counts: &[R]) -> Result<Fleiss, AgreementError> {
    let k = counts.first().map_or(0, |c| c.as_ref().len());
    let mut acc = FleissAcc::new(k);
    for c in counts {
        acc.add(c.as_ref());
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fleiss (1971) as reproduced on Wikipedia: 10 items, 14 raters, 5 categories.
    const WIKIPEDIA: [[u64; 5]; 10] = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ];

    #[test]
    fn wikipedia_example() {
        let f = fleiss_kappa(&WIKIPEDIA).unwrap();
        assert_eq!((f.items, f.raters_per_item), (10, 14));
        assert!((f.observed - 0.378).abs() < 5e-4, "P̄ = {}", f.observed);
        assert!((f.expected - 0.213).abs() < 5e-4, "P_e = {}", f.expected);
        assert!((f.kappa - 0.210).abs() < 5e-4, "kappa = {}", f.kappa);
        // Exact value: P̄ = 0.37802198, P_e = 0.21275510.
        let exact = (0.378_021_978_021_978 - 0.212_755_102_040_816) / (1.0 - 0.212_755_102_040_816);
        assert!((f.kappa - exact).abs() < 1e-12);
    }

    #[test]
    fn perfect_agreement_is_one() {
        let f = fleiss_kappa(&[[3u64, 0, 0], [0, 3, 0], [0, 0, 3], [3, 0, 0]]).unwrap();
        assert_eq!(f.kappa, 1.0);
        assert_eq!(f.observed, 1.0);
    }

    #[test]
    fn maximal_disagreement_is_negative() {
        // Two raters always disagree, balanced marginals: P̄ = 0, P_e = 1/2 → −1.
        let f = fleiss_kappa(&[[1u64, 1], [1, 1], [1, 1]]).unwrap();
        assert_eq!(f.observed, 0.0);
        assert!((f.kappa + 1.0).abs() < 1e-12);
    }

    #[test]
    fn single_category_is_undefined() {
        let e = fleiss_kappa(&[[0u64, 4], [0, 4]]).unwrap_err();
        assert_eq!(e, AgreementError::FleissSingleCategory);
        assert!(e.to_string().contains("P_e is 1"));
    }

    #[test]
    fn degenerate_inputs() {
        let none: [[u64; 2]; 0] = [];
        assert_eq!(fleiss_kappa(&none).unwrap_err(), AgreementError::NoItems);
        assert_eq!(fleiss_kappa(&[[1u64, 0]]).unwrap_err(), AgreementError::TooFewRaters(1));
        assert_eq!(
            fleiss_kappa(&[[1u64, 1], [2, 1], [0, 2]]).unwrap_err(),
            AgreementError::UnequalRaters { item: 1, expected: 2, found: 3 }
        );
        let ragged: Vec<Vec<u64>> = vec![vec![1, 1], vec![2]];
        assert_eq!(fleiss_kappa(&ragged).unwrap_err(), AgreementError::RaggedCounts { item: 1, expected: 2, found: 1 });
    }

    #[test]
    fn empty_categories_do_not_change_kappa() {
        let widened: Vec<Vec<u64>> = WIKIPEDIA.iter().map(|r| [&r[..], &[0, 0]].concat()).collect();
        let a = fleiss_kappa(&WIKIPEDIA).unwrap().kappa;
        let b = fleiss_kappa(&widened).unwrap().kappa;
        assert!((a - b).abs() < 1e-15);
    }
}
