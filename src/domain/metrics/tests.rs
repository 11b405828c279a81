//! Unit tests of the Winoground metrics.
use super::*;

fn cat(t: &str, s: &str) -> Category {
    Category::parse(t, s).unwrap()
}

fn flags(o: Outcome) -> [bool; 7] {
    [o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i, o.i2t(), o.t2i(), o.group()]
}

#[test]
fn flags_on_hand_set_similarities() {
    // [ipos2t, ineg2t, tpos2i, tneg2i, i2t, t2i, group]
    let cases = [
        ((0.9, 0.1, 0.2, 0.8), [true, true, true, true, true, true, true]),
        ((0.1, 0.9, 0.8, 0.2), [false; 7]),
        // Text right, image wrong: C0 wins on I0 and C1 on I1, but I1 beats I0 for C0.
        ((0.5, 0.1, 0.6, 0.7), [true, true, false, true, true, false, false]),
        // Image right, text wrong: C1 beats C0 on I0.
        ((0.5, 0.6, 0.1, 0.7), [false, true, true, true, false, true, false]),
        // All equal: every comparison ties, every flag fails.
        ((0.3, 0.3, 0.3, 0.3), [false; 7]),
        // One tie s(C0,I0) = s(C1,I0) fails only Ipos2T.
        ((0.5, 0.5, 0.1, 0.9), [false, true, true, true, false, true, false]),
        // One tie s(C1,I1) = s(C0,I1) fails only Ineg2T.
        ((0.9, 0.1, 0.4, 0.4), [true, false, true, true, false, true, false]),
        // Negative similarities (e.g. raw logits) behave the same.
        ((-0.1, -0.9, -0.8, -0.2), [true, true, true, true, true, true, true]),
        ((f64::INFINITY, 0.0, 0.0, 1.0), [true, true, true, true, true, true, true]),
    ];
    for ((a, b, c, d), want) in cases {
        assert_eq!(flags(Outcome::from_scores(Similarities::new(a, b, c, d))), want, "{a} {b} {c} {d}");
    }
}

#[test]
fn nan_fails_exactly_the_comparisons_it_takes_part_in() {
    let n = f64::NAN;
    // s(C0,I0) feeds Ipos2T and Tpos2I.
    assert_eq!(
        flags(Outcome::from_scores(Similarities::new(n, 0.1, 0.2, 0.8))),
        [false, true, false, true, false, false, false]
    );
    // s(C1,I0) feeds Ipos2T and Tneg2I.
    assert_eq!(
        flags(Outcome::from_scores(Similarities::new(0.9, n, 0.2, 0.8))),
        [false, true, true, false, false, false, false]
    );
    // s(C0,I1) feeds Ineg2T and Tpos2I.
    assert_eq!(
        flags(Outcome::from_scores(Similarities::new(0.9, 0.1, n, 0.8))),
        [true, false, false, true, false, false, false]
    );
    // s(C1,I1) feeds Ineg2T and Tneg2I.
    assert_eq!(
        flags(Outcome::from_scores(Similarities::new(0.9, 0.1, 0.2, n))),
        [true, false, true, false, false, false, false]
    );
    assert_eq!(flags(Outcome::from_scores(Similarities::new(n, n, n, n))), [false; 7]);
}

#[test]
fn composites_match_definitions_on_every_quadruple_of_a_grid() {
    let vals = [-1.0, 0.0, 0.5, 1.0, f64::NAN];
    for i in 0..vals.len().pow(4) {
        let [a, b, c, d] = [0, 1, 2, 3].map(|p| vals[i / vals.len().pow(p) % vals.len()]);
        let o = Outcome::from_scores(Similarities::new(a, b, c, d));
        assert_eq!(o.i2t(), a > b && d > c);
        assert_eq!(o.t2i(), a > c && d > b);
        assert_eq!(o.group(), o.i2t() && o.t2i());
    }
}

#[test]
fn from_flags_keeps_argument_order() {
    let o = Outcome::from_flags(true, false, true, true);
    assert_eq!((o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i), (true, false, true, true));
    assert!(!o.i2t() && o.t2i() && !o.group());
    assert_eq!(
        Outcome::from_flags(true, true, true, true),
        Outcome::from_scores(Similarities::new(1.0, 0.0, 0.0, 1.0))
    );
}

#[test]
fn aggregates_overall_by_type_and_by_subtype() {
    let all = Outcome::from_flags(true, true, true, true);
    let text_only = Outcome::from_flags(true, true, false, true);
    let none = Outcome::default();
    let items = vec![
        (cat("replace", "obj"), all),
        (cat("replace", "obj"), text_only),
        (cat("replace", "rel"), none),
        (cat("swap", "att"), all),
    ];
    let r = aggregate(items);
    assert_eq!(r.overall.n, 4);
    assert_eq!(r.overall.i2t, 3.0 / 4.0 * 100.0);
    assert_eq!(r.overall.t2i, 2.0 / 4.0 * 100.0);
    assert_eq!(r.overall.group, 50.0);
    assert_eq!(r.overall.tneg2i, 75.0);
    assert_eq!(r.overall.tpos2i, 50.0);

    let replace = r.by_type[&NegType::Replace];
    assert_eq!(replace.n, 3);
    assert_eq!(replace.i2t, 2.0 / 3.0 * 100.0);
    assert_eq!(replace.group, 1.0 / 3.0 * 100.0);
    assert_eq!(r.by_type[&NegType::Swap].group, 100.0);
    assert!(!r.by_type.contains_key(&NegType::Add));

    let obj = r.by_subtype[&cat("replace", "obj")];
    assert_eq!((obj.n, obj.i2t, obj.t2i, obj.group), (2, 100.0, 50.0, 50.0));
    assert_eq!(r.by_subtype[&cat("replace", "rel")].i2t, 0.0);
    assert_eq!(r.by_subtype.len(), 3);
    let order: Vec<String> = r.by_subtype.keys().map(|c| c.to_string()).collect();
    assert_eq!(order, ["replace/obj", "replace/rel", "swap/att"]);
}

