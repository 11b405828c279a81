//! Cross-checks against deliberately naive, independent reimplementations on
//! seeded pseudo-random tables, plus the large-n relations between the
//! coefficients and a 1M-rating run.
use super::*;
use std::collections::BTreeMap;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    /// Skewed label: low categories more likely, so marginals differ from uniform.
    fn label(&mut self, k: usize) -> usize {
        self.below(k).min(self.below(k))
    }
}

/// p_o and p_e straight from the definitions, by counting.
fn naive_cohen(pairs: &[(usize, usize)], k: usize) -> Option<f64> {
    let n = pairs.len() as f64;
    let po = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let pe: f64 = (0..k)
        .map(|c| {
            let a = pairs.iter().filter(|p| p.0 == c).count() as f64;
            let b = pairs.iter().filter(|p| p.1 == c).count() as f64;
            a / n * b / n
        })
        .sum();
    (!pairs.is_empty() && (1.0 - pe).abs() > 1e-12).then(|| (po - pe) / (1.0 - pe))
}

/// Fleiss (1971) exactly as written: P_i per item, P̄, p_j, P_e.
fn naive_fleiss(counts: &[Vec<u64>]) -> Option<f64> {
    let n_items = counts.len() as f64;
    let m = counts[0].iter().sum::<u64>() as f64;
    let p_bar = counts
        .iter()
        .map(|row| row.iter().map(|&c| (c * c) as f64).sum::<f64>() - m)
        .map(|s| s / (m * (m - 1.0)))
        .sum::<f64>()
        / n_items;
    let p_e: f64 = (0..counts[0].len())
        .map(|j| counts.iter().map(|r| r[j] as f64).sum::<f64>() / (n_items * m))
        .map(|p| p * p)
        .sum();
    ((1.0 - p_e).abs() > 1e-12).then(|| (p_bar - p_e) / (1.0 - p_e))
}

/// Alpha by counting disagreeing pairs: within units (weighted 1/(m_u−1))
/// for D_o, and across all pairable values for D_e. O(n²), no coincidence matrix.
fn naive_alpha(units: &[Vec<usize>]) -> Option<f64> {
    let pairable: Vec<&Vec<usize>> = units.iter().filter(|u| u.len() >= 2).collect();
    let all: Vec<usize> = pairable.iter().flat_map(|u| u.iter().copied()).collect();
    let n = all.len() as f64;
    let mut d_o = 0.0;
    for u in &pairable {
        let mut dis = 0.0;
        for (i, a) in u.iter().enumerate() {
            for (j, b) in u.iter().enumerate() {
                if i != j && a != b {
                    dis += 1.0;
                }
            }
        }
        d_o += dis / (u.len() as f64 - 1.0);
    }
    d_o /= n;
    let mut d_e = 0.0;
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate() {
            if i != j && a != b {
                d_e += 1.0;
            }
        }
    }
    d_e /= n * (n - 1.0);
    (all.len() >= 2 && d_e > 0.0).then(|| 1.0 - d_o / d_e)
}

/// Asserts equal definedness and value; returns whether it was defined, so
/// the random tests can check they exercised both branches.
fn same(a: Option<f64>, b: Option<f64>, what: &str) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => assert!((x - y).abs() < 1e-9, "{what}: {x} vs {y}"),
        (None, None) => {}
        _ => panic!("{what}: {a:?} vs {b:?}"),
    }
    a.is_some()
}

#[test]
fn cohen_matches_naive_on_random_tables() {
    let mut rng = XorShift(0x5EED_0001);
    let mut defined = 0;
    for round in 0..500 {
        let k = 1 + rng.below(5);
        let n = rng.below(60);
        let p_agree = rng.below(11) as f64 / 10.0;
        let pairs: Vec<(usize, usize)> = (0..n)
            .map(|_| {
                let a = rng.label(k);
                (a, if rng.chance(p_agree) { a } else { rng.label(k) })
            })
            .collect();
        let got = cohen_kappa(&pairs, k).unwrap();
        defined += same(got.kappa, naive_cohen(&pairs, k), &format!("round {round}")) as usize;
        assert_eq!(got.kappa.is_none(), got.kappa_undefined_reason.is_some());
    }
    assert!((300..490).contains(&defined), "{defined}");
}

#[test]
fn fleiss_matches_naive_on_random_tables() {
    let mut rng = XorShift(0x5EED_0002);
    let mut defined = 0;
    for round in 0..500 {
        let (k, m, n) = (1 + rng.below(5), 2 + rng.below(6), 1 + rng.below(30));
        let counts: Vec<Vec<u64>> = (0..n)
            .map(|_| {
                let truth = rng.label(k);
                let mut row = vec![0u64; k];
                for _ in 0..m {
                    row[if rng.chance(0.6) { truth } else { rng.label(k) }] += 1;
                }
                row
            })
            .collect();
        let got = fleiss_kappa(&counts).ok().map(|f| f.kappa);
        defined += same(got, naive_fleiss(&counts), &format!("round {round}")) as usize;
    }
    assert!((300..490).contains(&defined), "{defined}");
}

