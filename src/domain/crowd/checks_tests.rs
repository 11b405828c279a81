use super::*;
use crate::domain::crowd::spec::{parse_access, LinkSpec};
use std::collections::HashSet;

const VALUES: &[&str] = &["0", "1", "2", "3", "none"];
const OK: &str = "bundle_size = 5\nconsent = \"ok\"\n";

fn parse(extra: &str) -> Result<CheckSettings, String> {
    let l: LinkSpec = toml::from_str(&format!("{OK}{extra}")).map_err(|e| e.to_string())?;
    parse_access(Some("link"), Some(l), VALUES).map(|s| s.unwrap().checks).map_err(|e| e.to_string())
}

#[test]
fn no_checks_by_default_and_two_failures_screen_out() {
    let c = parse("").unwrap();
    assert_eq!(c, CheckSettings::default());
    assert_eq!((c.attention_checks, c.max_failed_checks), (0, 2));
    assert!(c.gold.is_empty() && c.comprehension.is_empty() && !c.screens_out());
    assert_eq!(c.screen_out_url, "https://app.prolific.com/submissions/complete?cc={code}");
    // Settings stored before checks existed still read.
    let old = r#"{"bundle_size":5,"copies":1,"paired_bundles":0,"time_limit_minutes":60,"consent":"ok",
        "completion_code":null,"completion_url":"http://x/{code}","full_code":null,"allow_anonymous":false,"practice":[]}"#;
    let s: crate::domain::crowd::spec::LinkSettings = serde_json::from_str(old).unwrap();
    assert_eq!(s.checks, CheckSettings::default());
}

#[test]
fn every_check_field_given() {
    let c = parse(
        r#"gold = [{ key = "demo-001", answer = "2" }, { key = "demo-002" }]
attention_checks = 3
max_failed_checks = 2
screen_out_code = "SCREEN01"
screen_out_url = "http://127.0.0.1:9/out?cc={code}"
comprehension = [{ question = "When does None apply?", options = ["never", "no image fits"], answer = "no image fits" }]"#,
    )
    .unwrap();
    assert_eq!(c.gold[0], GoldSpec { key: "demo-001".into(), answer: Some("2".into()) });
    assert_eq!(c.gold[1].answer, None, "the known truth, at creation");
    assert_eq!((c.attention_checks, c.max_failed_checks), (3, 2));
    assert_eq!(c.screen_out_code.as_deref(), Some("SCREEN01"));
    assert_eq!(c.comprehension[0].options.len(), 2);
    assert!(c.screens_out());
}

#[test]
fn check_errors_name_the_field() {
    let cases = [
        ("gold = [{ key = \"k\", answer = \"E\" }]", "field `link.gold`: item 1 (k): answer \"E\" is not one of"),
        ("gold = [{ key = \"k\" }, { key = \"k\" }]", "field `link.gold`: item 2 (k): listed twice"),
        ("gold = [{ key = \" \" }]", "field `link.gold`: item 1: key is empty"),
        ("attention_checks = 11", "field `link.attention_checks`: at most 10"),
        ("attention_checks = 2\nmax_failed_checks = 0", "field `link.max_failed_checks`: must be at least 1"),
        ("attention_checks = 1", "field `link.max_failed_checks`: is 2, but a bundle has only 1"),
        ("screen_out_code = \"a b\"", "field `link.screen_out_code`"),
        ("completion_code = \"SAME1\"\nscreen_out_code = \"SAME1\"", "field `link.screen_out_code`: must differ"),
        ("screen_out_url = \"ftp://x\"", "field `link.screen_out_url`"),
        (
            "comprehension = [{ question = \"q\", options = [\"a\"], answer = \"a\" }]",
            "field `link.comprehension`: question 1",
        ),
    ];
    for (extra, want) in cases {
        let got = parse(extra).unwrap_err();
        assert!(got.starts_with(want), "{extra}: {got:?} should start with {want:?}");
    }
    assert!(parse("attention_checks = 1\nmax_failed_checks = 1").is_ok());
    assert!(parse("gold = [{ key = \"k\", answer = \"2\", extra = 1 }]").is_err(), "unknown fields refused");
    // A kind whose answers are orders (no fixed values) says so, not "is not one of" and nothing.
    let orders = |extra: &str| {
        let l: LinkSpec = toml::from_str(&format!("{OK}{extra}")).unwrap();
        parse_access(Some("link"), Some(l), &[]).unwrap_err().to_string()
    };
    for (extra, key) in [
        ("gold = [{ key = \"1\", answer = \"1,0\" }]", "link.gold"),
        ("practice = [{ key = \"1\", answer = \"1,0\" }]", "link.practice"),
    ] {
        let got = orders(extra);
        assert!(got.starts_with(&format!("field `{key}`: this kind's answers are orders")), "{got}");
    }
}

