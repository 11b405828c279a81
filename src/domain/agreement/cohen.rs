//! Cohen's kappa for one pair of annotators, and the mean over pairs.
use super::{split, AgreementError};
use serde::Serialize;

/// Agreement of one annotator pair over the items both rated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairAgreement {
    /// Items rated by both.
    pub n: usize,
    /// Observed agreement p_o (0 when `n == 0`).
    pub observed: f64,
    /// Chance agreement p_e from the two marginals (0 when `n == 0`).
    pub expected: f64,
    /// `(p_o - p_e) / (1 - p_e)`, negative when worse than chance.
    pub kappa: Option<f64>,
    pub kappa_undefined_reason: Option<String>,
    /// `confusion[i][j]` = items the first annotator put in `i`, the second in `j`.
    pub confusion: Vec<Vec<u64>>,
}

impl PairAgreement {
    /// Computes everything from a square `k × k` confusion table. Kappa is
    /// evaluated in exact integer arithmetic (`(n·d − S) / (n² − S)`, with d
    /// the diagonal and S = Σ rowᵢ·colᵢ) so that "p_e == 1" is decided
    /// exactly rather than by a float comparison.
    pub fn from_confusion(confusion: Vec<Vec<u64>>) -> Result<Self, AgreementError> {
        let k = confusion.len();
        if let Some((item, row)) = confusion.iter().enumerate().find(|(_, r)| r.len() != k) {
            return Err(AgreementError::RaggedCounts { item, expected: k, found: row.len() });
        }
        let mut rows = vec![0u128; k];
        let mut cols = vec![0u128; k];
        let mut diag = 0u128;
        for (i, row) in confusion.iter().enumerate() {
            for (j, &c) in row.iter().enumerate() {
                rows[i] += c as u128;
                cols[j] += c as u128;
            }
            diag += row[i] as u128;
        }
        let n: u128 = rows.iter().sum();
        let s: u128 = rows.iter().zip(&cols).map(|(r, c)| r * c).sum();
        let (observed, expected, result) = if n == 0 {
            (0.0, 0.0, Err(AgreementError::NoSharedItems))
        } else {
            let nn = n * n;
            let observed = diag as f64 / n as f64;
            let expected = s as f64 / nn as f64;
            // p_e = 1 exactly iff both marginals sit entirely in one category.
            let result = if rows.iter().zip(&cols).any(|(&r, &c)| r == n && c == n) {
                Err(AgreementError::CohenSingleCategory)
            } else {
                let num = (n * diag) as i128 - s as i128;
                let den = (nn - s) as i128;
                Ok(num as f64 / den as f64)
            };
            (observed, expected, result)
        };
        let (kappa, kappa_undefined_reason) = split(result);
        Ok(PairAgreement { n: n as usize, observed, expected, kappa, kappa_undefined_reason, confusion })
    }
}

/// Cohen's kappa over `(label_a, label_b)` pairs, one per item both rated.
/// Errors only on invalid input (a label `>= k`); an undefined kappa is
/// reported inside the result with its reason.
pub fn cohen_kappa(pairs: &[(usize, usize)], k: usize) -> Result<PairAgreement, AgreementError> {
    let mut confusion = vec![vec![0u64; k]; k];
    for &(a, b) in pairs {
        let label = a.max(b);
        if label >= k {
            return Err(AgreementError::LabelOutOfRange { label, k });
        }
        confusion[a][b] += 1;
    }
    PairAgreement::from_confusion(confusion)
}

