//! Bundles: what one participant of a link study answers. Made once when
//! the study is created (seeded, stratified so each bundle has the mix of
//! the whole), then handed out on arrival to the bundle that most needs a copy.
use crate::domain::category::Category;
use crate::domain::rng::{mix, shuffle};
use crate::domain::stratified::{sample, subsets_of, StudyItem};
use std::collections::BTreeMap;

/// One study item with the strata it is balanced over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StratItem {
    pub instance: i64,
    pub neg_type: String,
    pub subtype: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// 0, 1, ... in the order made.
    pub number: i64,
    /// Instances in a stable (seeded) order; each is asked every question of the kind.
    pub instances: Vec<i64>,
    pub copies_wanted: i64,
    /// Wanted by exactly two participants, for agreement.
    pub paired: bool,
}

/// Splits the items into `ceil(n / size)` bundles of at most `size`, as
/// even as possible (sizes differ by at most one). Items are shuffled
/// within each (type, subtype) stratum, the strata laid end to end and dealt
/// round-robin, so every bundle gets its share of every stratum. The first
/// `paired` bundles want exactly 2 copies, the rest `copies`.
pub fn make_bundles(items: &[StratItem], size: usize, copies: i64, paired: usize, seed: u64) -> Vec<Bundle> {
    let size = size.max(1);
    let mut strata: BTreeMap<(&str, &str), Vec<i64>> = BTreeMap::new();
    for it in items {
        strata.entry((it.neg_type.as_str(), it.subtype.as_str())).or_default().push(it.instance);
    }
    let n = items.len().div_ceil(size);
    let mut bundles: Vec<Bundle> = (0..n)
        .map(|b| Bundle {
            number: b as i64,
            instances: Vec::with_capacity(size),
            copies_wanted: if b < paired { 2 } else { copies },
            paired: b < paired,
        })
        .collect();
    let mut dealt = 0usize;
    for (s, (_, mut ids)) in strata.into_iter().enumerate() {
        ids.sort_unstable();
        shuffle(&mut ids, mix(&[seed, 0x4255_4e44, s as u64]));
        for id in ids {
            bundles[dealt % n].instances.push(id);
            dealt += 1;
        }
    }
    bundles
}

/// A stratified-sample link study's bundles: `samples` places' samples,
/// each `per_subset` items of every subset, seeded by the study seed and
/// the place's number; the first `paired` want 2 copies, the rest `copies`.
pub fn sample_bundles(
    items: &[StudyItem],
    per_subset: usize,
    subsets: Option<&[Category]>,
    samples: usize,
    copies: i64,
    paired: usize,
    seed: u64,
) -> Vec<Bundle> {
    let subsets = subsets_of(subsets, items);
    (0..samples)
        .map(|b| Bundle {
            number: b as i64,
            instances: sample(seed, per_subset, &subsets, &format!("place {b}"), items),
            copies_wanted: if b < paired { 2 } else { copies },
            paired: b < paired,
        })
        .collect()
}

/// A bundle's standing when someone arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleLoad {
    pub number: i64,
    pub copies_wanted: i64,
    /// Active plus completed leases: the places taken.
    pub taken: i64,
}

/// The bundle a new arrival gets: the fewest places taken among those below
/// their wanted copies, ties to the lower number; None when the study is full.
pub fn pick_bundle(loads: &[BundleLoad]) -> Option<i64> {
    loads.iter().filter(|l| l.taken < l.copies_wanted).min_by_key(|l| (l.taken, l.number)).map(|l| l.number)
}

/// Places still open over the whole study.
pub fn open_places(loads: &[BundleLoad]) -> i64 {
    loads.iter().map(|l| (l.copies_wanted - l.taken).max(0)).sum()
}

/// The study's places: every bundle's wanted copies.
pub fn study_places(loads: &[BundleLoad]) -> i64 {
    loads.iter().map(|l| l.copies_wanted.max(0)).sum()
}

