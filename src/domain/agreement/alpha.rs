//! Krippendorff's alpha, nominal metric, via the coincidence matrix
//! (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"). Chosen
//! because annotation studies are ragged: not every annotator answers every
//! item, and alpha uses every unit with at least two answers.
use super::AgreementError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alpha {
    /// `1 − D_o / D_e`.
    pub alpha: f64,
    pub observed_disagreement: f64,
    pub expected_disagreement: f64,
    /// Units with at least 2 answers (the others cannot be paired).
    pub units: usize,
    /// Pairable values n (answers in those units).
    pub pairable_values: usize,
    /// Coincidence matrix o_ck; row c sums to n_c.
    pub coincidence: Vec<Vec<f64>>,
}

/// Streaming accumulator: one unit at a time, O(m_u²) work per unit.
#[derive(Debug, Clone)]
pub(super) struct AlphaAcc {
    k: usize,
    /// Row-major k × k coincidence matrix.
    o: Vec<f64>,
    /// n_c kept as integers so "no variation" is decided exactly.
    n_c: Vec<u64>,
    units: usize,
    /// Per-unit scratch counts and the categories touched in this unit.
    scratch: Vec<u64>,
    present: Vec<usize>,
}

impl AlphaAcc {
    pub(super) fn new(k: usize) -> Self {
        AlphaAcc { k, o: vec![0.0; k * k], n_c: vec![0; k], units: 0, scratch: vec![0; k], present: Vec::new() }
    }

    /// Adds one unit's answers (missing answers simply absent).
    pub(super) fn add(&mut self, values: impl IntoIterator<Item = usize>) -> Result<(), AgreementError> {
        let mut m = 0u64;
        let mut bad = None;
        for v in values {
            if v >= self.k {
                bad = Some(v);
                break;
            }
            if self.scratch[v] == 0 {
                self.present.push(v);
            }
            self.scratch[v] += 1;
            m += 1;
        }
        if bad.is_none() && m >= 2 {
            self.units += 1;
            let w = 1.0 / (m - 1) as f64;
            for &c in &self.present {
                let nc = self.scratch[c];
                self.n_c[c] += nc;
                for &d in &self.present {
                    let pairs = if c == d { nc * (nc - 1) } else { nc * self.scratch[d] };
                    self.o[c * self.k + d] += pairs as f64 * w;
                }
            }
        }
        for c in self.present.drain(..) {
            self.scratch[c] = 0;
        }
        match bad {
            Some(label) => Err(AgreementError::LabelOutOfRange { label, k: self.k }),
            None => Ok(()),
        }
    }

    pub(super) fn units(&self) -> usize {
        self.units
    }

    pub(super) fn finish(self) -> Result<Alpha, AgreementError> {
        let n: u64 = self.n_c.iter().sum();
        if n < 2 {
            return Err(AgreementError::TooFewPairable);
        }
        if self.n_c.contains(&n) {
            return Err(AgreementError::AlphaNoVariation);
        }
        let k = self.k;
        let off_diag: f64 = (0..k * k).filter(|i| i / k != i % k).map(|i| self.o[i]).sum();
        let sum_sq: u128 = self.n_c.iter().map(|&c| c as u128 * c as u128).sum();
        let nf = n as f64;
        let observed = off_diag / nf;
        let expected = ((n as u128 * n as u128) - sum_sq) as f64 / (nf * (nf - 1.0));
        Ok(Alpha {
            alpha: 1.0 - observed / expected,
            observed_disagreement: observed,
            expected_disagreement: expected,
            units: self.units,
            pairable_values: n as usize,
            coincidence: self.o.chunks(k.max(1)).take(k).map(<[f64]>::to_vec).collect(),
        })
    }
}

/// Alpha from per-unit answer lists (any length; units with < 2 are dropped).
pub fn krippendorff_alpha<R: AsRef<[usize]>>(units: &[R], k: usize) -> Result<Alpha, AgreementError> {
    let mut acc = AlphaAcc::new(k);
    for u in units {
        acc.add(u.as_ref().iter().copied())?;
    }
    acc.finish()
}

