use super::*;
use crate::domain::category::{NegType, Subtype};

#[test]
fn sign_test_matches_hand_worked_binomial_tails() {
    // 2 of 10: P(X <= 2) = (1 + 10 + 45) / 1024 = 56/1024; two-sided 112/1024.
    assert!((sign_test(2, 10) - 112.0 / 1024.0).abs() < 1e-12);
    assert!((sign_test(8, 10) - 112.0 / 1024.0).abs() < 1e-12, "symmetric");
    // 0 of 5: 2 * 1/32.
    assert!((sign_test(0, 5) - 0.0625).abs() < 1e-12);
    // 15 of 20: P(X >= 15) = (15504 + 4845 + 1140 + 190 + 20 + 1) / 2^20 = 21700 / 1048576.
    assert!((sign_test(15, 20) - 2.0 * 21700.0 / 1048576.0).abs() < 1e-12);
    // The middle is capped at 1: 3 of 6 gives 2 * 42/64 > 1.
    assert_eq!(sign_test(3, 6), 1.0);
    assert_eq!(sign_test(0, 0), 1.0);
    // Large n stays finite: 500 of 1000 is 1, 400 of 1000 is far below 1e-9.
    assert_eq!(sign_test(500, 1000), 1.0);
    let p = sign_test(400, 1000);
    assert!(p > 0.0 && p < 1e-9, "{p}");
}

/// `scipy.stats.binomtest(k, n, 0.5).pvalue` (two-sided, exact), scipy
/// 1.17.1, computed once and written down here.
#[test]
fn sign_test_equals_scipy_binomtest() {
    let scipy = [
        (4, 4, 0.125),
        (1, 14, 0.0018310546875),
        (2, 9, 0.1796875),
        (3, 5, 1.0),
        (0, 2, 0.5),
        (5, 12, 0.7744140625),
        (30, 52, 0.3317497633694906),
        (113, 200, 0.07683763213126037),
        (40, 100, 0.05688793364098089),
        (150, 400, 6.531819212838477e-07),
        (0, 30, 1.862645149230957e-09),
    ];
    for (k, n, p) in scipy {
        let got = sign_test(k, n);
        assert!((got - p).abs() <= 1e-12 * p.max(1e-300) + 1e-15, "{k} of {n}: {got} vs scipy {p}");
    }
}

fn j(item: i64, c: Category, criterion: &str, better: Option<&str>) -> Judgement {
    Judgement { item, category: c, criterion: criterion.into(), better: better.map(str::to_string), sources: vec![] }
}

const OBJ: Category = Category { neg_type: NegType::Replace, subtype: Subtype::Obj };
const SWAP_ATT: Category = Category { neg_type: NegType::Swap, subtype: Subtype::Att };
const ADD_OBJ: Category = Category { neg_type: NegType::Add, subtype: Subtype::Obj };

#[test]
fn rows_per_subset_then_per_type_then_overall_with_paper_labels() {
    let js = vec![
        j(1, OBJ, "grammar", Some("SugarCrepe")),
        j(2, SWAP_ATT, "grammar", Some("ARO")),
        j(3, ADD_OBJ, "grammar", None),
        j(2, SWAP_ATT, "commonsense", Some("SugarCrepe")),
    ];
    let rows = preference_table(&js, &["commonsense", "grammar"]);
    let shape: Vec<(&str, &str)> = rows.iter().map(|r| (r.criterion.as_str(), r.label.as_str())).collect();
    assert_eq!(
        shape,
        [
            ("commonsense", "swap/att"),
            ("commonsense", "SWAP"),
            ("commonsense", "all"),
            ("grammar", "replace/obj"),
            ("grammar", "swap/att"),
            ("grammar", "add/obj"),
            ("grammar", "REPLACE"),
            ("grammar", "SWAP"),
            ("grammar", "NEGATE/ADD"),
            ("grammar", "all"),
        ]
    );
    let g = &rows[3..];
    assert_eq!((g[0].neg_type, g[0].subset), (Some(NegType::Replace), Some(OBJ)));
    assert_eq!((g[3].neg_type, g[3].subset), (Some(NegType::Replace), None));
    assert_eq!((g[5].neg_type, g[5].subset), (Some(NegType::Add), None));
    assert_eq!((g[6].neg_type, g[6].subset), (None, None));
    // commonsense knows one source only: no test.
    assert_eq!(rows[0].sources, [SourceCount { source: "SugarCrepe".into(), better: 1, items: 1 }]);
    assert_eq!(rows[0].sign_test_p, None);
}