#[test]
fn alpha_matches_naive_on_random_tables() {
    let mut rng = XorShift(0x5EED_0003);
    let mut defined = 0;
    for round in 0..500 {
        let (k, coders, n) = (1 + rng.below(5), 1 + rng.below(6), rng.below(30));
        let p_missing = rng.below(6) as f64 / 10.0;
        let matrix: Vec<Vec<Option<usize>>> = (0..n)
            .map(|_| {
                let truth = rng.label(k);
                (0..coders)
                    .map(|_| (!rng.chance(p_missing)).then(|| if rng.chance(0.6) { truth } else { rng.label(k) }))
                    .collect()
            })
            .collect();
        let units: Vec<Vec<usize>> = matrix.iter().map(|r| r.iter().flatten().copied().collect()).collect();
        let got = krippendorff_alpha_matrix(&matrix, k).ok().map(|a| a.alpha);
        defined += same(got, naive_alpha(&units), &format!("round {round}")) as usize;
    }
    assert!((250..490).contains(&defined), "{defined}");
}

/// Random ragged study, checked against the naive way: for every annotator
/// pair, rescan every item.
#[test]
fn study_matches_naive_on_random_studies() {
    let mut rng = XorShift(0x5EED_0004);
    let mut defined = [0usize; 3]; // pair kappas, alpha, Fleiss
    for round in 0..200 {
        let (k, n_items, n_ann) = (2 + rng.below(3), 1 + rng.below(25), 1 + rng.below(6));
        let p_rate = 0.2 + rng.below(8) as f64 / 10.0;
        let mut items: BTreeMap<u64, BTreeMap<u64, usize>> = BTreeMap::new();
        let mut ratings = Vec::new();
        for item in 0..n_items as u64 {
            let truth = rng.label(k);
            for ann in 0..n_ann as u64 {
                if rng.chance(p_rate) {
                    let c = if rng.chance(0.7) { truth } else { rng.label(k) };
                    let (item, ann) = (item * 7919 % 1000, ann * 31 + 5);
                    items.entry(item).or_default().insert(ann, c);
                    ratings.push((item, ann, c));
                }
            }
        }
        // Shuffle: the result must not depend on input order.
        for i in (1..ratings.len()).rev() {
            ratings.swap(i, rng.below(i + 1));
        }
        let s = study_agreement(&ratings, k);
        let what = format!("round {round}");

        let anns: Vec<u64> = (0..n_ann as u64).map(|a| a * 31 + 5).collect();
        let mut expected_pairs = Vec::new();
        for (x, &a) in anns.iter().enumerate() {
            for &b in &anns[x + 1..] {
                let shared: Vec<(usize, usize)> =
                    items.values().filter_map(|r| Some((*r.get(&a)?, *r.get(&b)?))).collect();
                if !shared.is_empty() {
                    expected_pairs.push((a, b, naive_cohen(&shared, k)));
                }
            }
        }
        assert_eq!(s.pairs.len(), expected_pairs.len(), "{what}");
        for (p, (a, b, kappa)) in s.pairs.iter().zip(&expected_pairs) {
            assert_eq!((p.a, p.b), (*a, *b), "{what}");
            defined[0] += same(p.agreement.kappa, *kappa, &what) as usize;
        }
        let kappas: Vec<f64> = expected_pairs.iter().filter_map(|p| p.2).collect();
        let mean = (!kappas.is_empty()).then(|| kappas.iter().sum::<f64>() / kappas.len() as f64);
        same(s.mean_kappa, mean, &what);

        let units: Vec<Vec<usize>> = items.values().map(|r| r.values().copied().collect()).collect();
        defined[1] += same(s.krippendorff_alpha, naive_alpha(&units), &what) as usize;

        let mut hist: BTreeMap<usize, usize> = BTreeMap::new();
        for u in units.iter().filter(|u| u.len() >= 2) {
            *hist.entry(u.len()).or_default() += 1;
        }
        let modal = hist.iter().max_by_key(|(&m, &c)| (c, m)).map(|(&m, _)| m);
        assert_eq!(s.fleiss_raters_per_item, modal.map(|m| m as u64), "{what}");
        let fleiss = modal.and_then(|m| {
            let counts: Vec<Vec<u64>> = units
                .iter()
                .filter(|u| u.len() == m)
                .map(|u| (0..k).map(|c| u.iter().filter(|&&v| v == c).count() as u64).collect())
                .collect();
            naive_fleiss(&counts)
        });
        defined[2] += same(s.fleiss_kappa, fleiss, &what) as usize;
    }
    assert!(defined[0] > 500 && defined[1] > 100 && defined[2] > 100, "{defined:?}");
}