fn queue(items: &[i64]) -> Vec<PlannedTask> {
    crate::domain::crowd::bundle_queue(5, 3, &[&[0]], items)
}

#[test]
fn checks_never_repeat_an_item_of_the_bundle() {
    let items: Vec<i64> = (1..=40).collect();
    let bundle: Vec<i64> = (1..=10).collect();
    let gold = [(5, "none".to_string()), (20, "2".to_string()), (21, "0".to_string())];
    for participant in 1..30 {
        let c = choose_checks(9, participant, &gold, 3, VALUES, &items, &bundle);
        let gold_in: Vec<i64> = c.iter().filter(|c| c.kind == CheckKind::Gold).map(|c| c.instance).collect();
        assert_eq!(gold_in, [20, 21], "gold item 5 is a real item of this bundle");
        let attention: Vec<&CheckItem> = c.iter().filter(|c| c.kind == CheckKind::Attention).collect();
        assert_eq!(attention.len(), 3);
        for a in &attention {
            assert!(!bundle.contains(&a.instance) && a.instance != 20 && a.instance != 21, "{a:?}");
            assert!(VALUES.contains(&a.answer.as_str()));
        }
        assert_eq!(c.iter().map(|c| c.instance).collect::<HashSet<_>>().len(), 5, "distinct items");
    }
    // Seeded by study and participant; participants differ.
    let a = choose_checks(9, 1, &gold, 3, VALUES, &items, &bundle);
    assert_eq!(a, choose_checks(9, 1, &gold, 3, VALUES, &items, &bundle));
    let many: HashSet<Vec<i64>> = (1..20)
        .map(|p| choose_checks(9, p, &[], 3, VALUES, &items, &bundle).iter().map(|c| c.instance).collect())
        .collect();
    assert!(many.len() > 10, "only {} distinct draws", many.len());
    // Too few items outside the bundle: as many as there are.
    assert_eq!(choose_checks(9, 1, &[], 3, VALUES, &bundle, &bundle), []);
}

#[test]
fn checks_go_to_seeded_positions_after_the_first_and_real_tasks_keep_their_order() {
    let bundle: Vec<i64> = (100..120).collect();
    let real = queue(&bundle);
    let checks: Vec<CheckItem> =
        (0..4).map(|k| CheckItem { instance: 900 + k, kind: CheckKind::Attention, answer: "1".into() }).collect();
    let placed = place_checks(7, 3, real.clone(), checks.clone(), &[0]);
    assert_eq!(placed.len(), 24);
    assert_eq!(placed.iter().map(|(t, _)| t.position).collect::<Vec<_>>(), (0..24).collect::<Vec<_>>());
    assert!(placed[0].1.is_none(), "a real item comes first");
    let real_after: Vec<(i64, u64)> =
        placed.iter().filter(|(_, c)| c.is_none()).map(|(t, _)| (t.item, t.seed)).collect();
    assert_eq!(real_after, real.iter().map(|t| (t.item, t.seed)).collect::<Vec<_>>());
    let placed_checks: Vec<&CheckItem> = placed.iter().filter_map(|(_, c)| c.as_ref()).collect();
    assert_eq!(placed_checks, checks.iter().collect::<Vec<_>>());
    for (t, c) in &placed {
        if let Some(c) = c {
            assert_eq!((t.item, t.query), (c.instance, 0));
            assert!(t.seed <= i64::MAX as u64);
        }
    }
    // Seeded: the same again, elsewhere for another participant or study.
    let at = |p: &[(PlannedTask, Option<CheckItem>)]| -> Vec<i64> {
        p.iter().filter(|(_, c)| c.is_some()).map(|(t, _)| t.position).collect()
    };
    assert_eq!(at(&placed), at(&place_checks(7, 3, real.clone(), checks.clone(), &[0])));
    let spots: HashSet<Vec<i64>> =
        (0..20).map(|s| at(&place_checks(s, 3, real.clone(), checks.clone(), &[0]))).collect();
    assert!(spots.len() > 15, "only {} distinct placements", spots.len());
    // Edge cases: no checks, a queue of one.
    assert_eq!(place_checks(7, 3, real.clone(), vec![], &[0]).len(), 20);
    let one = place_checks(7, 3, queue(&[100]), checks[..2].to_vec(), &[0]);
    assert_eq!(one.iter().map(|(_, c)| c.is_some()).collect::<Vec<_>>(), [false, true, true]);
}

