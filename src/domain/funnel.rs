//! The curation funnel of a dataset (BiVLC: 7,512 candidates → 5,382 after
//! Step 3 → 2,933 after Step 4), overall and per SugarCrepe category.
use super::category::Category;
use super::survey::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts at each stage. `*_open` items have no final answer yet (waiting
/// for answers or for adjudication).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounts {
    pub candidates: u64,
    pub step3_kept: u64,
    pub step3_discarded: u64,
    pub step3_open: u64,
    pub step4_kept: u64,
    pub step4_ambiguous: u64,
    pub step4_both: u64,
    pub step4_open: u64,
}

impl StageCounts {
    fn merge(&mut self, o: &StageCounts) {
        self.candidates += o.candidates;
        self.step3_kept += o.step3_kept;
        self.step3_discarded += o.step3_discarded;
        self.step3_open += o.step3_open;
        self.step4_kept += o.step4_kept;
        self.step4_ambiguous += o.step4_ambiguous;
        self.step4_both += o.step4_both;
        self.step4_open += o.step4_open;
    }

    /// Share of candidates removed so far, in percent: discarded by Step 3,
    /// or judged ambiguous or both by Step 4 (BiVLC at the end: 61%). Items
    /// still open, or kept by Step 3 with no Step 4 yet, are not removed.
    pub fn removed_percent(&self) -> Option<f64> {
        let removed = self.step3_discarded + self.step4_ambiguous + self.step4_both;
        (self.candidates > 0).then(|| 100.0 * removed as f64 / self.candidates as f64)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Funnel {
    pub dataset: String,
    pub step3_study: Option<String>,
    pub step4_study: Option<String>,
    pub overall: StageCounts,
    /// Keyed "replace", "swap", "add".
    pub by_type: BTreeMap<String, StageCounts>,
    /// Keyed "replace/obj", ...
    pub by_subtype: BTreeMap<String, StageCounts>,
}

/// Collects instances and study verdicts; `None` as a verdict means "not final yet".
#[derive(Debug, Default)]
pub struct FunnelBuilder {
    cells: BTreeMap<Category, StageCounts>,
}

impl FunnelBuilder {
    /// `n` more candidates of category `c` (a dataset's count per category).
    pub fn candidates(&mut self, c: Category, n: u64) {
        if n > 0 {
            self.cells.entry(c).or_default().candidates += n;
        }
    }

    pub fn step3(&mut self, c: Category, verdict: Option<Verdict>) {
        let cell = self.cells.entry(c).or_default();
        match verdict {
            Some(Verdict::Kept) => cell.step3_kept += 1,
            Some(_) => cell.step3_discarded += 1,
            None => cell.step3_open += 1,
        }
    }

    pub fn step4(&mut self, c: Category, verdict: Option<Verdict>) {
        let cell = self.cells.entry(c).or_default();
        match verdict {
            Some(Verdict::Kept) => cell.step4_kept += 1,
            Some(Verdict::Both) => cell.step4_both += 1,
            Some(_) => cell.step4_ambiguous += 1,
            None => cell.step4_open += 1,
        }
    }

    pub fn build(self, dataset: &str, step3_study: Option<String>, step4_study: Option<String>) -> Funnel {
        let mut f = Funnel { dataset: dataset.to_string(), step3_study, step4_study, ..Default::default() };
        for (c, counts) in &self.cells {
            f.overall.merge(counts);
            f.by_type.entry(c.neg_type.as_str().to_string()).or_default().merge(counts);
            f.by_subtype.insert(c.to_string(), *counts);
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::category::{NegType, Subtype};

    fn cat(t: NegType, s: Subtype) -> Category {
        Category { neg_type: t, subtype: s }
    }

    #[test]
    fn counts_each_stage_per_category_and_overall() {
        let (ro, sa) = (cat(NegType::Replace, Subtype::Obj), cat(NegType::Swap, Subtype::Att));
        let mut b = FunnelBuilder::default();
        b.candidates(ro, 4);
        b.candidates(sa, 1);
        b.candidates(sa, 1);
        b.candidates(cat(NegType::Add, Subtype::Obj), 0);
        b.step3(ro, Some(Verdict::Kept));
        b.step3(ro, Some(Verdict::Kept));
        b.step3(ro, Some(Verdict::Discarded));
        b.step3(ro, None);
        b.step3(sa, Some(Verdict::Kept));
        b.step3(sa, Some(Verdict::Kept));
        b.step4(ro, Some(Verdict::Kept));
        b.step4(ro, Some(Verdict::Both));
        b.step4(sa, Some(Verdict::Ambiguous));
        b.step4(sa, None);
        let f = b.build("d", Some("s3".into()), None);
        assert_eq!(f.overall.candidates, 6);
        assert_eq!((f.overall.step3_kept, f.overall.step3_discarded, f.overall.step3_open), (4, 1, 1));
        assert_eq!(
            (f.overall.step4_kept, f.overall.step4_both, f.overall.step4_ambiguous, f.overall.step4_open),
            (1, 1, 1, 1)
        );
        assert_eq!(f.by_type["replace"].candidates, 4);
        assert_eq!(f.by_subtype["swap/att"].step4_ambiguous, 1);
        assert!(!f.by_subtype.contains_key("add/obj"), "categories without instances are left out");
        // One discarded, one ambiguous, one both: the open ones are not removed.
        let removed = f.overall.removed_percent().unwrap();
        assert!((removed - 50.0).abs() < 1e-9, "{removed}");
        assert_eq!(StageCounts::default().removed_percent(), None);
        let untouched = StageCounts { candidates: 5, step3_open: 5, ..StageCounts::default() };
        assert_eq!(untouched.removed_percent(), Some(0.0), "nothing is removed while everything is open");
    }
}
