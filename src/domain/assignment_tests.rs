use super::*;

/// The questions the groups rule hands out, shaped as the human baseline's
/// (`kinds::human_baseline`): two parts of two questions.
const BASELINE: &[&[u8]] = &[&[0, 1], &[2, 3]];

/// Study items of the given ids, spread over SugarCrepe's seven subsets.
fn si(ids: &[i64]) -> Vec<StudyItem> {
    ids.iter().map(|&id| StudyItem { id, subset: Category::ALL[id.rem_euclid(7) as usize] }).collect()
}

fn items() -> Vec<i64> {
    (100..160).collect()
}

/// Groups with the baseline's questions; the other rules with one question
/// per item, as study validation pairs them.
fn plan(rule: &AssignmentRule, seed: u64, annotator: i64, items: &[i64]) -> Vec<PlannedTask> {
    let questions: &[&[u8]] = if matches!(rule, AssignmentRule::Groups { .. }) { BASELINE } else { &[&[0]] };
    rule.plan_upfront(questions, seed, annotator, &format!("u{annotator}"), &si(items))
}

fn pairs_rule(n_pairs: usize, overlap: usize) -> AssignmentRule {
    let pairs = (0..n_pairs).map(|p| [format!("u{}", 2 * p), format!("u{}", 2 * p + 1)]).collect();
    AssignmentRule::Pairs { pairs, overlap }
}

fn items_of(rule: &AssignmentRule, who: i64, items: &[i64]) -> std::collections::BTreeSet<i64> {
    plan(rule, 3, who, items).into_iter().map(|t| t.item).collect()
}

#[test]
fn pairs_cover_every_item_once_except_the_shared_blocks() {
    // BiVLC's shape: 10 annotators in 5 pairs, 100 shared items per pair.
    let items: Vec<i64> = (0..5382).collect();
    let rule = pairs_rule(5, 100);
    let mut count = std::collections::HashMap::<i64, usize>::new();
    for who in 0..10 {
        for i in items_of(&rule, who, &items) {
            *count.entry(i).or_default() += 1;
        }
    }
    assert_eq!(count.len(), items.len(), "every item is assigned");
    assert_eq!(count.values().filter(|&&c| c == 2).count(), 500);
    assert!(count.values().all(|&c| c == 1 || c == 2));
    for p in 0..5 {
        let (a, b) = (items_of(&rule, 2 * p, &items), items_of(&rule, 2 * p + 1, &items));
        assert_eq!(a.intersection(&b).count(), 100, "pair {p} shares exactly its block");
        let other = items_of(&rule, (2 * p + 2) % 10, &items);
        assert_eq!(a.intersection(&other).count(), 0, "no overlap across pairs");
    }
    let sizes: Vec<usize> = (0..10).map(|w| items_of(&rule, w, &items).len()).collect();
    assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
}

#[test]
fn groups_give_each_annotator_four_questions_per_instance_i2t_first() {
    let items: Vec<i64> = (0..500).collect();
    let roster: Vec<String> = (0..20).map(|i| format!("u{i}")).collect();
    let rule = AssignmentRule::Groups { size: 25, roster };
    let mut seen = std::collections::HashSet::new();
    for who in 0..20 {
        let plan = plan(&rule, 5, who, &items);
        assert_eq!(plan.len(), 100, "25 instances x 4 questions");
        assert!(plan[..50].iter().all(|t| t.query < 2), "part 1 is image-to-text");
        assert!(plan[50..].iter().all(|t| t.query >= 2), "part 2 is text-to-image");
        let mine: std::collections::BTreeSet<i64> = plan.iter().map(|t| t.item).collect();
        assert_eq!(mine.len(), 25);
        for i in &mine {
            assert!(seen.insert(*i), "instance {i} in two groups");
            for q in 0..4 {
                assert_eq!(plan.iter().filter(|t| t.item == *i && t.query == q).count(), 1);
            }
        }
        assert_eq!(plan.iter().map(|t| t.position).collect::<Vec<_>>(), (0..100).collect::<Vec<_>>());
    }
    assert_eq!(seen.len(), 500);
    // A 21st annotator wraps round to the first group; someone off the roster gets nothing.
    let wrap = AssignmentRule::Groups { size: 25, roster: (0..21).map(|i| format!("u{i}")).collect() };
    assert_eq!(items_of(&wrap, 20, &items), items_of(&wrap, 0, &items));
    assert!(items_of(&rule, 99, &items).is_empty());
}

