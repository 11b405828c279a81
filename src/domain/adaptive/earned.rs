//! A person's rows as earned outside the item being decided. The fit's rows
//! count every answer a person gave against posteriors that answer helped
//! make, and against the answers of whoever shared their items. When an
//! item is weighed, its raters' answers are not independent evidence of
//! each other's skill: in a link study two people who shared a bundle (or
//! a follow-up) are each other's only check on most of their answers. Here
//! a person's soft counts come from their gold answers and from their
//! answers on other items as those items stand with every one of the
//! raters' answers divided out, where what is left was settled (at
//! [`SETTLED`]) by at least one other person who counts.
use super::evidence::SETTLED;
use std::collections::HashMap;

/// An item's posterior as the fit ended, and the `(person, class, counted)`
/// answers read (`counted`: the answer is in that posterior).
pub type FittedItem = (Vec<f64>, Vec<(u64, usize, bool)>);

/// Soft counts `[t * k + a]` for a person's rows from their `gold` counts
/// (empty: none) and their `answered` `(item, class)` answers, when the
/// answers of `raters` (whose answers count, with their rows) on `item` are
/// weighed together.
pub(super) fn soft_counts(
    k: usize,
    (gold, answered): (&[f64], &[(u64, usize)]),
    items: &HashMap<u64, FittedItem>,
    item: Option<u64>,
    raters: &[(u64, &[f64])],
) -> Vec<f64> {
    let mut soft = if gold.len() == k * k { gold.to_vec() } else { vec![0.0; k * k] };
    let mut without = vec![0.0; k];
    for &(j, a) in answered {
        let Some((q, read)) = items.get(&j).filter(|_| Some(j) != item && a < k) else {
            continue;
        };
        without.copy_from_slice(q);
        let mut outside = false;
        for &(r, b, _) in read.iter().filter(|read| read.2) {
            match raters.iter().find(|c| c.0 == r) {
                Some((_, rows)) => without.iter_mut().enumerate().for_each(|(t, x)| *x /= rows[t * k + b].max(1e-12)),
                None => outside = true,
            }
        }
        let sum: f64 = without.iter().sum();
        if !outside || sum <= 0.0 {
            continue;
        }
        without.iter_mut().for_each(|x| *x /= sum);
        if without.iter().copied().fold(0.0, f64::max) >= SETTLED {
            without.iter().enumerate().for_each(|(t, x)| soft[t * k + a] += x);
        }
    }
    soft
}