/// Unweighted mean of the defined pairwise kappas (Light's kappa). Pairs
/// whose kappa is undefined are skipped rather than counted as 0, because
/// "undefined" means "no information", not "no agreement".
pub fn mean_kappa<'a>(pairs: impl IntoIterator<Item = &'a PairAgreement>) -> Result<f64, AgreementError> {
    let (mut seen, mut used, mut sum) = (0usize, 0usize, 0.0f64);
    for p in pairs {
        seen += 1;
        if let Some(k) = p.kappa {
            used += 1;
            sum += k;
        }
    }
    match (seen, used) {
        (0, _) => Err(AgreementError::NoPairs),
        (s, 0) => Err(AgreementError::NoDefinedPairs(s)),
        (_, u) => Ok(sum / u as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(t: &[&[u64]]) -> PairAgreement {
        PairAgreement::from_confusion(t.iter().map(|r| r.to_vec()).collect()).unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn cohen_classic_example() {
        let p = table(&[&[20, 5], &[10, 15]]);
        assert_eq!(p.n, 50);
        assert!(close(p.observed, 0.7, 1e-12));
        assert!(close(p.expected, 0.5, 1e-12));
        assert!(close(p.kappa.unwrap(), 0.4, 1e-12));
        assert!(p.kappa_undefined_reason.is_none());
    }

    #[test]
    fn wikipedia_marginal_examples() {
        // Same p_o = 0.6, different marginals → different kappa.
        let a = table(&[&[45, 15], &[25, 15]]);
        assert!(close(a.expected, 0.54, 1e-12));
        assert!(close(a.kappa.unwrap(), 0.06 / 0.46, 1e-12)); // 0.1304
        let b = table(&[&[25, 35], &[5, 35]]);
        assert!(close(b.expected, 0.46, 1e-12));
        assert!(close(b.kappa.unwrap(), 0.14 / 0.54, 1e-12)); // 0.2593
    }

    #[test]
    fn from_pairs_matches_table_and_orientation() {
        let mut pairs = vec![(0, 0); 20];
        pairs.extend([(0, 1); 5]);
        pairs.extend([(1, 0); 10]);
        pairs.extend([(1, 1); 15]);
        let p = cohen_kappa(&pairs, 2).unwrap();
        assert_eq!(p.confusion, vec![vec![20, 5], vec![10, 15]]);
        assert!(close(p.kappa.unwrap(), 0.4, 1e-12));
        // Swapping annotators transposes the table; kappa is symmetric.
        let swapped: Vec<_> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        let q = cohen_kappa(&swapped, 2).unwrap();
        assert_eq!(q.confusion, vec![vec![20, 10], vec![5, 15]]);
        assert!(close(q.kappa.unwrap(), 0.4, 1e-12));
    }

    #[test]
    fn perfect_and_inverse_agreement() {
        assert_eq!(table(&[&[7, 0, 0], &[0, 3, 0], &[0, 0, 1]]).kappa, Some(1.0));
        // Systematic disagreement is reported as a negative kappa, not clamped.
        let p = table(&[&[0, 5], &[5, 0]]);
        assert!(close(p.kappa.unwrap(), -1.0, 1e-12));
        assert_eq!(p.observed, 0.0);
    }

    #[test]
    fn no_shared_items() {
        let p = cohen_kappa(&[], 3).unwrap();
        assert_eq!(p.n, 0);
        assert_eq!(p.kappa, None);
        assert_eq!(p.kappa_undefined_reason.as_deref(), Some("no items rated by both annotators"));
        assert_eq!(p.confusion, vec![vec![0; 3]; 3]);
    }

    #[test]
    fn both_in_one_category_is_undefined() {
        let p = cohen_kappa(&[(2, 2); 9], 3).unwrap();
        assert_eq!(p.observed, 1.0);
        assert_eq!(p.expected, 1.0);
        assert_eq!(p.kappa, None);
        assert!(p.kappa_undefined_reason.unwrap().contains("one and the same category"));
    }

    #[test]
    fn one_constant_annotator_gives_zero_not_undefined() {
        // a always says 0, b varies: p_e = p_o = 2/5 → kappa exactly 0.
        let p = cohen_kappa(&[(0, 0), (0, 1), (0, 1), (0, 0), (0, 1)], 2).unwrap();
        assert!(close(p.expected, 0.4, 1e-12));
        assert_eq!(p.kappa, Some(0.0));
        // Both constant but in different categories: p_e = 0, p_o = 0 → 0.
        let q = cohen_kappa(&[(0, 1); 4], 2).unwrap();
        assert_eq!(q.kappa, Some(0.0));
    }

    #[test]
    fn invalid_input_is_an_error() {
        assert_eq!(cohen_kappa(&[(0, 0), (1, 3)], 3).unwrap_err(), AgreementError::LabelOutOfRange { label: 3, k: 3 });
        let ragged = PairAgreement::from_confusion(vec![vec![1, 2], vec![3]]);
        assert!(matches!(ragged, Err(AgreementError::RaggedCounts { item: 1, .. })));
    }

    #[test]
    fn mean_kappa_skips_undefined() {
        let good = table(&[&[20, 5], &[10, 15]]);
        let perfect = table(&[&[3, 0], &[0, 2]]);
        let undefined = table(&[&[4, 0], &[0, 0]]);
        let m = mean_kappa([&good, &perfect, &undefined]).unwrap();
        assert!(close(m, 0.7, 1e-12));
        assert_eq!(mean_kappa(std::iter::empty()), Err(AgreementError::NoPairs));
        let err = mean_kappa([&undefined, &undefined]).unwrap_err();
        assert_eq!(err, AgreementError::NoDefinedPairs(2));
        assert!(err.to_string().ends_with("undefined for every annotator pair (2 pairs)"), "{err}");
        let one = mean_kappa([&undefined]).unwrap_err().to_string();
        assert!(one.ends_with("(1 pair)"), "{one}");
    }
}