#[test]
fn groups_take_the_questions_from_the_kind_not_a_fixed_four() {
    let rule = AssignmentRule::Groups { size: 5, roster: vec!["u0".into()] };
    let items: Vec<i64> = (0..5).collect();
    let three = rule.plan_upfront(&[&[0, 1, 2]], 1, 0, "u0", &si(&items));
    assert_eq!(three.len(), 15, "5 instances x 3 questions in one part");
    for q in 0..3 {
        assert_eq!(three.iter().filter(|t| t.query == q).count(), 5);
    }
    let one = rule.plan_upfront(&[&[0]], 1, 0, "u0", &si(&items));
    assert_eq!(one.iter().map(|t| t.query).collect::<Vec<_>>(), [0; 5]);
    // A later part never starts before an earlier one ends.
    let parts = rule.plan_upfront(&[&[1], &[0]], 1, 0, "u0", &si(&items));
    assert!(parts[..5].iter().all(|t| t.query == 1) && parts[5..].iter().all(|t| t.query == 0));
}

#[test]
fn pairs_with_more_overlap_than_items_share_what_there_is() {
    let items: Vec<i64> = (0..7).collect();
    let rule = pairs_rule(2, 10);
    let a = items_of(&rule, 0, &items);
    let c = items_of(&rule, 2, &items);
    assert_eq!(a, items_of(&rule, 1, &items));
    assert_eq!(a.len() + c.len(), 7);
    assert!(items_of(&rule, 9, &items).is_empty(), "someone outside the pairs gets nothing");
    assert_eq!(rule.primary_of_pair("u3"), Some("u2"));
    assert_eq!(rule.named_annotators().unwrap(), ["u0", "u1", "u2", "u3"]);
}

#[test]
fn each_annotator_gets_every_item_exactly_once() {
    let plan = plan(&AssignmentRule::EachAnnotatorAll, 7, 1, &items());
    let mut got: Vec<i64> = plan.iter().map(|t| t.item).collect();
    got.sort();
    assert_eq!(got, items());
    let positions: Vec<i64> = plan.iter().map(|t| t.position).collect();
    assert_eq!(positions, (0..60).collect::<Vec<_>>());
}

#[test]
fn order_differs_between_annotators_and_is_reproducible() {
    let rule = AssignmentRule::EachAnnotatorAll;
    let a = plan(&rule, 7, 1, &items());
    let b = plan(&rule, 7, 2, &items());
    assert_ne!(a, b);
    assert_eq!(a, plan(&rule, 7, 1, &items()));
    assert_ne!(a, plan(&rule, 8, 1, &items()));
}

#[test]
fn option_seeds_are_stable_per_item_and_fit_in_sqlite_integer() {
    let rule = AssignmentRule::EachAnnotatorAll;
    let a = plan(&rule, 7, 1, &items());
    let b = plan(&rule, 7, 1, &items()[..30]);
    for t in &b {
        assert!(a.contains(&PlannedTask { position: a.iter().find(|x| x.item == t.item).unwrap().position, ..*t }));
    }
    assert!(a.iter().all(|t| t.seed <= i64::MAX as u64));
}

