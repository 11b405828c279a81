//! All coefficients for one study from raw `(item, annotator, category)`
//! triples. Ratings are grouped by item once (one sort); every pair of raters
//! on an item then updates that annotator pair's confusion table, so the cost
//! is O(R log R + Σ_items m²) for R ratings and m raters per item — no
//! per-pair rescans of the whole study.
use super::alpha::AlphaAcc;
use super::fleiss::FleissAcc;
use super::{mean_kappa, split, AgreementError, PairAgreement};
use serde::Serialize;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairReport {
    /// Smaller annotator id.
    pub a: u64,
    pub b: u64,
    /// Confusion rows are `a`'s answers, columns `b`'s.
    pub agreement: PairAgreement,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyAgreement {
    /// Categories used: the given `k`, widened if a label was `>= k`.
    pub k: usize,
    /// Ratings after removing repeated (item, annotator) answers.
    pub ratings: usize,
    /// Earlier answers superseded by a later one for the same (item, annotator).
    pub duplicates_replaced: usize,
    pub items: usize,
    pub annotators: usize,
    /// Every annotator pair sharing at least one item, ordered by (a, b).
    pub pairs: Vec<PairReport>,
    pub mean_kappa: Option<f64>,
    pub mean_kappa_reason: Option<String>,
    pub fleiss_kappa: Option<f64>,
    pub fleiss_reason: Option<String>,
    /// Fleiss' m: the modal number of raters among items with >= 2 raters.
    pub fleiss_raters_per_item: Option<u64>,
    /// Fleiss' N: items with exactly that many raters.
    pub fleiss_items: usize,
    pub krippendorff_alpha: Option<f64>,
    pub alpha_reason: Option<String>,
    /// Items with >= 2 raters, i.e. the units alpha could use.
    pub alpha_units: usize,
}

/// SplitMix64 finaliser as a hasher for dense pair keys `(ia << 32) | ib`:
/// SipHash would dominate the inner loop, and a bare multiply leaves the low
/// (bucket) bits depending on `ib` alone.
#[derive(Default)]
struct PairKeyHasher(u64);

impl Hasher for PairKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.0 = z ^ (z >> 31);
    }
}

/// Agreement for a whole study. `k` is a minimum: a label `>= k` widens the
/// category set instead of being dropped (empty categories change no
/// coefficient, only the confusion-table size). If an annotator rated an
/// item more than once, the last rating in input order counts, as an upsert
/// would. Fleiss' kappa is restricted to the items with the modal rater count
/// (ties go to the larger count), because it needs a constant m.
pub fn study_agreement(ratings: &[(u64, u64, usize)], k: usize) -> StudyAgreement {
    let k = ratings.iter().map(|r| r.2 + 1).max().unwrap_or(0).max(k);

    let Grouped { rows, bounds, annotator_ids, duplicates_replaced } = group(ratings);
    let dense = |id: u64| annotator_ids.binary_search(&id).expect("id collected above") as u64;
    let (modal_m, m_hist) = modal_raters(&bounds);

    let kk = k * k;
    let mut slots: HashMap<u64, usize, BuildHasherDefault<PairKeyHasher>> = HashMap::default();
    let mut pair_ids: Vec<(u64, u64)> = Vec::new();
    let mut confusion: Vec<u64> = Vec::new();
    let mut fleiss = FleissAcc::new(k);
    let mut alpha = AlphaAcc::new(k);
    let mut counts = vec![0u64; k];
    let mut raters: Vec<(u64, usize)> = Vec::new();

    for &(s, e) in &bounds {
        raters.clear();
        raters.extend(rows[s..e].iter().map(|r| (dense(r.1), r.2)));
        alpha.add(raters.iter().map(|r| r.1)).expect("k covers every label");
        if Some(raters.len()) == modal_m {
            for &(_, c) in &raters {
                counts[c] += 1;
            }
            fleiss.add(&counts);
            counts.iter_mut().for_each(|c| *c = 0);
        }
        for (x, &(ia, ca)) in raters.iter().enumerate() {
            for &(ib, cb) in &raters[x + 1..] {
                let slot = *slots.entry((ia << 32) | ib).or_insert_with(|| {
                    pair_ids.push((ia, ib));
                    confusion.resize(confusion.len() + kk, 0);
                    pair_ids.len() - 1
                });
                confusion[slot * kk + ca * k + cb] += 1;
            }
        }
    }

    let mut order: Vec<usize> = (0..pair_ids.len()).collect();
    order.sort_unstable_by_key(|&i| pair_ids[i]);
    let pairs: Vec<PairReport> = order
        .into_iter()
        .map(|i| {
            let flat = &confusion[i * kk..(i + 1) * kk];
            let table = flat.chunks(k.max(1)).take(k).map(<[u64]>::to_vec).collect();
            PairReport {
                a: annotator_ids[pair_ids[i].0 as usize],
                b: annotator_ids[pair_ids[i].1 as usize],
                agreement: PairAgreement::from_confusion(table).expect("square by construction"),
            }
        })
        .collect();

    let (mean, mean_kappa_reason) = split(mean_kappa(pairs.iter().map(|p| &p.agreement)));
    let alpha_units = alpha.units();
    let (fleiss_result, fleiss_reason) = match modal_m {
        None => (None, Some(AgreementError::NoMultiplyRatedItems.to_string())),
        Some(m) => {
            let (kappa, why) = split(fleiss.finish());
            // The reason is about the subset Fleiss reads; say so when it is not every item.
            let (used, other) = (m_hist[&m], alpha_units.saturating_sub(m_hist[&m]));
            let why = why.map(|w| match other {
                0 => w,
                _ => format!(
                    "on the {used} items with {m} raters, the commonest number (Fleiss' kappa reads only those; \
                     {other} with another number are left out), {w}"
                ),
            });
            (kappa, why)
        }
    };
    let (alpha_result, alpha_reason) = split(alpha.finish());

    StudyAgreement {
        k,
        ratings: rows.len(),
        duplicates_replaced,
        items: bounds.len(),
        annotators: annotator_ids.len(),
        pairs,
        mean_kappa: mean,
        mean_kappa_reason,
        fleiss_kappa: fleiss_result.as_ref().map(|f| f.kappa),
        fleiss_reason,
        fleiss_raters_per_item: modal_m.map(|m| m as u64),
        fleiss_items: modal_m.map_or(0, |m| m_hist[&m]),
        krippendorff_alpha: alpha_result.map(|a| a.alpha),
        alpha_reason,
        alpha_units,
    }
}