/// With two raters and no missing data, Fleiss' kappa is Scott's pi and
/// alpha = 1 − (2n−1)/(2n)·(1 − pi) exactly (Krippendorff's small-sample
/// correction); all three approach Cohen's kappa when both raters share one
/// marginal distribution and n is large.
#[test]
fn two_raters_relations_and_large_n_convergence() {
    let mut rng = XorShift(0x5EED_0005);
    for &n in &[5usize, 50, 500, 200_000] {
        let pairs: Vec<(usize, usize)> = (0..n)
            .map(|_| {
                let truth = rng.label(4);
                let mut rate = || if rng.chance(0.7) { truth } else { rng.label(4) };
                (rate(), rate())
            })
            .collect();
        let cohen = cohen_kappa(&pairs, 4).unwrap().kappa.unwrap();
        let counts: Vec<[u64; 4]> = pairs
            .iter()
            .map(|&(a, b)| {
                let mut row = [0u64; 4];
                row[a] += 1;
                row[b] += 1;
                row
            })
            .collect();
        let fleiss = fleiss_kappa(&counts).unwrap().kappa;
        let units: Vec<[usize; 2]> = pairs.iter().map(|&(a, b)| [a, b]).collect();
        let alpha = krippendorff_alpha(&units, 4).unwrap().alpha;
        let nn = 2.0 * n as f64;
        assert!((alpha - (1.0 - (nn - 1.0) / nn * (1.0 - fleiss))).abs() < 1e-12, "n={n}");
        assert!(fleiss <= cohen + 1e-12, "pi never exceeds kappa (n={n})");
        if n == 200_000 {
            assert!((cohen - fleiss).abs() < 2e-3, "{cohen} vs {fleiss}");
            assert!((cohen - alpha).abs() < 2e-3, "{cohen} vs {alpha}");
        }
    }
}

/// 250,000 items × 4 annotators = 1M ratings, k = 2. Annotators 0–2 give
/// `item % 2`, annotator 3 always the opposite: three pairs at κ = 1, three at
/// κ = −1 (mean 0); every item has counts {3, 1} so P̄ = P_e = 1/2 and Fleiss
/// is 0; alpha = 1 − (n−1)/n with n = 1M pairable values.
#[test]
fn one_million_ratings() {
    let items = 250_000u64;
    let mut ratings = Vec::with_capacity(4 * items as usize);
    for ann in [3u64, 1, 0, 2] {
        for item in 0..items {
            let c = (item % 2) as usize;
            ratings.push((item, ann, if ann == 3 { 1 - c } else { c }));
        }
    }
    let t = std::time::Instant::now();
    let s = study_agreement(&ratings, 2);
    eprintln!("study_agreement on 1M ratings: {:?}", t.elapsed());
    assert_eq!((s.ratings, s.items, s.annotators), (1_000_000, 250_000, 4));
    let kappas: Vec<(u64, u64, f64)> = s.pairs.iter().map(|p| (p.a, p.b, p.agreement.kappa.unwrap())).collect();
    assert_eq!(kappas, [(0, 1, 1.0), (0, 2, 1.0), (0, 3, -1.0), (1, 2, 1.0), (1, 3, -1.0), (2, 3, -1.0)]);
    assert!(s.pairs.iter().all(|p| p.agreement.n == 250_000));
    assert_eq!(s.mean_kappa, Some(0.0));
    assert_eq!((s.fleiss_raters_per_item, s.fleiss_items), (Some(4), 250_000));
    assert!(s.fleiss_kappa.unwrap().abs() < 1e-12);
    assert!((s.krippendorff_alpha.unwrap() - 1e-6).abs() < 1e-12);
}

/// The audit's study: two raters answer 40 items, all in category 4 except
/// the 10 a third rater also answered, where they vary. Fleiss reads only
/// the 30 two-rater items (one category): its reason says so, not that every
/// rating is in one category.
#[test]
fn fleiss_reason_names_the_subset_it_read() {
    let mut ratings = Vec::new();
    for item in 0..40u64 {
        let varied = item < 10;
        let c = |shift: u64| if varied { ((item + shift) % 4) as usize } else { 4 };
        ratings.extend([(item, 1, c(0)), (item, 2, c(1))]);
        if varied {
            ratings.push((item, 3, c(2)));
        }
    }
    let s = study_agreement(&ratings, 5);
    assert_eq!((s.fleiss_kappa, s.fleiss_raters_per_item, s.fleiss_items), (None, Some(2), 30));
    let why = s.fleiss_reason.unwrap();
    assert!(why.starts_with("on the 30 items with 2 raters, the commonest number"), "{why}");
    assert!(why.contains("10 with another number are left out), every rating is in one"), "{why}");
    assert!(s.krippendorff_alpha.is_some(), "alpha reads every item");
    // Where Fleiss reads every item, the reason is the plain one.
    let one: Vec<_> = (0..5u64).flat_map(|i| [(i, 1, 0), (i, 2, 0)]).collect();
    assert!(study_agreement(&one, 2).fleiss_reason.unwrap().starts_with("every rating is in one"));
}
