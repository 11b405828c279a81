use super::*;

fn agree(min: usize, max: usize) -> Adaptive {
    Adaptive { min, max, stop: Stop::Agree }
}

fn posterior(min: usize, max: usize, threshold: f64) -> Adaptive {
    Adaptive { min, max, stop: Stop::Posterior { threshold } }
}

/// Answers of people of one accuracy.
fn of(classes: &[usize], accuracy: f64) -> Vec<(usize, f64)> {
    classes.iter().map(|&c| (c, accuracy)).collect()
}

fn stop(reason: Reason, label: usize) -> Decision {
    Decision::Stop { reason, label, posterior: None }
}

#[test]
fn agreement_at_min_stops() {
    assert_eq!(agree(2, 5).decide(&of(&[3, 3], 0.7), 5), stop(Reason::Agreed, 3));
    assert_eq!(agree(3, 5).decide(&of(&[1, 1, 1], 0.7), 5), stop(Reason::Agreed, 1));
}

#[test]
fn fewer_than_min_always_asks_for_more() {
    assert_eq!(agree(2, 5).decide(&of(&[3], 0.7), 5), Decision::More);
    assert_eq!(agree(2, 5).decide(&[], 5), Decision::More);
    assert_eq!(posterior(3, 5, 0.5).decide(&of(&[0, 0], 0.99), 5), Decision::More);
}

#[test]
fn a_lead_of_one_asks_for_more_until_max() {
    let rule = agree(2, 5);
    assert_eq!(rule.decide(&of(&[0, 4], 0.7), 5), Decision::More, "a tie");
    assert_eq!(rule.decide(&of(&[0, 4, 0], 0.7), 5), Decision::More, "2 to 1");
    assert_eq!(rule.decide(&of(&[0, 4, 0, 0], 0.7), 5), stop(Reason::Agreed, 0), "3 to 1");
    assert_eq!(rule.decide(&of(&[0, 4, 1, 2], 0.7), 5), Decision::More);
    assert_eq!(rule.decide(&of(&[0, 4, 0, 4, 1], 0.7), 5), stop(Reason::Max, 0), "tie at max: the first given");
    assert_eq!(rule.decide(&of(&[4, 0, 0, 4, 1], 0.7), 5), stop(Reason::Max, 4));
    // Past max (e.g. a late extra copy) it still stops.
    assert_eq!(rule.decide(&of(&[0, 1, 2, 3, 4, 0], 0.7), 5), stop(Reason::Max, 0));
}

#[test]
fn min_equal_to_max_stops_after_one_round() {
    assert_eq!(agree(3, 3).decide(&of(&[0, 1, 2], 0.7), 5), stop(Reason::Max, 0));
    assert_eq!(agree(1, 1).decide(&of(&[2], 0.7), 5), stop(Reason::Max, 2));
    // One answer never agrees with itself: min 1 asks a second person.
    assert_eq!(agree(1, 3).decide(&of(&[2], 0.7), 5), Decision::More);
    assert_eq!(agree(1, 3).decide(&of(&[2, 2], 0.7), 5), stop(Reason::Agreed, 2));
}

#[test]
fn out_of_range_classes_are_ignored_by_the_count() {
    assert_eq!(agree(2, 5).decide(&of(&[9, 1, 1], 0.7), 5), stop(Reason::Agreed, 1));
}

#[test]
fn posterior_stops_when_reliable_people_agree() {
    let rule = posterior(2, 5, 0.95);
    match rule.decide(&of(&[2, 2], 0.9), 5) {
        Decision::Stop { reason: Reason::Confident, label: 2, posterior: Some(p) } => {
            // 0.81 / (0.81 + 4 * 0.025^2) = 0.99692...
            assert!((p - 0.81 / (0.81 + 4.0 * 0.025f64.powi(2))).abs() < 1e-12, "{p}");
        }
        other => panic!("{other:?}"),
    }
    // Two weak people agreeing are not enough: 0.3025 / (0.3025 + 4 * 0.1125^2) = 0.857.
    assert_eq!(rule.decide(&of(&[2, 2], 0.55), 5), Decision::More);
    // A third weak one tips it: 0.166 / (0.166 + 4 * 0.00142) = 0.967.
    assert!(matches!(rule.decide(&of(&[2, 2, 2], 0.55), 5), Decision::Stop { reason: Reason::Confident, .. }));
}

#[test]
fn posterior_weighs_people_by_accuracy() {
    // A reliable person outweighs a weak one who disagrees.
    let answers = [(1, 0.95), (3, 0.6)];
    let (label, p) = one_coin_posterior(&answers, 5);
    assert_eq!(label, 1);
    assert!(p > 0.5 && p < 0.95, "{p}");
    assert_eq!(
        posterior(2, 2, 0.95).decide(&answers, 5),
        Decision::Stop { reason: Reason::Max, label: 1, posterior: Some(p) }
    );
    // Symmetric answers: a tie goes to the smaller class; each of the two
    // has 0.8 * 0.05, each other class 0.05^2.
    let (label, p) = one_coin_posterior(&[(3, 0.8), (1, 0.8)], 5);
    assert_eq!(label, 1);
    assert!((p - 0.04 / (0.08 + 3.0 * 0.0025)).abs() < 1e-12, "{p}");
    // No answers: the uniform prior.
    assert_eq!(one_coin_posterior(&[], 4), (0, 0.25));
    // Accuracies of 0 or 1 are clamped: no answer is certain on its own.
    let (_, p) = one_coin_posterior(&[(0, 1.0)], 5);
    assert!(p < 1.0 && p > 0.98, "{p}");
}