/// Ratings grouped by item, then annotator, with repeated (item, annotator)
/// answers reduced to the last one in input order (as an upsert would).
pub(super) struct Grouped {
    pub rows: Vec<(u64, u64, usize)>,
    /// Each item's `rows[start..end]`.
    pub bounds: Vec<(usize, usize)>,
    /// Annotator ids, ascending: the dense index is the position.
    pub annotator_ids: Vec<u64>,
    pub duplicates_replaced: usize,
}

pub(super) fn group(ratings: &[(u64, u64, usize)]) -> Grouped {
    // The sort is stable, so among repeated answers the last in input order stays last.
    let mut sorted = ratings.to_vec();
    sorted.sort_by_key(|&(item, ann, _)| (item, ann));
    let mut rows: Vec<(u64, u64, usize)> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match rows.last_mut() {
            Some(last) if (last.0, last.1) == (r.0, r.1) => *last = r,
            _ => rows.push(r),
        }
    }
    let duplicates_replaced = ratings.len() - rows.len();
    let mut annotator_ids: Vec<u64> = rows.iter().map(|r| r.1).collect();
    annotator_ids.sort_unstable();
    annotator_ids.dedup();
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || rows[i].0 != rows[start].0 {
            bounds.push((start, i));
            start = i;
        }
    }
    Grouped { rows, bounds, annotator_ids, duplicates_replaced }
}