#[test]
fn several_raters_on_an_item_are_one_vote_not_several() {
    // Three raters on each of four items, all for SugarCrepe: 12 answers, 4 items.
    let js: Vec<Judgement> = (1..=4)
        .flat_map(|item| vec![j(item, OBJ, "grammar", Some("SugarCrepe")); 3])
        .chain([j(9, OBJ, "grammar", Some("ARO"))])
        .collect();
    let all = preference_table(&js, &["grammar"]).pop().unwrap();
    assert_eq!((all.answers, all.items, all.items_tied, all.n), (13, 5, 0, 5));
    assert_eq!(all.sources[1], SourceCount { source: "SugarCrepe".into(), better: 12, items: 4 });
    // scipy.stats.binomtest(1, 5).pvalue = 0.375; pooled, 1 of 13 would give 0.00342.
    assert!((all.sign_test_p.unwrap() - 0.375).abs() < 1e-12, "{:?}", all.sign_test_p);
}

#[test]
fn an_items_vote_is_its_outcome_given_most_often_else_it_is_dropped_as_tied() {
    let (a, b) = (Some("A"), Some("B"));
    let votes: [&[Option<&str>]; 7] = [
        &[a, a, None],    // A
        &[b, None, b, a], // B
        &[a, b, None],    // no leader: dropped
        &[a, None, None], // Tie majority: dropped
        &[a, b],          // split: dropped
        &[None],          // all Tie: dropped
        &[a],             // one rater: A
    ];
    let js: Vec<Judgement> = votes
        .iter()
        .enumerate()
        .flat_map(|(i, vs)| vs.iter().map(move |v| j(i as i64, SWAP_ATT, "grammar", *v)))
        .collect();
    let all = preference_table(&js, &["grammar"]).pop().unwrap();
    assert_eq!((all.items, all.items_tied, all.n, all.answers, all.ties), (7, 4, 3, 17, 6));
    let items: Vec<(&str, usize, usize)> = all.sources.iter().map(|s| (s.source.as_str(), s.better, s.items)).collect();
    assert_eq!(items, [("A", 7, 2), ("B", 4, 1)]);
    // binomtest(2, 3).pvalue = 1.0.
    assert_eq!(all.sign_test_p, Some(1.0));
}

#[test]
fn type_rows_pool_their_subsets_items() {
    let replace_att = Category { neg_type: NegType::Replace, subtype: Subtype::Att };
    let mut js: Vec<Judgement> = (0..6).map(|i| j(i, OBJ, "grammar", Some("S"))).collect();
    js.extend((6..10).map(|i| j(i, replace_att, "grammar", Some("S"))));
    js.extend((10..13).map(|i| j(i, replace_att, "grammar", Some("T"))));
    let rows = preference_table(&js, &["grammar"]);
    let replace = rows.iter().find(|r| r.label == "REPLACE").unwrap();
    assert_eq!((replace.n, replace.sources[0].items, replace.sources[1].items), (13, 10, 3));
    // scipy.stats.binomtest(10, 13).pvalue = 0.09228515625.
    assert!((replace.sign_test_p.unwrap() - 0.09228515625).abs() < 1e-12);
    let att = rows.iter().find(|r| r.subset == Some(replace_att)).unwrap();
    assert_eq!((att.n, att.sources[0].items), (7, 4));
}

#[test]
fn a_source_nobody_chose_is_still_a_source_of_the_test() {
    let mut js: Vec<Judgement> = (0..5).map(|i| j(i, OBJ, "grammar", Some("SugarCrepe"))).collect();
    for x in &mut js {
        x.sources = vec!["SugarCrepe".into(), "ARO".into()];
    }
    let all = preference_table(&js, &["grammar"]).pop().unwrap();
    assert_eq!(all.sources[0], SourceCount { source: "ARO".into(), better: 0, items: 0 });
    // scipy.stats.binomtest(0, 5).pvalue = 0.0625.
    assert_eq!(all.sign_test_p, Some(0.0625));
}