/// Alpha from a units × coders matrix, `None` = coder did not answer
/// (the layout of Krippendorff's worked examples, which the tests check).
#[cfg(test)]
pub fn krippendorff_alpha_matrix<R: AsRef<[Option<usize>]>>(matrix: &[R], k: usize) -> Result<Alpha, AgreementError> {
    let mut acc = AlphaAcc::new(k);
    for row in matrix {
        acc.add(row.as_ref().iter().flatten().copied())?;
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Krippendorff (2011), section C: 4 observers × 12 units, values 1..5,
    /// `0` = missing. Published nominal alpha: 0.743.
    const K2011: [[usize; 12]; 4] = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3],
        [0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0],
    ];

    fn k2011_matrix() -> Vec<Vec<Option<usize>>> {
        (0..12).map(|u| K2011.iter().map(|obs| obs[u].checked_sub(1)).collect()).collect()
    }

    #[test]
    fn krippendorff_2011_nominal() {
        let a = krippendorff_alpha_matrix(&k2011_matrix(), 5).unwrap();
        assert_eq!(a.units, 11, "unit 12 has a single value and is dropped");
        assert_eq!(a.pairable_values, 40);
        let n_c: Vec<f64> = a.coincidence.iter().map(|r| r.iter().sum()).collect();
        for (got, want) in n_c.iter().zip([9.0, 13.0, 10.0, 5.0, 3.0]) {
            assert!((got - want).abs() < 1e-12);
        }
        let diag: Vec<f64> = (0..5).map(|c| a.coincidence[c][c]).collect();
        for (got, want) in diag.iter().zip([7.0, 10.0, 8.0, 4.0, 3.0]) {
            assert!((got - want).abs() < 1e-12, "{diag:?}");
        }
        assert!((a.coincidence[0][1] - 4.0 / 3.0).abs() < 1e-12);
        assert!((a.observed_disagreement - 0.2).abs() < 1e-12);
        assert!((a.expected_disagreement - 1216.0 / 1560.0).abs() < 1e-12);
        assert!((a.alpha - 0.743).abs() < 5e-4, "alpha = {}", a.alpha);
        assert!((a.alpha - (1.0 - 0.2 * 1560.0 / 1216.0)).abs() < 1e-12);
    }

    #[test]
    fn list_and_matrix_forms_agree() {
        let lists: Vec<Vec<usize>> = k2011_matrix().iter().map(|r| r.iter().flatten().copied().collect()).collect();
        let a = krippendorff_alpha(&lists, 5).unwrap();
        let b = krippendorff_alpha_matrix(&k2011_matrix(), 5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn coincidence_matrix_is_symmetric() {
        let a = krippendorff_alpha_matrix(&k2011_matrix(), 5).unwrap();
        for c in 0..5 {
            for d in 0..5 {
                assert!((a.coincidence[c][d] - a.coincidence[d][c]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn perfect_agreement_is_one() {
        let a = krippendorff_alpha(&[vec![0, 0, 0], vec![1, 1], vec![2, 2, 2, 2], vec![1]], 3).unwrap();
        assert_eq!(a.alpha, 1.0);
        assert_eq!(a.units, 3);
    }

    #[test]
    fn degenerate_inputs() {
        let empty: [Vec<usize>; 0] = [];
        assert_eq!(krippendorff_alpha(&empty, 2).unwrap_err(), AgreementError::TooFewPairable);
        // Single rater everywhere: nothing pairable.
        let single = [vec![0], vec![1], vec![], vec![1]];
        assert_eq!(krippendorff_alpha(&single, 2).unwrap_err(), AgreementError::TooFewPairable);
        // All pairable values in one category (the lone "1" is not pairable).
        let flat = [vec![0, 0], vec![0, 0, 0], vec![1]];
        let e = krippendorff_alpha(&flat, 2).unwrap_err();
        assert_eq!(e, AgreementError::AlphaNoVariation);
        assert!(e.to_string().contains("D_e is 0"));
        assert_eq!(
            krippendorff_alpha(&[vec![0, 4]], 3).unwrap_err(),
            AgreementError::LabelOutOfRange { label: 4, k: 3 }
        );
        assert_eq!(
            krippendorff_alpha(&[vec![0, 0]], 0).unwrap_err(),
            AgreementError::LabelOutOfRange { label: 0, k: 0 }
        );
    }

    #[test]
    fn systematic_disagreement_is_negative() {
        // Two coders always disagree on a balanced binary label:
        // D_o = 1, D_e = (n²−Σn_c²)/(n(n−1)) = 8/12 → alpha = −0.5.
        let a = krippendorff_alpha(&[vec![0, 1], vec![1, 0]], 2).unwrap();
        assert!((a.alpha + 0.5).abs() < 1e-12);
    }
}