#[test]
fn the_spec_table_parses_with_errors_naming_the_key() {
    let spec =
        |min, max, stop: Option<&str>, threshold| AdaptiveSpec { min, max, stop: stop.map(str::to_string), threshold };
    assert_eq!(Adaptive::parse(&spec(Some(2), Some(5), Some("agree"), None)), Ok(agree(2, 5)));
    assert_eq!(Adaptive::parse(&spec(Some(2), Some(5), Some("posterior"), Some(0.95))), Ok(posterior(2, 5, 0.95)));
    let key = |s: AdaptiveSpec| Adaptive::parse(&s).unwrap_err().0;
    assert_eq!(key(spec(None, Some(5), Some("agree"), None)), "assignment.adaptive.min");
    assert_eq!(key(spec(Some(0), Some(5), Some("agree"), None)), "assignment.adaptive.min");
    assert_eq!(key(spec(Some(2), None, Some("agree"), None)), "assignment.adaptive.max");
    assert_eq!(key(spec(Some(3), Some(2), Some("agree"), None)), "assignment.adaptive.max");
    assert_eq!(key(spec(Some(2), Some(21), Some("agree"), None)), "assignment.adaptive.max");
    assert_eq!(key(spec(Some(2), Some(5), None, None)), "assignment.adaptive.stop");
    assert_eq!(key(spec(Some(2), Some(5), Some("vote"), None)), "assignment.adaptive.stop");
    assert_eq!(key(spec(Some(2), Some(5), Some("agree"), Some(0.9))), "assignment.adaptive.threshold");
    assert_eq!(key(spec(Some(2), Some(5), Some("posterior"), None)), "assignment.adaptive.threshold");
    assert_eq!(key(spec(Some(2), Some(5), Some("posterior"), Some(1.0))), "assignment.adaptive.threshold");
    assert!(Adaptive::parse(&spec(Some(2), Some(5), Some("vote"), None)).unwrap_err().1.contains("agree, posterior"));
}

#[test]
fn settings_round_trip_as_stored() {
    for a in [agree(2, 5), posterior(1, 4, 0.9)] {
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Adaptive>(&json).unwrap(), a, "{json}");
    }
    assert_eq!(serde_json::to_string(&agree(2, 5)).unwrap(), r#"{"min":2,"max":5,"stop":"agree"}"#);
    for r in Reason::ALL {
        assert_eq!(Reason::parse(r.as_str()), Some(r));
    }
    assert_eq!(Reason::parse("done"), None);
}

#[test]
fn follow_ups_are_bundled_when_a_bundle_is_full_or_nobody_is_working() {
    assert!(!bundle_now(0, 0, 5), "nothing waits");
    assert!(!bundle_now(4, 3, 5), "others may still join them");
    assert!(bundle_now(5, 3, 5));
    assert!(bundle_now(1, 0, 5), "the last ones go in a smaller bundle");
    assert!(bundle_now(1, 9, 0), "a zero size counts as one");
}

#[test]
fn the_next_answer_goes_to_the_least_busy_who_has_not_had_the_item() {
    let started = [(10, 3), (11, 0), (12, 0), (13, 5)];
    assert_eq!(pick_annotator(&started, &[]), Some(11));
    assert_eq!(pick_annotator(&started, &[11]), Some(12));
    assert_eq!(pick_annotator(&started, &[11, 12]), Some(10));
    assert_eq!(pick_annotator(&started, &[10, 11, 12, 13]), None);
    assert_eq!(pick_annotator(&[], &[]), None);
}

#[test]
fn the_report_counts_spending_against_fixed_max() {
    let item = |answers, reason| AdaptiveItem {
        instance_id: answers,
        answers,
        wanted: answers,
        reason,
        value: None,
        posterior: None,
    };
    let items =
        vec![item(2, Some(Reason::Agreed)), item(5, Some(Reason::Max)), item(3, Some(Reason::Agreed)), item(1, None)];
    let r = AdaptiveReport::new(7, agree(2, 5), items);
    assert_eq!((r.answers_spent, r.fixed_answers), (11, 20));
    assert_eq!(r.stopped, StopCounts { agreed: 2, confident: 0, max: 1, collecting: 1 });
    assert!((r.saved_share.unwrap() - (1.0 - 10.0 / 15.0)).abs() < 1e-12);
    assert_eq!(AdaptiveReport::new(7, agree(2, 5), vec![item(1, None)]).saved_share, None);
}
