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
        Scores {
            n: 0,
            i2t: pair,
            t2i: pair,
            group: 1.0 / 6.0 * 100.0,
            ipos2t: one,
            ineg2t: one,
            tpos2i: one,
            tneg2i: one,
        }
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
    if r == 0.0 {
        0.0
    } else {
        r
    } // no "-0" in tables
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
                let (t, s) = key
                    .split_once('/')
                    .ok_or_else(|| D::Error::custom(format!("category key {key:?} is not type/subtype")))?;
                Category::parse(t, s).map(|c| (c, scores)).map_err(D::Error::custom)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