#[test]
fn questions_asked_together_come_one_after_the_other_with_the_items_seed() {
    // Two questions asked together, as A/B/Tie's (`kinds::ab_tie`).
    const AB_TIE: &[&[u8]] = &[&[0, 1]];
    for rule in [AssignmentRule::EachAnnotatorAll, pairs_rule(2, 3)] {
        let single = plan(&rule, 5, 1, &items());
        let plan = rule.plan_upfront(AB_TIE, 5, 1, "u1", &si(&items()));
        assert_eq!(plan.len(), 2 * single.len());
        assert_eq!(rule.planned_len(AB_TIE, 5, "u1", &si(&items())), plan.len());
        for (pair, one) in plan.chunks(2).zip(&single) {
            assert_eq!((pair[0].item, pair[1].item, pair[0].query, pair[1].query), (one.item, one.item, 0, 1));
            assert_eq!((pair[0].seed, pair[1].seed), (one.seed, one.seed), "same option places");
            assert_eq!(pair[1].position, pair[0].position + 1);
        }
    }
}

#[test]
fn empty_study_plans_nothing() {
    assert!(plan(&AssignmentRule::EachAnnotatorAll, 1, 1, &[]).is_empty());
}

#[test]
fn named_annotators_admit_only_their_names() {
    let named = Annotators::Named(vec!["ana".into(), "bo".into()]);
    assert!(named.admits("bo"));
    assert!(!named.admits("cy"));
    assert!(Annotators::All.admits("anyone"));
    let all_but = Annotators::AllBut(vec!["writer".into()]);
    assert!(all_but.admits("anyone") && !all_but.admits("writer"));
}

#[test]
fn planned_len_is_the_length_of_the_plan_for_every_rule_and_annotator() {
    let items: Vec<i64> = (100..124).collect();
    let names: Vec<String> = (0..6).map(|i| format!("u{i}")).collect();
    let rules = [
        AssignmentRule::EachAnnotatorAll,
        AssignmentRule::Pairs { pairs: vec![["u0".into(), "u1".into()], ["u2".into(), "u3".into()]], overlap: 5 },
        AssignmentRule::Groups { size: 5, roster: names[..5].to_vec() },
        AssignmentRule::StratifiedSample { per_subset: 2, subsets: None },
    ];
    for rule in &rules {
        for (i, who) in names.iter().enumerate() {
            let want = rule.plan_upfront(BASELINE, 7, i as i64, who, &si(&items)).len();
            assert_eq!(rule.planned_len(BASELINE, 7, who, &si(&items)), want, "{rule:?} {who}");
        }
    }
    // The baseline's group of 5 instances is 20 questions, not 5 or 24.
    assert_eq!(rules[2].planned_len(BASELINE, 7, "u4", &si(&items)), 4 * 4, "24 items in groups of 5: the last has 4");
    assert_eq!(rules[2].planned_len(BASELINE, 7, "u0", &si(&items)), 20);
}

#[test]
fn a_stratified_sample_is_each_persons_own_asked_like_each_annotator_all() {
    let items = si(&(0..70).collect::<Vec<_>>()); // 10 of each of the 7 subsets
    let rule = AssignmentRule::StratifiedSample { per_subset: 3, subsets: Some(Category::ALL[..5].to_vec()) };
    let of = |who: &str, annotator: i64| rule.plan_upfront(&[&[0]], 4, annotator, who, &items);
    let ana = of("ana", 1);
    assert_eq!(ana.len(), 15);
    for c in &Category::ALL[..5] {
        assert_eq!(ana.iter().filter(|t| items[t.item as usize].subset == *c).count(), 3, "{c}");
    }
    let set = |plan: &[PlannedTask]| plan.iter().map(|t| t.item).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(set(&ana), set(&of("ana", 99)), "the sample goes by the person's name, not the account id");
    assert_ne!(set(&ana), set(&of("bo", 2)));
    assert_eq!(ana, of("ana", 1), "the same plan on every start");
    assert_eq!(rule.planned_len(&[&[0, 1]], 4, "ana", &items), 30, "two questions together per item");
    assert_eq!((rule.named_annotators(), rule.primary_of_pair("ana")), (None, None));
    // Stored as JSON with the study and read back.
    let json = serde_json::to_string(&rule).unwrap();
    assert_eq!(serde_json::from_str::<AssignmentRule>(&json).unwrap(), rule);
}
