//! Bootstrap intervals checked against scikit-learn (Cohen), statsmodels
//! (Fleiss) and krippendorff (alpha) on the committed resamples of
//! tests/fixtures/aggregation/bootstrap.json (scripts/reference/aggregation_fixture.py).
use super::*;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../tests/fixtures/aggregation/bootstrap.json");

fn fixture() -> (Value, Vec<(u64, u64, usize)>, usize) {
    let json: Value = serde_json::from_str(FIXTURE).unwrap();
    let ratings = crate::domain::aggregate::reference_tests::triples(&json["ratings"]);
    let k = json["k"].as_u64().unwrap() as usize;
    (json, ratings, k)
}

fn close(ours: Option<f64>, theirs: &Value, what: &str) {
    match (ours, theirs.as_f64()) {
        (None, None) => {}
        (Some(o), Some(t)) => assert!((o - t).abs() < 1e-9, "{what}: {o} vs {t}"),
        _ => panic!("{what}: {ours:?} vs {theirs}"),
    }
}

fn coefficients_match(c: &Coefficients, want: &Value, what: &str) {
    for (p, k) in c.pair_kappas.iter().enumerate() {
        close(*k, &want["pairs"][p], &format!("{what} pair {p}"));
    }
    close(c.mean_kappa, &want["mean"], &format!("{what} mean kappa"));
    close(c.fleiss_kappa, &want["fleiss"], &format!("{what} Fleiss"));
    close(c.krippendorff_alpha, &want["alpha"], &format!("{what} alpha"));
}

fn resamples(json: &Value) -> Vec<Vec<usize>> {
    json["resamples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as usize).collect())
        .collect()
}

#[test]
fn every_resample_matches_the_reference_formulas() {
    let (json, ratings, k) = fixture();
    let b = Bootstrap::new(&ratings, k);
    assert_eq!(b.items(), 40);
    let all: Vec<usize> = (0..b.items()).collect();
    let original = b.on_indices(&all);
    coefficients_match(&original, &json["original"], "original");
    // The unresampled figures are study_agreement's.
    let s = study_agreement(&ratings, k);
    assert_eq!(original.pair_kappas, s.pairs.iter().map(|p| p.agreement.kappa).collect::<Vec<_>>());
    assert_eq!((original.mean_kappa, original.fleiss_kappa), (s.mean_kappa, s.fleiss_kappa));
    let pairs: Vec<(u64, u64)> = s.pairs.iter().map(|p| (p.a, p.b)).collect();
    let want: Vec<(u64, u64)> =
        json["pairs"].as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap())).collect();
    assert_eq!(pairs, want);
    for (x, (r, c)) in resamples(&json).iter().zip(json["coefficients"].as_array().unwrap()).enumerate() {
        coefficients_match(&b.on_indices(r), c, &format!("resample {x}"));
    }
}

#[test]
fn percentile_intervals_match_numpy() {
    let (json, ratings, k) = fixture();
    let cis = Bootstrap::new(&ratings, k).intervals_over(&resamples(&json), 7);
    let want = &json["intervals"];
    let check = |i: &Option<Interval>, w: &Value, what: &str| {
        let i = i.as_ref().unwrap_or_else(|| panic!("{what}: no interval"));
        assert!((i.low - w[0].as_f64().unwrap()).abs() < 1e-9, "{what} low: {} vs {}", i.low, w[0]);
        assert!((i.high - w[1].as_f64().unwrap()).abs() < 1e-9, "{what} high: {} vs {}", i.high, w[1]);
        assert_eq!(i.defined as u64, w[2].as_u64().unwrap(), "{what}");
    };
    assert_eq!((cis.resamples, cis.seed, cis.level), (60, 7, 0.95));
    for (p, w) in cis.pairs.iter().zip(want["pairs"].as_array().unwrap()) {
        check(&p.kappa, w, &format!("pair {}-{}", p.a, p.b));
    }
    check(&cis.mean_kappa, &want["mean"], "mean kappa");
    check(&cis.fleiss_kappa, &want["fleiss"], "Fleiss");
    check(&cis.krippendorff_alpha, &want["alpha"], "alpha");
}

#[test]
fn seeded_intervals_bracket_the_estimate_and_repeat() {
    let (_, ratings, k) = fixture();
    let a = bootstrap_agreement(&ratings, k, 300, 11);
    assert_eq!(a, bootstrap_agreement(&ratings, k, 300, 11));
    assert_ne!(a, bootstrap_agreement(&ratings, k, 300, 12));
    let s = study_agreement(&ratings, k);
    let alpha = a.krippendorff_alpha.as_ref().unwrap();
    assert!(alpha.low < s.krippendorff_alpha.unwrap() && s.krippendorff_alpha.unwrap() < alpha.high);
    assert_eq!(alpha.defined, 300);
    let mean = a.mean_kappa.as_ref().unwrap();
    assert!(mean.low < s.mean_kappa.unwrap() && s.mean_kappa.unwrap() < mean.high && mean.high - mean.low < 0.6);
}

#[test]
fn degenerate_inputs() {
    let none = bootstrap_agreement(&[], 2, 100, 1);
    assert!(none.pairs.is_empty() && none.mean_kappa.is_none() && none.fleiss_kappa.is_none());
    assert_eq!(none.resamples, 100);
    // One pair always in one category: kappa undefined on every resample.
    let flat = bootstrap_agreement(&[(1, 1, 0), (1, 2, 0), (2, 1, 0), (2, 2, 0)], 2, 50, 1);
    assert_eq!(flat.pairs.len(), 1);
    assert_eq!(flat.pairs[0].kappa, None);
    assert_eq!(flat.krippendorff_alpha, None);
    assert_eq!(Interval::from_values([None, Some(2.0), Some(1.0), None]).unwrap().defined, 2);
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.025), 1.1);
    assert_eq!(percentile(&[7.0], 0.975), 7.0);
}