/// Arrivals are bounded by the places they could take: an arrival that
/// holds no place (still at a comprehension check, screened out, or
/// returned) frees or takes none, so at most three times the study's
/// places, plus a margin, may have arrived so within the time limit. The
/// study's places, not its open ones: a real crowd where most return or
/// fail the check piles up that many by the time few places are left, and
/// must still fill them. Past that, up to twice as many, only an arrival
/// from an address with fewer than two arrivals at the study within the
/// time limit (`from_address`; None: unknown) comes in, so one address
/// flooding the link does not make it full for everyone; past twice, none.
/// An anonymous flood (arrive, return, arrive with a new id) thus adds a
/// bounded number of rows per time limit, not rows without end.
pub fn admits_another_arrival(without_place: i64, places: i64, from_address: Option<usize>) -> bool {
    let bound = 3 * places.max(0) + 20;
    without_place < bound || (without_place < 2 * bound && from_address.is_some_and(|n| n < 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn arrivals_without_a_place_are_bounded_by_the_places() {
        let admits = |without, places| admits_another_arrival(without, places, None);
        assert!(admits(0, 0), "a margin even when full");
        assert!(admits(19, 0) && !admits(20, 0));
        assert!(admits(319, 100) && !admits(320, 100));
        assert!(!admits(20, -5), "no places count as none");
        let loads = [load(0, 2, 2), load(1, 3, 3), load(2, 1, 0)];
        assert_eq!((study_places(&loads), open_places(&loads)), (6, 1));
        assert!(admits(37, study_places(&loads)), "one place open of six: 38 may wait");
    }

    #[test]
    fn past_the_bound_only_a_new_address_comes_in_up_to_twice_it() {
        // One place: the bound is 23, the hard one 46.
        assert!(admits_another_arrival(30, 1, Some(0)) && admits_another_arrival(45, 1, Some(1)));
        assert!(!admits_another_arrival(23, 1, Some(2)), "the flooding address is turned away");
        assert!(!admits_another_arrival(23, 1, None), "an unknown address is too");
        assert!(!admits_another_arrival(46, 1, Some(0)), "past twice the bound, everyone");
        assert!(admits_another_arrival(22, 1, Some(50)), "below the bound, any address");
    }

    fn items(n: usize) -> Vec<StratItem> {
        let types = ["replace", "swap", "add"];
        (0..n)
            .map(|i| StratItem {
                instance: 1000 + i as i64,
                neg_type: types[i % 3].into(),
                subtype: if i % 2 == 0 { "obj".into() } else { "att".into() },
            })
            .collect()
    }

    #[test]
    fn every_item_lands_in_exactly_one_bundle_of_at_most_size() {
        for (n, size) in [(500, 25), (100, 30), (7, 7), (1, 5), (10, 1)] {
            let b = make_bundles(&items(n), size, 1, 0, 9);
            assert_eq!(b.len(), n.div_ceil(size), "{n}/{size}");
            let all: Vec<i64> = b.iter().flat_map(|b| b.instances.clone()).collect();
            assert_eq!(all.len(), n);
            assert_eq!(all.iter().collect::<HashSet<_>>().len(), n, "no item twice");
            let sizes: Vec<usize> = b.iter().map(|b| b.instances.len()).collect();
            assert!(sizes.iter().all(|&s| s <= size && s > 0), "{sizes:?}");
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
            assert_eq!(b.iter().map(|b| b.number).collect::<Vec<_>>(), (0..b.len() as i64).collect::<Vec<_>>());
        }
        assert!(make_bundles(&[], 5, 1, 0, 1).is_empty());
    }

    #[test]
    fn each_bundle_has_the_mix_of_the_whole() {
        let all = items(600); // 6 strata of 100
        let stratum: HashMap<i64, (String, String)> =
            all.iter().map(|i| (i.instance, (i.neg_type.clone(), i.subtype.clone()))).collect();
        for b in make_bundles(&all, 60, 1, 0, 4) {
            let mut count: HashMap<&(String, String), usize> = HashMap::new();
            for i in &b.instances {
                *count.entry(&stratum[i]).or_default() += 1;
            }
            assert_eq!(count.len(), 6, "bundle {} misses a stratum", b.number);
            assert!(count.values().all(|&c| c == 10), "bundle {}: {count:?}", b.number);
        }
    }

    #[test]
    fn bundles_are_seeded() {
        let a = make_bundles(&items(90), 10, 1, 0, 1);
        assert_eq!(a, make_bundles(&items(90), 10, 1, 0, 1));
        assert_ne!(a, make_bundles(&items(90), 10, 1, 0, 2));
        // The input order does not matter, only the items.
        let mut rev = items(90);
        rev.reverse();
        assert_eq!(a, make_bundles(&rev, 10, 1, 0, 1));
    }

    #[test]
    fn paired_bundles_want_two_copies() {
        let b = make_bundles(&items(100), 10, 1, 3, 1);
        assert_eq!(b.iter().filter(|b| b.paired).count(), 3);
        assert!(b[..3].iter().all(|b| b.paired && b.copies_wanted == 2));
        assert!(b[3..].iter().all(|b| !b.paired && b.copies_wanted == 1));
        let three = make_bundles(&items(100), 10, 3, 2, 1);
        assert_eq!(three.iter().map(|b| b.copies_wanted).collect::<Vec<_>>(), [2, 2, 3, 3, 3, 3, 3, 3, 3, 3]);
    }

    fn load(number: i64, copies_wanted: i64, taken: i64) -> BundleLoad {
        BundleLoad { number, copies_wanted, taken }
    }

    #[test]
    fn arrivals_go_to_the_fewest_taken_then_lowest_number() {
        assert_eq!(pick_bundle(&[load(0, 2, 1), load(1, 2, 0), load(2, 2, 0)]), Some(1));
        assert_eq!(pick_bundle(&[load(0, 2, 1), load(1, 2, 1)]), Some(0));
        assert_eq!(pick_bundle(&[load(0, 1, 1), load(1, 2, 1)]), Some(1), "a full bundle is skipped");
        assert_eq!(pick_bundle(&[load(0, 1, 1), load(1, 2, 2)]), None, "full study");
        assert_eq!(pick_bundle(&[]), None);
        assert_eq!(open_places(&[load(0, 2, 1), load(1, 2, 2), load(2, 3, 0)]), 4);
    }

    #[test]
    fn handing_out_places_one_by_one_fills_every_bundle_exactly() {
        let mut loads: Vec<BundleLoad> = (0..20).map(|b| load(b, 2, 0)).collect();
        let mut given = 0;
        while let Some(b) = pick_bundle(&loads) {
            loads[b as usize].taken += 1;
            given += 1;
            // Copies spread: no bundle gets its second before all have a first.
            let (lo, hi) = (loads.iter().map(|l| l.taken).min(), loads.iter().map(|l| l.taken).max());
            assert!(hi.unwrap() - lo.unwrap() <= 1);
        }
        assert_eq!(given, 40);
        assert!(loads.iter().all(|l| l.taken == 2));
    }

    #[test]
    fn sample_bundles_are_each_places_own_stratified_sample() {
        let all: Vec<StudyItem> = (0..70).map(|id| StudyItem { id, subset: Category::ALL[id as usize % 7] }).collect();
        let b = sample_bundles(&all, 3, Some(&Category::ALL[..5]), 4, 1, 1, 9);
        assert_eq!(b.len(), 4);
        for bundle in &b {
            assert_eq!(bundle.instances.len(), 15);
            for c in &Category::ALL[..5] {
                assert_eq!(bundle.instances.iter().filter(|&&i| all[i as usize].subset == *c).count(), 3);
            }
        }
        assert_ne!(b[0].instances, b[1].instances, "each place its own sample");
        assert_eq!((b[0].copies_wanted, b[0].paired, b[1].copies_wanted), (2, true, 1));
        assert_eq!(b, sample_bundles(&all, 3, Some(&Category::ALL[..5]), 4, 1, 1, 9), "seeded");
        assert_eq!(sample_bundles(&all, 3, None, 1, 1, 0, 9)[0].instances.len(), 21, "every subset the items have");
    }
}
