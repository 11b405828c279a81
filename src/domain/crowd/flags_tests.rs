use super::*;

const Q: QualitySettings =
    QualitySettings { min_seconds_per_item: 2.0, straight_line_run: 4, hourly_wage: 12.0, platform_fee: 0.0 };

fn a(person: u64, item: u64, order: i64, shown: u32, value: u32, ms: i64) -> Answer {
    Answer { person, item, order, shown, value, elapsed_ms: ms, check: Check::None }
}

fn with(check: Check, x: Answer) -> Answer {
    Answer { check, ..x }
}

#[test]
fn medians() {
    assert_eq!(median(&mut []), None);
    assert_eq!(median(&mut [3.0]), Some(3.0));
    assert_eq!(median(&mut [5.0, 1.0, 3.0]), Some(3.0));
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
}

#[test]
fn runs_and_majorities() {
    assert_eq!(longest_run([].into_iter()), 0);
    assert_eq!(longest_run([1, 1, 2, 2, 2, 1].into_iter()), 3);
    assert_eq!(longest_run([7].into_iter()), 1);
    let marked = [(1, false), (1, true), (2, true), (1, false), (1, false), (3, false)];
    assert_eq!(longest_run_skipping(marked.into_iter()), 3, "a skipped value neither ends nor extends a run");
    assert_eq!(majority_without(&[(1, 3), (2, 1)], Some(2)), Some(1));
    assert_eq!(majority_without(&[(1, 2), (2, 2)], Some(2)), Some(1), "own answer taken out breaks the tie");
    assert_eq!(majority_without(&[(1, 2), (2, 2), (3, 1)], Some(3)), None, "a tie among the others");
    assert_eq!(majority_without(&[(1, 1)], Some(1)), None, "nobody else answered");
    assert_eq!(majority_without(&[(1, 1), (2, 1)], Some(1)), Some(2));
    assert_eq!(majority_without(&[(1, 1)], None), Some(1), "an answer that is not counted takes nothing out");
}

#[test]
fn a_careful_participant_has_no_flags() {
    // Person 1 answers 6 items in 3 s each, varied, like the others (2 and 3).
    let mut all = Vec::new();
    for item in 0..6u64 {
        let v = (item % 3) as u32;
        all.push(a(1, item, item as i64, v, v, 3000));
        all.push(a(2, item, item as i64, v, v, 2500));
        all.push(a(3, item, item as i64, v + 1, v, 4000));
    }
    let f = person_flags(&all, &Q);
    assert_eq!(f.iter().map(|p| p.person).collect::<Vec<_>>(), [1, 2, 3]);
    let p = &f[0];
    assert_eq!((p.answers, p.median_secs_per_item, p.shared_items, p.agreement), (6, Some(3.0), 6, Some(1.0)));
    assert_eq!((p.gold_answered, p.gold_accuracy, p.checks_answered, p.checks_failed), (0, None, 0, 0));
    assert_eq!((p.longest_same_position, p.longest_same_option), (1, 1));
    assert!(f.iter().all(|p| p.flags.is_empty()), "{f:?}");
    assert_eq!(suggest(Submission::Finished, 0, &p.flags, Some(600.0)), (Decision::Approve, String::new()));
}

#[test]
fn too_fast_is_a_median_under_the_minimum() {
    // Median of 1.0, 1.5, 9.0 s is 1.5 < 2.0; exactly the minimum is not too fast.
    let fast = [a(1, 0, 0, 0, 0, 1000), a(1, 1, 1, 1, 1, 9000), a(1, 2, 2, 2, 2, 1500)];
    assert_eq!(person_flags(&fast, &Q)[0].flags, [Flag::TooFast]);
    let edge = [a(1, 0, 0, 0, 0, 2000), a(1, 1, 1, 1, 1, 2000)];
    assert!(person_flags(&edge, &Q)[0].flags.is_empty());
}

#[test]
fn straight_lining_is_by_position_in_answer_order() {
    // Same position A four times in a row (values differ: the options were shuffled).
    let by_position: Vec<Answer> = (0..4).map(|i| a(1, i, i as i64, 0, i as u32, 3000)).collect();
    let p = &person_flags(&by_position, &Q)[0];
    assert_eq!((p.longest_same_position, p.longest_same_option), (4, 1));
    assert_eq!(p.flags, [Flag::StraightLining]);
    // Same stored value four times at varying positions: an odd-one-out's
    // right answer is always `negative`, so the best workers do this.
    let by_option: Vec<Answer> = (0..4).map(|i| a(1, i, i as i64, i as u32, 9, 3000)).collect();
    let p = &person_flags(&by_option, &Q)[0];
    assert_eq!((p.longest_same_option, p.flags.as_slice()), (4, &[][..]));
    // Three in a row is under the run of 4; the queue order counts, not the input order.
    let mut three: Vec<Answer> =
        [0, 0, 0, 1, 0, 0, 0].iter().enumerate().map(|(i, &s)| a(1, i as u64, i as i64, s, s, 3000)).collect();
    three.reverse();
    assert!(person_flags(&three, &Q)[0].flags.is_empty());
    let mut shuffled: Vec<Answer> = (0..4).map(|i| a(1, i, i as i64 * 2, 0, 0, 3000)).collect();
    shuffled.push(a(1, 9, 3, 1, 1, 3000)); // placed between the 2nd and 3rd by order
    assert_eq!(person_flags(&shuffled, &Q)[0].longest_same_position, 2);
}