#[test]
fn empty_input_gives_zero_n_and_no_nan() {
    let r = aggregate(std::iter::empty());
    assert_eq!(r.overall, Scores::default());
    assert!(r.overall.is_empty());
    assert!(r.by_type.is_empty() && r.by_subtype.is_empty());
    assert_eq!(serde_json::to_value(&r).unwrap()["overall"]["group"], 0.0);
}

#[test]
fn serialises_with_string_keys_and_round_trips() {
    let r = aggregate([
        (cat("add", "att"), Outcome::from_flags(true, true, true, true)),
        (cat("replace", "obj"), Outcome::default()),
    ]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["by_type"]["add"]["n"], 1);
    assert_eq!(json["by_type"]["replace"]["group"], 0.0);
    assert_eq!(json["by_subtype"]["add/att"]["group"], 100.0);
    assert_eq!(json["overall"]["i2t"], 50.0);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
    let bad =
        serde_json::json!({"overall": Scores::default(), "by_type": {}, "by_subtype": {"swap/rel": Scores::default()}});
    assert!(serde_json::from_value::<Report>(bad).is_err());
}

#[test]
fn random_row() {
    let r = Scores::random();
    assert_eq!(r.group, 1.0 / 6.0 * 100.0);
    assert_eq!((r.i2t, r.t2i, r.ipos2t, r.tneg2i), (25.0, 25.0, 50.0, 50.0));
    assert_eq!(r.rounded().group, 16.67);
}

#[test]
fn round2_rounds_decimal_ties_away_from_zero() {
    assert_eq!(round2(75.825), 75.83); // stored as 75.8249999…
    assert_eq!(round2(1.005), 1.01); // stored as 1.00499999…
    assert_eq!(round2(2.675), 2.68); // Python's round() gives 2.67
    assert_eq!(round2(0.125), 0.13); // an exact binary tie
    assert_eq!(round2(-1.005), -1.01);
    assert_eq!(round2(-0.001), 0.0);
    assert!(round2(-0.001).is_sign_positive());
    assert_eq!(round2(75.8249), 75.82);
    assert_eq!(round2(75.82499), 75.82);
    assert_eq!(round2(100.0), 100.0);
    assert_eq!(round2(0.0), 0.0);
    assert!(round2(f64::NAN).is_nan());
    assert_eq!(round2(f64::INFINITY), f64::INFINITY);
    assert_eq!(round2(1e300), 1e300);
}

#[test]
fn round2_of_k_over_n_matches_exact_integer_rounding() {
    // round-half-up of k/n·100 at 2 decimals = floor((2·10⁴·k + n) / 2n) hundredths.
    let check = |k: u64, n: u64| {
        let exact = (2 * 10_000 * k + n) / (2 * n);
        let got = round2(k as f64 / n as f64 * 100.0);
        assert_eq!(got, exact as f64 / 100.0, "k={k} n={n}");
    };
    for n in 1..=1000 {
        (0..=n).for_each(|k| check(k, n));
    }
    (0..=2933).for_each(|k| check(k, 2933));
    (0..=1_000_000).step_by(9_973).chain([125, 125_125, 999_995, 5]).for_each(|k| check(k, 1_000_000));
}

#[test]
fn reproduces_bivlc_paper_precision() {
    // BiVLC (n = 2933) reports values like I2T 75.83, T2I 52.40, Group 49.06.
    let pct = |k: usize| Tally { n: 2933, i2t: k, ..Tally::default() }.scores().i2t;
    assert_eq!(round2(pct(2224)), 75.83);
    assert_eq!(round2(pct(1537)), 52.40);
    assert_eq!(round2(pct(1439)), 49.06);
}

#[test]
fn aggregates_a_million_outcomes() {
    let items = (0..1_000_000u32).map(|i| {
        let o = Outcome::from_flags(i % 2 == 0, i % 3 == 0, i % 5 != 0, true);
        (Category::ALL[i as usize % 7], o)
    });
    let r = aggregate(items);
    assert_eq!(r.overall.n, 1_000_000);
    assert_eq!(r.overall.i2t, 166_667.0 / 1e6 * 100.0); // i % 6 == 0
    assert_eq!(r.by_subtype.len(), 7);
    assert_eq!(r.by_subtype.values().map(|s| s.n).sum::<usize>(), 1_000_000);
}
