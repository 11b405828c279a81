//! Seeded splits, stratified by category: within each (type, subtype) the
//! instances are shuffled with a seed mixed from (seed, category) and dealt
//! out in the requested proportions, so every split keeps the category mix
//! and the same seed over the same instances always gives the same split.
use crate::domain::category::Category;
use crate::domain::rng::{mix, shuffle};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub name: String,
    pub fraction: f64,
}

/// `test` (one split holding everything) or `train=0.8,val=0.2`
/// (fractions that sum to 1).
pub fn parse_splits(s: &str) -> Result<Vec<Split>, String> {
    let mut out: Vec<Split> = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (name, fraction) = match part.split_once('=') {
            None => (part, 1.0),
            Some((n, f)) => {
                let f: f64 = f.trim().parse().map_err(|_| format!("split {n:?}: fraction {f:?} is not a number"))?;
                (n.trim(), f)
            }
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("split name {name:?}: use letters, digits, '_' or '-'"));
        }
        // The export's other files live beside the split files: none may be overwritten.
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("study-") || lower.starts_with("step3-") || lower.starts_with("step4-") {
            return Err(format!(
                "split name {name:?}: names starting with study-, step3- or step4- are the export's own files"
            ));
        }
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(format!("split {name:?}: fraction {fraction} must be in (0, 1]"));
        }
        if out.iter().any(|s| s.name == name) {
            return Err(format!("split {name:?} is named twice"));
        }
        out.push(Split { name: name.to_string(), fraction });
    }
    let sum: f64 = out.iter().map(|s| s.fraction).sum();
    if (sum - 1.0).abs() > 1e-6 {
        return Err(format!("split fractions sum to {sum}, not 1"));
    }
    Ok(out)
}

/// The split index of each item (parallel to `items`, which are
/// `(instance id, category)` with distinct ids). Per category, counts follow
/// the fractions by largest remainder (ties to the earlier split).
pub fn assign_splits(items: &[(i64, Category)], splits: &[Split], seed: u64) -> Vec<usize> {
    let mut out = vec![0; items.len()];
    if splits.len() <= 1 {
        return out;
    }
    let mut strata: BTreeMap<Category, Vec<usize>> = BTreeMap::new();
    for (i, (_, c)) in items.iter().enumerate() {
        strata.entry(*c).or_default().push(i);
    }
    for (category, mut members) in strata {
        // Order by id first so the input order does not matter.
        members.sort_by_key(|&i| items[i].0);
        let code = Category::ALL.iter().position(|c| *c == category).unwrap_or(usize::MAX) as u64;
        shuffle(&mut members, mix(&[seed, code]));
        let counts = quotas(members.len(), splits);
        let mut next = members.into_iter();
        for (split, n) in counts.into_iter().enumerate() {
            for i in next.by_ref().take(n) {
                out[i] = split;
            }
        }
    }
    out
}

/// How many of `n` items each split gets: floors, then the leftovers to the
/// largest fractional parts.
fn quotas(n: usize, splits: &[Split]) -> Vec<usize> {
    let exact: Vec<f64> = splits.iter().map(|s| s.fraction * n as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut order: Vec<usize> = (0..splits.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    let mut left = n.saturating_sub(counts.iter().sum());
    for i in order.into_iter().cycle() {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    counts
}

/// Exported rows per category and split, for the card.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowCounts {
    pub splits: Vec<String>,
    pub cells: BTreeMap<Category, Vec<u64>>,
}

impl RowCounts {
    pub fn new(splits: Vec<String>) -> RowCounts {
        RowCounts { splits, cells: BTreeMap::new() }
    }

    pub fn add(&mut self, c: Category, split: usize) {
        let n = self.splits.len();
        self.cells.entry(c).or_insert_with(|| vec![0; n])[split] += 1;
    }

    pub fn per_split(&self) -> Vec<u64> {
        let mut out = vec![0; self.splits.len()];
        for row in self.cells.values() {
            for (o, v) in out.iter_mut().zip(row) {
                *o += v;
            }
        }
        out
    }

    pub fn total(&self) -> u64 {
        self.per_split().iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(name: &str, fraction: f64) -> Split {
        Split { name: name.into(), fraction }
    }

    #[test]
    fn parses_one_split_or_fractions() {
        assert_eq!(parse_splits("test").unwrap(), vec![split("test", 1.0)]);
        assert_eq!(parse_splits("train=0.8, val=0.2").unwrap(), vec![split("train", 0.8), split("val", 0.2)]);
        assert!(parse_splits("train=0.8,val=0.1").unwrap_err().contains("sum to"));
        assert!(parse_splits("a=x").unwrap_err().contains("not a number"));
        assert!(parse_splits("a=0.5,a=0.5").unwrap_err().contains("twice"));
        assert!(parse_splits("../x").unwrap_err().contains("split name"));
        assert!(parse_splits("a=0,b=1").unwrap_err().contains("(0, 1]"));
        // The export's own files are not split names: a split would overwrite them.
        for own in ["study-4-triplets", "Study-4-answers", "step3-answers", "train=0.5,STEP4-answers=0.5"] {
            assert!(parse_splits(own).unwrap_err().contains("the export's own files"), "{own}");
        }
        assert!(parse_splits("studying").is_ok() && parse_splits("data").is_ok());
    }

    fn items(n: usize) -> Vec<(i64, Category)> {
        (0..n).map(|i| (i as i64 * 3 + 1, Category::ALL[i % 7])).collect()
    }

    #[test]
    fn splits_are_deterministic_partitions_stratified_by_category() {
        let items = items(700);
        let splits = vec![split("train", 0.8), split("val", 0.2)];
        let a = assign_splits(&items, &splits, 7);
        assert_eq!(a, assign_splits(&items, &splits, 7), "same seed, same split");
        assert_ne!(a, assign_splits(&items, &splits, 8), "another seed, another split");
        for c in Category::ALL {
            let in_val = items.iter().zip(&a).filter(|((_, ic), s)| *ic == c && **s == 1).count();
            assert_eq!(in_val, 20, "{c}: 20% of 100");
        }
        // The input order does not change who goes where.
        let mut reversed: Vec<_> = items.iter().copied().zip(a.iter().copied()).collect();
        reversed.reverse();
        let (ri, ra): (Vec<_>, Vec<_>) = reversed.into_iter().unzip();
        assert_eq!(assign_splits(&ri, &splits, 7), ra);
    }

    #[test]
    fn quotas_follow_largest_remainders() {
        let s = [split("a", 0.5), split("b", 0.3), split("c", 0.2)];
        assert_eq!(quotas(10, &s), vec![5, 3, 2]);
        assert_eq!(quotas(1, &s), vec![1, 0, 0]);
        assert_eq!(quotas(3, &s), vec![1, 1, 1], "remainders .5 .9 .6: b and c first");
        assert_eq!(quotas(0, &s), vec![0, 0, 0]);
        assert_eq!(assign_splits(&items(5), &[split("test", 1.0)], 1), vec![0; 5]);
    }

    #[test]
    fn counts_rows_per_category_and_split() {
        let mut c = RowCounts::new(vec!["train".into(), "val".into()]);
        c.add(Category::ALL[0], 0);
        c.add(Category::ALL[0], 1);
        c.add(Category::ALL[3], 0);
        assert_eq!(c.per_split(), vec![2, 1]);
        assert_eq!(c.total(), 3);
        assert_eq!(c.cells[&Category::ALL[0]], vec![1, 1]);
    }
}
