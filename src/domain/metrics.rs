//! Winoground-style scores (as used by BiVLC) for one instance made of a
//! positive caption/image pair (C0, I0) and a hard-negative pair (C1, I1),
//! and their aggregation into the paper's tables, split by SugarCrepe category.
//!
//! One pure code path scores model similarities, imported boolean results and
//! human answers, so models and annotators are compared on identical terms.
use super::category::{Category, NegType, Subtype};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A model's similarity for each of the four caption/image pairings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Similarities {
    pub c0_i0: f64,
    pub c1_i0: f64,
    pub c0_i1: f64,
    pub c1_i1: f64,
}

impl Similarities {
    /// Arguments in the order s(C0,I0), s(C1,I0), s(C0,I1), s(C1,I1).
    pub const fn new(c0_i0: f64, c1_i0: f64, c0_i1: f64, c1_i1: f64) -> Self {
        Similarities { c0_i0, c1_i0, c0_i1, c1_i1 }
    }
}

/// The four elementary successes of one instance; the composite scores are
/// derived, never stored, so they cannot disagree with their parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// Given I0, C0 beats C1.
    pub ipos2t: bool,
    /// Given I1, C1 beats C0.
    pub ineg2t: bool,
    /// Given C0, I0 beats I1.
    pub tpos2i: bool,
    /// Given C1, I1 beats I0.
    pub tneg2i: bool,
}

impl Outcome {
    /// Strict `>`: a tie is a failure (a constant model must not score), and
    /// every comparison involving NaN is false, so NaN is a failure too.
    pub fn from_scores(s: Similarities) -> Self {
        Outcome {
            ipos2t: s.c0_i0 > s.c1_i0,
            ineg2t: s.c1_i1 > s.c0_i1,
            tpos2i: s.c0_i0 > s.c0_i1,
            tneg2i: s.c1_i1 > s.c1_i0,
        }
    }

    /// For results that arrive as booleans.
    ///
    /// * BiVLC results CSVs: `text_score_i0`, `text_score_i1`,
    ///   `image_score_c0`, `image_score_c1`, in that order.
    /// * Human answers: (shown I0, picked C0?), (shown I1, picked C1?),
    ///   (shown C0, picked I0?), (shown C1, picked I1?), in that order.
    pub const fn from_flags(ipos2t: bool, ineg2t: bool, tpos2i: bool, tneg2i: bool) -> Self {
        Outcome { ipos2t, ineg2t, tpos2i, tneg2i }
    }

    /// Text score: the right caption is chosen for both images.
    pub const fn i2t(self) -> bool {
        self.ipos2t && self.ineg2t
    }

    /// Image score: the right image is chosen for both captions.
    pub const fn t2i(self) -> bool {
        self.tpos2i && self.tneg2i
    }

    /// Group score: all four choices are right.
    pub const fn group(self) -> bool {
        self.i2t() && self.t2i()
    }
}

/// Percentages (0–100) of instances that succeed, over `n` instances.
///
/// Values are the exact mean × 100 (`k as f64 / n as f64 * 100.0`); round
/// only for display, with [`round2`]. An empty set has `n == 0` and every
/// percentage `0.0` (never NaN, so it serialises as JSON); the UI should show
/// "—" when `n == 0` rather than the zeros.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Scores {
    pub n: usize,
    pub i2t: f64,
    pub t2i: f64,
    pub group: f64,
    pub ipos2t: f64,
    pub ineg2t: f64,
    pub tpos2i: f64,
    pub tneg2i: f64,
}

impl Scores {
    /// Chance level of a model that picks uniformly at random: each binary
    /// choice succeeds half the time, two independent ones a quarter, and the
    /// group one sixth (Winoground's derivation). `n` is 0: nothing was counted.
    pub fn random() -> Self {
        let (pair, one) = (25.0, 50.0);
        Scores { n: 0, i2t: pair, t2i: pair, group: 1.0 / 6.0 * 100.0, ipos2t: one, ineg2t: one, tpos2i: one, tneg2i: one }
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Every percentage passed through [`round2`], for display tables.
    pub fn rounded(&self) -> Self {
        self.map(round2)
    }

    fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        let [i2t, t2i, group, ipos2t, ineg2t, tpos2i, tneg2i] =
            [self.i2t, self.t2i, self.group, self.ipos2t, self.ineg2t, self.tpos2i, self.tneg2i].map(f);
        Scores { n: self.n, i2t, t2i, group, ipos2t, ineg2t, tpos2i, tneg2i }
    }
}

/// Success counters: aggregation is a single pass over integers, so 1M
/// outcomes cost milliseconds and percentages carry no summation error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    pub n: usize,
    pub i2t: usize,
    pub t2i: usize,
    pub group: usize,
    pub ipos2t: usize,
    pub ineg2t: usize,
    pub tpos2i: usize,
    pub tneg2i: usize,
}

impl Tally {
    pub fn add(&mut self, o: Outcome) {
        self.n += 1;
        self.i2t += o.i2t() as usize;
        self.t2i += o.t2i() as usize;
        self.group += o.group() as usize;
        self.ipos2t += o.ipos2t as usize;
        self.ineg2t += o.ineg2t as usize;
        self.tpos2i += o.tpos2i as usize;
        self.tneg2i += o.tneg2i as usize;
    }

    pub fn merge(&mut self, other: &Tally) {
        self.n += other.n;
        self.i2t += other.i2t;
        self.t2i += other.t2i;
        self.group += other.group;
        self.ipos2t += other.ipos2t;
        self.ineg2t += other.ineg2t;
        self.tpos2i += other.tpos2i;
        self.tneg2i += other.tneg2i;
    }

