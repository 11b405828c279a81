use super::*;
use std::collections::{BTreeSet, HashMap};

/// SugarCrepe++'s five subsets.
fn pp_subsets() -> Vec<Category> {
    Category::ALL.into_iter().filter(|c| c.neg_type != NegType::Add).collect()
}

/// `n` items of each of the five subsets, ids grouped by subset.
fn items(n: i64) -> Vec<StudyItem> {
    pp_subsets()
        .into_iter()
        .enumerate()
        .flat_map(|(s, c)| (0..n).map(move |i| StudyItem { id: 1000 * s as i64 + i, subset: c }))
        .collect()
}

#[test]
fn each_person_gets_per_subset_items_of_every_subset() {
    let all = items(100);
    let subset: HashMap<i64, Category> = all.iter().map(|i| (i.id, i.subset)).collect();
    for person in ["ana", "bo", "p-7f3a"] {
        let mine = sample(7, 30, &pp_subsets(), person, &all);
        assert_eq!(mine.len(), 150);
        assert_eq!(mine.iter().collect::<BTreeSet<_>>().len(), 150, "no item twice");
        for c in pp_subsets() {
            assert_eq!(mine.iter().filter(|i| subset[i] == c).count(), 30, "{person} {c}");
        }
        assert!(mine.windows(2).all(|w| w[0] < w[1]), "instance order");
    }
}

#[test]
fn the_sample_is_the_persons_and_the_seeds_alone() {
    let all = items(100);
    let ana = sample(7, 30, &pp_subsets(), "ana", &all);
    assert_eq!(ana, sample(7, 30, &pp_subsets(), "ana", &all), "reproducible");
    assert_ne!(ana, sample(7, 30, &pp_subsets(), "bo", &all), "per person");
    assert_ne!(ana, sample(8, 30, &pp_subsets(), "ana", &all), "per study seed");
    let mut reversed = pp_subsets();
    reversed.reverse();
    let mut shuffled_items = all.clone();
    shuffled_items.reverse();
    assert_eq!(ana, sample(7, 30, &reversed, "ana", &shuffled_items), "neither order matters");
    // Only the listed subsets are drawn from.
    let two = sample(7, 30, &pp_subsets()[..2], "ana", &all);
    assert_eq!(two.len(), 60);
    assert!(two.iter().all(|i| *i < 2000));
}

#[test]
fn samples_cover_a_subset_evenly_over_many_people() {
    // 10 items a subset, 2 per person: over 500 people each item is drawn about 100 times.
    let all = items(10);
    let mut drawn: HashMap<i64, usize> = HashMap::new();
    for p in 0..500 {
        for i in sample(3, 2, &pp_subsets(), &format!("p{p}"), &all) {
            *drawn.entry(i).or_default() += 1;
        }
    }
    assert_eq!(drawn.len(), 50);
    assert!(drawn.values().all(|&n| (60..=140).contains(&n)), "{drawn:?}");
}

#[test]
fn shortfall_names_the_first_subset_with_too_few_items() {
    let mut all = items(30);
    all.retain(|i| !(i.subset == pp_subsets()[4] && i.id % 1000 >= 12));
    assert_eq!(shortfall(30, &pp_subsets(), &all), Some((pp_subsets()[4], 12)));
    assert_eq!(shortfall(12, &pp_subsets(), &all), None);
    let add = Category::ALL[5];
    assert_eq!(shortfall(1, &[add], &all), Some((add, 0)));
}

#[test]
fn check_refuses_a_subset_too_small_or_absent_naming_the_field() {
    let all = items(12);
    assert_eq!(check(12, None, &all), Ok(()));
    let (field, message) = check(13, None, &all).unwrap_err();
    assert_eq!(field, "assignment.per_subset");
    assert_eq!(message, "13 items of subset replace/obj asked per person, but the study has only 12 of it");
    let add = Category::ALL[5];
    assert_eq!(
        check(1, Some(&[pp_subsets()[0], add]), &all),
        Err(("assignment.subsets", "the study has no items of subset add/obj".into()))
    );
}

#[test]
fn subsets_default_to_those_the_items_have_in_table_order() {
    let mut all = items(3);
    all.reverse();
    assert_eq!(subsets_of(None, &all), pp_subsets());
    assert_eq!(subsets_of(Some(&pp_subsets()[1..2]), &all), &pp_subsets()[1..2]);
}

#[test]
fn spec_values_are_checked_with_the_field_named() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let pp = names(&["swap-object", "swap_att", "replace/obj", "REPLACE/attribute", "replace/relation"]);
    let [r_obj, r_att, r_rel, s_obj, s_att] = pp_subsets()[..] else { unreachable!() };
    assert_eq!(parse(Some(30), Some(&pp)), Ok((30, Some(vec![s_obj, s_att, r_obj, r_att, r_rel]))));
    assert_eq!(parse(Some(5), None), Ok((5, None)));
    let err = |r: Result<Parsed, (&'static str, String)>| r.unwrap_err();
    assert_eq!(err(parse(None, None)).0, "assignment.per_subset");
    assert_eq!(err(parse(Some(0), None)), ("assignment.per_subset", "must be at least 1".into()));
    let (field, message) = err(parse(Some(3), Some(&names(&["swap/rel"]))));
    assert_eq!(field, "assignment.subsets");
    assert!(message.contains("\"swap/rel\"") && message.contains("swap has no subtype rel"), "{message}");
    let (field, message) = err(parse(Some(3), Some(&names(&["move/obj"]))));
    assert!(field == "assignment.subsets" && message.contains("unknown type"), "{message}");
    assert!(err(parse(Some(3), Some(&names(&["swap"])))).1.contains("not a subset"));
    assert!(err(parse(Some(3), Some(&names(&["swap/obj", "swap-object"])))).1.contains("listed twice"));
    assert!(err(parse(Some(3), Some(&[]))).1.contains("empty"));
}
