//! SugarCrepe++'s human evaluation design (Dumpala et al., 2024): each
//! person gets "a randomly selected 150 samples (30 from each subset)", a
//! random sample of their own, stratified by subset. The sample is a pure
//! function of the study seed and the person's name, so it is the same on
//! every start, restart and replay, and differs between people.
use super::category::{Category, NegType, Subtype};
use super::rng::{mix, shuffle, text_seed};

/// A study item as the assignment rules see it: its instance and subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StudyItem {
    pub id: i64,
    pub subset: Category,
}

/// The subsets a sample draws from: the listed ones, or (None) every
/// subset the study's items have, in SugarCrepe's table order.
pub fn subsets_of(listed: Option<&[Category]>, items: &[StudyItem]) -> Vec<Category> {
    match listed {
        Some(l) => l.to_vec(),
        None => Category::ALL.into_iter().filter(|c| items.iter().any(|i| i.subset == *c)).collect(),
    }
}

/// One person's sample: `per_subset` items of each subset, drawn with a
/// seed of (study seed, person, subset), in instance order. A subset with
/// fewer items gives all it has (creation refuses that, see [`shortfall`]).
pub fn sample(study_seed: u64, per_subset: usize, subsets: &[Category], person: &str, items: &[StudyItem]) -> Vec<i64> {
    let seed = mix(&[study_seed, 0x5354_5241_5431, text_seed(person)]);
    let mut mine = Vec::with_capacity(per_subset * subsets.len());
    for subset in subsets {
        let mut pool: Vec<i64> = items.iter().filter(|i| i.subset == *subset).map(|i| i.id).collect();
        pool.sort_unstable();
        // The subset's own stream: listing the subsets in another order draws the same items.
        shuffle(&mut pool, mix(&[seed, subset.neg_type as u64, subset.subtype as u64]));
        pool.truncate(per_subset);
        mine.extend(pool);
    }
    mine.sort_unstable();
    mine
}

/// The first subset with fewer than `per_subset` items, with how many it has.
pub fn shortfall(per_subset: usize, subsets: &[Category], items: &[StudyItem]) -> Option<(Category, usize)> {
    subsets.iter().map(|&c| (c, items.iter().filter(|i| i.subset == c).count())).find(|&(_, n)| n < per_subset)
}

/// Whether a study's items can give every person `per_subset` of each
/// subset; an error names the field to change.
pub fn check(
    per_subset: usize,
    listed: Option<&[Category]>,
    items: &[StudyItem],
) -> Result<(), (&'static str, String)> {
    match shortfall(per_subset, &subsets_of(listed, items), items) {
        None => Ok(()),
        Some((c, 0)) => Err(("assignment.subsets", format!("the study has no items of subset {c}"))),
        Some((c, n)) => Err((
            "assignment.per_subset",
            format!("{per_subset} items of subset {c} asked per person, but the study has only {n} of it"),
        )),
    }
}

/// `per_subset`, and the subsets listed (None: all the items have).
pub type Parsed = (usize, Option<Vec<Category>>);

/// `per_subset` and `subsets` as written in `[assignment]`, checked;
/// errors name the field.
pub fn parse(per_subset: Option<usize>, subsets: Option<&[String]>) -> Result<Parsed, (&'static str, String)> {
    let per_subset = match per_subset {
        None => {
            return Err((
                "assignment.per_subset",
                "missing: how many items of each subset one person gets, e.g. 30".into(),
            ))
        }
        Some(0) => return Err(("assignment.per_subset", "must be at least 1".into())),
        Some(n) => n,
    };
    let Some(subsets) = subsets else { return Ok((per_subset, None)) };
    if subsets.is_empty() {
        return Err(("assignment.subsets", "the list is empty; leave it out to draw from every subset".into()));
    }
    let mut out: Vec<Category> = Vec::with_capacity(subsets.len());
    for s in subsets {
        let c = parse_subset(s).map_err(|m| ("assignment.subsets", m))?;
        if out.contains(&c) {
            return Err(("assignment.subsets", format!("{s:?} is listed twice")));
        }
        out.push(c);
    }
    Ok((per_subset, Some(out)))
}

/// `swap/obj`, `swap_obj`, `swap-object`: a type and a subtype, with the
/// paper's long subtype names too.
fn parse_subset(s: &str) -> Result<Category, String> {
    let (t, sub) = s
        .trim()
        .split_once(['/', '_', '-'])
        .ok_or_else(|| format!("{s:?} is not a subset such as \"swap/obj\" or \"replace/rel\""))?;
    let sub = match sub.trim().to_ascii_lowercase().as_str() {
        "object" => Subtype::Obj.as_str().to_string(),
        "attribute" => Subtype::Att.as_str().to_string(),
        "relation" => Subtype::Rel.as_str().to_string(),
        other => other.to_string(),
    };
    NegType::parse(t).and_then(|t| Category::new(t, Subtype::parse(&sub)?)).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
#[path = "stratified_tests.rs"]
mod tests;