/// Fleiss' m: the most common rater count among items with >= 2 raters
/// (ties go to the larger count), with the histogram of those counts.
pub(super) fn modal_raters(bounds: &[(usize, usize)]) -> (Option<usize>, HashMap<usize, usize>) {
    let mut m_hist: HashMap<usize, usize> = HashMap::new();
    for &(s, e) in bounds {
        if e - s >= 2 {
            *m_hist.entry(e - s).or_default() += 1;
        }
    }
    let modal_m = m_hist.iter().max_by_key(|&(&m, &count)| (count, m)).map(|(&m, _)| m);
    (modal_m, m_hist)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three annotators (10, 20, 30), four items, worked by hand:
    /// (10,20) share items 1,2 and agree → κ=1; (10,30) share item 1 and
    /// disagree with p_e=0 → κ=0; (20,30) share items 1,3 → κ=0.
    /// Modal m is 2 (items 2,3) → Fleiss perfect. Alpha: o=[[3,1],[1,2]],
    /// n=7 → D_o=2/7, D_e=24/42 → α=0.5.
    #[rustfmt::skip]
    const HAND: [(u64, u64, usize); 8] = [
        (1, 10, 0), (1, 20, 0), (1, 30, 1),
        (2, 10, 1), (2, 20, 1),
        (3, 20, 0), (3, 30, 0),
        (4, 10, 0),
    ];

    #[test]
    fn hand_worked_study() {
        let s = study_agreement(&HAND, 2);
        assert_eq!((s.k, s.ratings, s.items, s.annotators, s.duplicates_replaced), (2, 8, 4, 3, 0));
        let ids: Vec<(u64, u64)> = s.pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(ids, [(10, 20), (10, 30), (20, 30)]);
        let kappas: Vec<Option<f64>> = s.pairs.iter().map(|p| p.agreement.kappa).collect();
        assert_eq!(kappas, [Some(1.0), Some(0.0), Some(0.0)]);
        assert_eq!(s.pairs[1].agreement.confusion, vec![vec![0, 1], vec![0, 0]]);
        assert_eq!(s.pairs[2].agreement.n, 2);
        assert!((s.mean_kappa.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((s.fleiss_raters_per_item, s.fleiss_items), (Some(2), 2));
        assert_eq!(s.fleiss_kappa, Some(1.0));
        assert_eq!(s.alpha_units, 3);
        assert!((s.krippendorff_alpha.unwrap() - 0.5).abs() < 1e-12);
        assert!(s.mean_kappa_reason.is_none() && s.fleiss_reason.is_none() && s.alpha_reason.is_none());
    }

    #[test]
    fn later_duplicate_wins() {
        let mut r = vec![(2, 10, 0)];
        r.extend(HAND);
        let s = study_agreement(&r, 2);
        assert_eq!((s.duplicates_replaced, s.ratings), (1, 8));
        assert_eq!(s, StudyAgreement { duplicates_replaced: 1, ..study_agreement(&HAND, 2) });
        // The other way round, the stale answer 0 now counts: (10,20) disagree on item 2.
        r.rotate_left(1);
        let t = study_agreement(&r, 2);
        assert_eq!(t.pairs[0].agreement.confusion, vec![vec![1, 1], vec![0, 0]]);
    }

    #[test]
    fn out_of_range_labels_widen_k() {
        let shifted: Vec<_> = HAND.iter().map(|&(i, a, c)| (i, a, c + 2)).collect();
        let s = study_agreement(&shifted, 2);
        let base = study_agreement(&HAND, 2);
        assert_eq!(s.k, 4);
        assert_eq!(s.pairs[1].agreement.confusion[2][3], 1);
        assert_eq!(s.mean_kappa, base.mean_kappa);
        assert_eq!(s.fleiss_kappa, base.fleiss_kappa);
        assert!((s.krippendorff_alpha.unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn empty_and_no_overlap() {
        for ratings in [vec![], vec![(1, 1, 0), (2, 2, 1), (3, 1, 1)]] {
            let s = study_agreement(&ratings, 2);
            assert!(s.pairs.is_empty());
            assert_eq!(s.mean_kappa, None);
            assert_eq!(s.mean_kappa_reason.as_deref(), Some("no annotator pair shares an item"));
            assert_eq!(s.fleiss_kappa, None);
            assert_eq!(s.fleiss_reason.as_deref(), Some("no item was rated by at least 2 annotators"));
            assert_eq!((s.fleiss_raters_per_item, s.fleiss_items), (None, 0));
            assert_eq!(s.krippendorff_alpha, None);
            assert!(s.alpha_reason.unwrap().contains("fewer than 2 pairable values"));
        }
    }

    #[test]
    fn everyone_always_in_one_category() {
        let r: Vec<_> = (0..5).flat_map(|i| (0..3).map(move |a| (i, a, 1))).collect();
        let s = study_agreement(&r, 3);
        assert_eq!(s.pairs.len(), 3);
        assert!(s.pairs.iter().all(|p| p.agreement.kappa.is_none() && p.agreement.observed == 1.0));
        assert!(s.mean_kappa_reason.unwrap().contains("undefined for every annotator pair (3 pairs)"));
        assert!(s.fleiss_reason.unwrap().contains("P_e is 1"));
        assert!(s.alpha_reason.unwrap().contains("D_e is 0"));
        assert_eq!((s.fleiss_raters_per_item, s.fleiss_items), (Some(3), 5));
    }

    #[test]
    fn modal_rater_count_ties_go_to_larger_m() {
        let r = [(1, 1, 0), (1, 2, 1), (2, 1, 0), (2, 2, 0), (2, 3, 1), (3, 9, 1)];
        let s = study_agreement(&r, 2);
        assert_eq!((s.fleiss_raters_per_item, s.fleiss_items), (Some(3), 1));
        // One item with counts [2, 1]: P̄ = 1/3, P_e = 5/9 → κ = −0.5.
        assert!((s.fleiss_kappa.unwrap() + 0.5).abs() < 1e-12);
        assert_eq!(s.alpha_units, 2);
    }

    #[test]
    fn extreme_annotator_ids_are_ordered() {
        let r = [(7, u64::MAX, 0), (7, 0, 1), (8, u64::MAX, 1), (8, 0, 0)];
        let s = study_agreement(&r, 2);
        assert_eq!((s.pairs[0].a, s.pairs[0].b), (0, u64::MAX));
        assert_eq!(s.pairs[0].agreement.confusion, vec![vec![0, 1], vec![1, 0]]);
        assert!((s.pairs[0].agreement.kappa.unwrap() + 1.0).abs() < 1e-12);
    }

    #[test]
    fn reports_are_serializable() {
        fn is_serialize<T: Serialize>(_: &T) {}
        let s = study_agreement(&HAND, 2);
        is_serialize(&s);
        is_serialize(&s.pairs[0]);
    }
}