#[test]
fn checks_never_split_the_questions_one_item_asks_together() {
    // A/B/Tie: each item's commonsense and grammar questions, adjacent.
    let items: Vec<i64> = (0..12).collect();
    let real = crate::domain::crowd::bundle_queue(5, 3, &[&[0, 1]], &items);
    let checks: Vec<CheckItem> =
        (0..4).map(|k| CheckItem { instance: 900 + k, kind: CheckKind::Attention, answer: "1".into() }).collect();
    for seed in 0..40 {
        let placed = place_checks(seed, 3, real.clone(), checks.clone(), &[0, 1]);
        assert_eq!(placed.len(), 28);
        assert_eq!(placed.iter().map(|(t, _)| t.position).collect::<Vec<_>>(), (0..28).collect::<Vec<_>>());
        for (k, (t, c)) in placed.iter().enumerate() {
            if t.query == 1 {
                let (before, none) = &placed[k - 1];
                assert!(none.is_none() && c.is_none(), "seed {seed}: a check between one item's questions");
                assert_eq!((before.item, before.query), (t.item, 0));
            }
        }
        let kept: Vec<PlannedTask> = placed.iter().filter(|(_, c)| c.is_none()).map(|(t, _)| *t).collect();
        let order = |q: &[PlannedTask]| q.iter().map(|t| (t.item, t.query, t.seed)).collect::<Vec<_>>();
        assert_eq!(order(&kept), order(&real), "real tasks keep their order");
    }
}

#[test]
fn checks_stay_in_the_first_part_whose_question_they_ask() {
    // The human baseline: image-to-text (queries 0, 1), then text-to-image (2, 3).
    let items: Vec<i64> = (0..9).collect();
    let real = crate::domain::crowd::bundle_queue(5, 3, &[&[0, 1], &[2, 3]], &items);
    let checks: Vec<CheckItem> =
        (0..3).map(|k| CheckItem { instance: 900 + k, kind: CheckKind::Attention, answer: "1".into() }).collect();
    let (mut last_spots, mut ends) = (HashSet::new(), vec![]);
    for seed in 0..60 {
        let placed = place_checks(seed, 3, real.clone(), checks.clone(), &[0, 1]);
        assert_eq!(placed.len(), 39);
        let second = placed.iter().position(|(t, _)| t.query >= 2).expect("a second part");
        let spots: Vec<usize> = placed.iter().enumerate().filter(|(_, (_, c))| c.is_some()).map(|(k, _)| k).collect();
        assert_eq!(spots.len(), 3);
        assert!(
            spots.iter().all(|&k| k > 0 && k < second),
            "seed {seed}: a check at {spots:?}, part two from {second}"
        );
        assert!(placed.iter().filter(|(_, c)| c.is_some()).all(|(t, _)| t.query == 0));
        let kept: Vec<PlannedTask> = placed.iter().filter(|(_, c)| c.is_none()).map(|(t, _)| *t).collect();
        let order = |q: &[PlannedTask]| q.iter().map(|t| (t.item, t.query, t.seed)).collect::<Vec<_>>();
        assert_eq!(order(&kept), order(&real), "real tasks keep their order");
        last_spots.insert(*spots.last().unwrap());
        ends.push(second - 1);
    }
    // Seeded spread over the part, up to its end.
    assert!(last_spots.len() > 5, "only {last_spots:?}");
    assert!(ends.iter().any(|e| last_spots.contains(e)), "never right after the part's last item: {last_spots:?}");
}