/// Most truths at one place (four_image's None): a careful person's
/// long run there agrees with the others item by item and is no
/// straight-lining; one who clicks that place whatever the item still is.
#[test]
fn a_run_the_items_explain_is_no_straight_lining() {
    let mut all = Vec::new();
    for item in 0..20u64 {
        let (truth, place) = if item % 5 == 2 { (1, 1) } else { (4, 4) };
        for other in [2, 3] {
            all.push(a(other, item, item as i64, place, truth, 3000));
        }
        all.push(a(1, item, item as i64, place, truth, 3000));
        all.push(a(9, item, item as i64, 4, 4, 3000));
    }
    all.push(with(Check::Gold { correct: true }, a(1, 100, 50, 4, 4, 3000)));
    let f = person_flags(&all, &Q);
    let careful = f.iter().find(|p| p.person == 1).unwrap();
    assert_eq!(careful.longest_same_position, 4, "the run is still shown");
    assert!(careful.flags.is_empty(), "{careful:?}");
    let clicker = f.iter().find(|p| p.person == 9).unwrap();
    assert!(clicker.flags.contains(&Flag::StraightLining), "{clicker:?}");
}

#[test]
fn gold_and_attention_checks() {
    let all = [
        with(Check::Gold { correct: true }, a(1, 100, 0, 0, 0, 3000)),
        with(Check::Gold { correct: false }, a(1, 101, 1, 1, 1, 3000)),
        with(Check::Gold { correct: false }, a(1, 102, 2, 2, 2, 3000)),
        with(Check::Attention { correct: false }, a(1, 103, 3, 3, 3, 3000)),
        with(Check::Attention { correct: true }, a(1, 104, 4, 0, 0, 3000)),
        a(1, 0, 5, 1, 1, 3000),
    ];
    let p = &person_flags(&all, &Q)[0];
    assert_eq!(p.answers, 1, "check items are not answers");
    assert_eq!((p.gold_answered, p.gold_correct), (3, 1));
    assert!((p.gold_accuracy.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!((p.checks_answered, p.checks_failed), (2, 1));
    assert_eq!(p.flags, [Flag::FailedCheck, Flag::LowGoldAccuracy]);
    // Gold at exactly half is not low.
    let half = [
        with(Check::Gold { correct: true }, a(1, 100, 0, 0, 0, 3000)),
        with(Check::Gold { correct: false }, a(1, 101, 1, 1, 1, 3000)),
    ];
    assert!(person_flags(&half, &Q)[0].flags.is_empty());
}

#[test]
fn check_items_do_not_enter_the_majority() {
    // Person 2 and 3 "answer" item 5 as a gold item with value 4: no majority for person 1.
    let all = [
        a(1, 5, 0, 0, 0, 3000),
        with(Check::Gold { correct: true }, a(2, 5, 0, 4, 4, 3000)),
        with(Check::Gold { correct: true }, a(3, 5, 0, 4, 4, 3000)),
    ];
    let p = &person_flags(&all, &Q)[0];
    assert_eq!((p.shared_items, p.agreement), (0, None));
}

#[test]
fn low_agreement_needs_enough_shared_items() {
    // Persons 2 and 3 agree on value 0 for items 0..n; person 1 differs on all but item 0.
    let build = |n: u64| {
        let mut all = Vec::new();
        for item in 0..n {
            all.push(a(
                1,
                item,
                item as i64,
                (item % 2) as u32,
                if item == 0 { 0 } else { 1 + (item % 2) as u32 },
                3000,
            ));
            all.push(a(2, item, item as i64, (item % 3) as u32, 0, 3000));
            all.push(a(3, item, item as i64, (item % 3) as u32, 0, 3000));
        }
        person_flags(&all, &Q)
    };
    let five = build(5);
    assert_eq!((five[0].shared_items, five[0].agreement), (5, Some(0.2)));
    assert_eq!(five[0].flags, [Flag::LowAgreement]);
    // Person 2's others (1 and 3) tie except on item 0, where both say 0.
    assert_eq!((five[1].shared_items, five[1].agreement), (1, Some(1.0)));
    let four = build(4);
    assert_eq!(four[0].agreement, Some(0.25));
    assert!(four[0].flags.is_empty(), "4 shared items are too few to flag");
}

#[test]
fn untimed_answers_are_left_out_of_the_median() {
    // Two answers nobody timed (0 ms) and two of 3 s: the median is 3 s, not fast.
    let all: Vec<Answer> = [0, 0, 3000, 3000]
        .iter()
        .enumerate()
        .map(|(i, &ms)| a(1, i as u64, i as i64, i as u32, i as u32, ms))
        .collect();
    let p = &person_flags(&all, &Q)[0];
    assert_eq!((p.median_secs_per_item, p.flags.as_slice()), (Some(3.0), &[][..]));
    let untimed: Vec<Answer> = (0..3).map(|i| a(1, i, i as i64, i as u32, i as u32, 0)).collect();
    assert_eq!(person_flags(&untimed, &Q)[0].median_secs_per_item, None);
}

#[test]
fn only_answers_that_count_make_a_majority() {
    // Persons 1-3 (who count) agree on every item; persons 4-6 (screened
    // out, say) agree on another value every time, and outnumber them.
    let mut all = Vec::new();
    for item in 0..5u64 {
        let right = (item % 3) as u32;
        for (person, value) in [(1, right), (2, right), (3, right), (4, right + 1), (5, right + 1), (6, right + 1)] {
            all.push(a(person, item, item as i64, value, value, 3000));
        }
    }
    let everyone = person_flags(&all, &Q);
    assert_eq!((everyone[0].agreement, everyone[0].flags.as_slice()), (Some(0.0), &[Flag::LowAgreement][..]));
    let others = Others { not_counted: [4, 5, 6].into(), orders: false };
    let f = person_flags_among(&all, &Q, &others);
    assert_eq!((f[0].shared_items, f[0].agreement), (5, Some(1.0)));
    assert!(f[0].flags.is_empty());
    // One who does not count is measured against those who do, their own answer not among them.
    assert_eq!((f[3].shared_items, f[3].agreement, f[3].flags.as_slice()), (5, Some(0.0), &[Flag::LowAgreement][..]));
    // Orders are not categories: no agreement at all.
    let orders = person_flags_among(&all, &Q, &Others { orders: true, ..others });
    assert!(orders.iter().all(|p| p.shared_items == 0 && p.agreement.is_none() && p.flags.is_empty()));
}

#[test]
fn suggested_decisions() {
    use Decision as D;
    let none: &[Flag] = &[];
    assert_eq!(suggest(Submission::Working, 3, none, Some(900.0)).0, D::Wait);
    assert_eq!(suggest(Submission::Returned, 0, none, Some(900.0)).0, D::None);
    assert_eq!(suggest(Submission::Unfinished, 0, none, Some(900.0)), (D::Review, "did not finish in time".into()));
    let failed = [Flag::FailedCheck];
    // Two failed checks in a study of at least 5 minutes: reject, with Prolific's reason.
    assert_eq!(suggest(Submission::Finished, 2, &failed, Some(300.0)), (D::Reject, REJECT_REASON.to_string()));
    assert_eq!(suggest(Submission::Finished, 3, &failed, Some(1800.0)).0, D::Reject);
    // A shorter study, or one with no finished bundle yet: review only.
    let (d, why) = suggest(Submission::Finished, 2, &failed, Some(299.0));
    assert_eq!(d, D::Review);
    assert!(why.starts_with("failed_check; the study is under 5 minutes"), "{why}");
    assert_eq!(suggest(Submission::Finished, 2, &failed, None).0, D::Review);
    // One failed check, or any other flag: review, listing the flags.
    assert_eq!(suggest(Submission::Finished, 1, &failed, Some(900.0)), (D::Review, "failed_check".into()));
    assert_eq!(
        suggest(Submission::Finished, 0, &[Flag::TooFast, Flag::StraightLining], Some(900.0)),
        (D::Review, "too_fast; straight_lining".into())
    );
    assert_eq!(D::Reject.as_str(), "reject");
    assert_eq!(Flag::LowGoldAccuracy.as_str(), "low_gold_accuracy");
}

#[test]
fn a_study_advertised_under_five_minutes_is_short_however_long_people_took() {
    assert_eq!(study_length(Some(420.0), Some(180.0)), Some(180.0));
    assert_eq!(study_length(Some(240.0), Some(600.0)), Some(240.0));
    assert_eq!(study_length(Some(420.0), None), Some(420.0));
    assert_eq!(study_length(None, Some(600.0)), None, "nobody finished yet");
    let (d, why) = suggest(Submission::Finished, 2, &[Flag::FailedCheck], study_length(Some(420.0), Some(180.0)));
    assert_eq!(d, Decision::Review, "{why}");
    let (d, _) = suggest(Submission::Finished, 2, &[Flag::FailedCheck], study_length(Some(420.0), Some(360.0)));
    assert_eq!(d, Decision::Reject);
}