    pub fn scores(&self) -> Scores {
        let n = self.n as f64;
        let counts = Scores {
            n: self.n,
            i2t: self.i2t as f64,
            t2i: self.t2i as f64,
            group: self.group as f64,
            ipos2t: self.ipos2t as f64,
            ineg2t: self.ineg2t as f64,
            tpos2i: self.tpos2i as f64,
            tneg2i: self.tneg2i as f64,
        };
        counts.map(|k| if self.n == 0 { 0.0 } else { k / n * 100.0 })
    }
}

/// A results table: overall, per type and per (type, subtype).
///
/// Only categories that occur in the input get a row. In JSON, `by_type` keys
/// are `"replace"`, `"swap"`, `"add"` and `by_subtype` keys are the
/// `Category` display form, e.g. `"replace/obj"` (JSON keys must be strings).
/// Both maps iterate in the paper's table order (replace, swap, add; obj,
/// att, rel), because that is the derived `Ord` of the keys.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Report {
    pub overall: Scores,
    pub by_type: BTreeMap<NegType, Scores>,
    #[serde(with = "category_keys")]
    pub by_subtype: BTreeMap<Category, Scores>,
}

/// Streaming form of [`aggregate`], for callers that receive outcomes one at a time.
#[derive(Debug, Clone, Default)]
pub struct Aggregator {
    /// Indexed by `neg_type * 3 + subtype`: no map lookup per outcome.
    cells: [Tally; 9],
}

impl Aggregator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, category: Category, outcome: Outcome) {
        self.cells[category.neg_type as usize * 3 + category.subtype as usize].add(outcome);
    }

    pub fn report(&self) -> Report {
        let mut report = Report::default();
        let mut overall = Tally::default();
        for (t, neg_type) in NegType::ALL.into_iter().enumerate() {
            let mut by_type = Tally::default();
            for (s, subtype) in Subtype::ALL.into_iter().enumerate() {
                let cell = &self.cells[t * 3 + s];
                if cell.n > 0 {
                    report.by_subtype.insert(Category { neg_type, subtype }, cell.scores());
                    by_type.merge(cell);
                }
            }
            if by_type.n > 0 {
                report.by_type.insert(neg_type, by_type.scores());
                overall.merge(&by_type);
            }
        }
        report.overall = overall.scores();
        report
    }
}

pub fn aggregate(items: impl IntoIterator<Item = (Category, Outcome)>) -> Report {
    let mut agg = Aggregator::new();
    for (category, outcome) in items {
        agg.add(category, outcome);
    }
    agg.report()
}

/// Relative nudge applied before rounding. A decimal tie such as 75.825 is
/// stored a few ulps (~1e-15 relative) below or above its true value; 1e-12
/// absorbs that with a 1000× margin, yet stays far below the smallest real
/// distance to a tie for a percentage k/n·100 (≥ 1/(2n) hundredths, i.e. safe
/// for n up to 5·10⁷).
const TIE_NUDGE: f64 = 1e-12;

/// Rounds to 2 decimals, half away from zero, treating values within float
/// error of a decimal tie as the tie (75.825 → 75.83, 1.005 → 1.01), as a
/// reader of the decimal number would. Non-finite input is returned as is.
pub fn round2(x: f64) -> f64 {
    let hundredths = x * 100.0;
    // Beyond 2^52 every f64 is an integer: nothing left to round.
    if !hundredths.is_finite() || hundredths.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    let r = (hundredths * (1.0 + TIE_NUDGE)).round() / 100.0;
    if r == 0.0 { 0.0 } else { r } // no "-0" in tables
}

/// `BTreeMap<Category, _>` as a JSON object keyed by `"type/subtype"`.
mod category_keys {
    use super::{Category, Scores};
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(map: &BTreeMap<Category, Scores>, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_map(map.iter().map(|(c, s)| (c.to_string(), s)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<BTreeMap<Category, Scores>, D::Error> {
        let raw = BTreeMap::<String, Scores>::deserialize(de)?;
        raw.into_iter()
            .map(|(key, scores)| {
                let (t, s) = key.split_once('/').ok_or_else(|| D::Error::custom(format!("category key {key:?} is not type/subtype")))?;
                Category::parse(t, s).map(|c| (c, scores)).map_err(D::Error::custom)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(flags(Outcome::from_scores(Similarities::new(n, 0.1, 0.2, 0.8))), [false, true, false, true, false, false, false]);
        // s(C1,I0) feeds Ipos2T and Tneg2I.
        assert_eq!(flags(Outcome::from_scores(Similarities::new(0.9, n, 0.2, 0.8))), [false, true, true, false, false, false, false]);
        // s(C0,I1) feeds Ineg2T and Tpos2I.
        assert_eq!(flags(Outcome::from_scores(Similarities::new(0.9, 0.1, n, 0.8))), [true, false, false, true, false, false, false]);
        // s(C1,I1) feeds Ineg2T and Tneg2I.
        assert_eq!(flags(Outcome::from_scores(Similarities::new(0.9, 0.1, 0.2, n))), [true, false, true, false, false, false, false]);
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
        assert_eq!(Outcome::from_flags(true, true, true, true), Outcome::from_scores(Similarities::new(1.0, 0.0, 0.0, 1.0)));
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
        let r = aggregate([(cat("add", "att"), Outcome::from_flags(true, true, true, true)), (cat("replace", "obj"), Outcome::default())]);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["by_type"]["add"]["n"], 1);
        assert_eq!(json["by_type"]["replace"]["group"], 0.0);
        assert_eq!(json["by_subtype"]["add/att"]["group"], 100.0);
        assert_eq!(json["overall"]["i2t"], 50.0);
        let back: Report = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
        let bad = serde_json::json!({"overall": Scores::default(), "by_type": {}, "by_subtype": {"swap/rel": Scores::default()}});
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
}
