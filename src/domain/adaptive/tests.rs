use super::*;

fn agree(min: usize, max: usize) -> Adaptive {
    Adaptive { min, max, stop: Stop::Agree, allow_unchosen: false, end_uninformative: false }
}

fn posterior(min: usize, max: usize, threshold: f64) -> Adaptive {
    Adaptive { min, max, stop: Stop::Posterior { threshold }, allow_unchosen: false, end_uninformative: true }
}

/// Answers by people 1, 2, ... in turn.
fn of(classes: &[usize]) -> Vec<(u64, usize)> {
    classes.iter().enumerate().map(|(p, &c)| (p as u64 + 1, c)).collect()
}

/// Nobody fitted yet: everyone a middling worker.
fn crowd() -> Reliability {
    Reliability::uninformed(5)
}

/// The reason and label of a stop (None: asks for more).
fn stopped(d: Decision) -> Option<(Reason, usize)> {
    match d {
        Decision::Stop { reason, label, .. } => Some((reason, label)),
        Decision::More => None,
    }
}

#[test]
fn agreement_at_min_stops() {
    assert_eq!(stopped(agree(2, 5).decide(0, &of(&[3, 3]), &crowd())), Some((Reason::Agreed, 3)));
    assert_eq!(stopped(agree(3, 5).decide(0, &of(&[1, 1, 1]), &crowd())), Some((Reason::Agreed, 1)));
}

#[test]
fn fewer_than_min_always_asks_for_more() {
    assert_eq!(agree(2, 5).decide(0, &of(&[3]), &crowd()), Decision::More);
    assert_eq!(agree(2, 5).decide(0, &[], &crowd()), Decision::More);
    assert_eq!(posterior(3, 5, 0.5).decide(0, &of(&[0, 0]), &crowd()), Decision::More);
}

#[test]
fn a_lead_of_one_asks_for_more_until_max() {
    let (rule, c) = (agree(2, 5), crowd());
    assert_eq!(rule.decide(0, &of(&[0, 4]), &c), Decision::More, "a tie");
    assert_eq!(rule.decide(0, &of(&[0, 4, 0]), &c), Decision::More, "2 to 1");
    assert_eq!(stopped(rule.decide(0, &of(&[0, 4, 0, 0]), &c)), Some((Reason::Agreed, 0)), "3 to 1");
    assert_eq!(rule.decide(0, &of(&[0, 4, 1, 2]), &c), Decision::More);
    assert_eq!(
        stopped(rule.decide(0, &of(&[0, 4, 0, 4, 1]), &c)),
        Some((Reason::Max, 0)),
        "tie at max: the first given"
    );
    assert_eq!(stopped(rule.decide(0, &of(&[4, 0, 0, 4, 1]), &c)), Some((Reason::Max, 4)));
    // Past max (e.g. a late extra copy) it still stops.
    assert_eq!(stopped(rule.decide(0, &of(&[0, 1, 2, 3, 4, 0]), &c)), Some((Reason::Max, 0)));
}

#[test]
fn min_equal_to_max_stops_after_one_round() {
    let c = crowd();
    assert_eq!(stopped(agree(3, 3).decide(0, &of(&[0, 1, 2]), &c)), Some((Reason::Max, 0)));
    assert_eq!(stopped(agree(1, 1).decide(0, &of(&[2]), &c)), Some((Reason::Max, 2)));
    // One answer never agrees with itself: min 1 asks a second person.
    assert_eq!(agree(1, 3).decide(0, &of(&[2]), &c), Decision::More);
    assert_eq!(stopped(agree(1, 3).decide(0, &of(&[2, 2]), &c)), Some((Reason::Agreed, 2)));
}

#[test]
fn out_of_range_classes_are_ignored_by_the_count() {
    assert_eq!(stopped(agree(2, 5).decide(0, &of(&[9, 1, 1]), &crowd())), Some((Reason::Agreed, 1)));
}

#[test]
fn every_stop_carries_the_posterior_of_its_value() {
    // Under `agree` too, and for None (class 4) as for any other value.
    let c = crowd();
    for answers in [of(&[4, 4]), of(&[4, 0, 4, 4]), of(&[0, 4, 0, 4, 1])] {
        let Decision::Stop { label, posterior, .. } = agree(2, 5).decide(0, &answers, &c) else {
            panic!("{answers:?}")
        };
        assert!((posterior - c.posterior(&answers)[label]).abs() < 1e-12);
    }
    // Two middling people agreeing: 0.49 / (0.49 + 4 * 0.075^2) = 0.956.
    match posterior(2, 5, 0.95).decide(0, &of(&[4, 4]), &c) {
        Decision::Stop { reason: Reason::Confident, label: 4, posterior: p } => {
            assert!((p - 0.49 / (0.49 + 4.0 * 0.075f64.powi(2))).abs() < 1e-12, "{p}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_answer_never_settles_an_item_however_trusted() {
    // A person the model trusts almost fully: their row says 0.99 right.
    let mut rel = crowd();
    let mut sure = vec![0.0025; 25];
    (0..5).for_each(|t| sure[t * 5 + t] = 0.99);
    rel.people.insert(
        1,
        reliability::Person {
            answers: 200,
            confusion: sure,
            kappa: 0.98,
            answered: vec![],
            gold: vec![],
            settled: Default::default(),
        },
    );
    let rule = posterior(1, 3, 0.95);
    assert!(rel.posterior(&[(1, 2)])[2] > 0.95);
    assert_eq!(rule.decide(0, &[(1, 2)], &rel), Decision::More, "one answer, however sure");
    assert!(matches!(
        rule.decide(0, &[(1, 2), (2, 2)], &rel),
        Decision::Stop { reason: Reason::Confident, label: 2, .. }
    ));
    // A second answer by someone whose answers do not count is no agreement.
    rel.people.insert(
        3,
        reliability::Person {
            answers: 50,
            confusion: vec![0.2; 25],
            kappa: 0.0,
            answered: vec![],
            gold: vec![],
            settled: Default::default(),
        },
    );
    assert_eq!(rule.decide(0, &[(1, 2), (3, 2)], &rel), Decision::More);
}

#[test]
fn the_settled_value_is_one_somebody_gave() {
    // People 1 and 2 confuse None (4) with slot 3: their "None" points to 3
    // and their "0" to 1 (a made-up confusion), so the posterior's favourite is 3.
    let mut rel = crowd();
    let mut rows = vec![0.01; 25];
    for (t, a) in [(0, 0), (1, 0), (2, 2), (3, 4), (4, 3)] {
        rows[t * 5 + a] = 0.96;
    }
    for p in [1, 2] {
        rel.people.insert(
            p,
            reliability::Person {
                answers: 40,
                confusion: rows.clone(),
                kappa: 0.5,
                answered: vec![],
                gold: vec![],
                settled: Default::default(),
            },
        );
    }
    let answers = [(1, 4), (2, 0)];
    let post = rel.posterior(&answers);
    let favourite = (0..5).max_by(|&a, &b| post[a].total_cmp(&post[b])).unwrap();
    assert!(favourite == 3 || favourite == 1, "{post:?}");
    match posterior(2, 2, 0.95).decide(0, &answers, &rel) {
        Decision::Stop { reason: Reason::Max, label, posterior: p } => {
            assert!(label == 4 || label == 0, "{label}: nobody chose it");
            assert_eq!(p, post[label]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(most_probable_given(&[], &post), 0);
}

#[test]
fn the_spec_table_parses_with_errors_naming_the_key() {
    let spec = |min, max, stop: Option<&str>, threshold| AdaptiveSpec {
        min,
        max,
        stop: stop.map(str::to_string),
        threshold,
        allow_unchosen: None,
        end_uninformative: None,
    };
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
    // Ending uninformative people's places: on by default under "posterior",
    // off by choice, refused by name under "agree" (no model recognises them).
    let with =
        |stop, threshold, end| AdaptiveSpec { end_uninformative: end, ..spec(Some(2), Some(5), stop, threshold) };
    let off = Adaptive::parse(&with(Some("posterior"), Some(0.95), Some(false))).unwrap();
    assert!(!off.end_uninformative && posterior(2, 5, 0.95).end_uninformative);
    assert_eq!(key(with(Some("agree"), None, Some(true))), "assignment.adaptive.end_uninformative");
    assert_eq!(Adaptive::parse(&with(Some("agree"), None, Some(false))), Ok(agree(2, 5)));
}

#[test]
fn settings_round_trip_as_stored() {
    let unchosen = Adaptive { allow_unchosen: true, ..posterior(2, 5, 0.95) };
    for a in [agree(2, 5), posterior(1, 4, 0.9), unchosen] {
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Adaptive>(&json).unwrap(), a, "{json}");
    }
    assert_eq!(
        serde_json::to_string(&agree(2, 5)).unwrap(),
        r#"{"min":2,"max":5,"stop":"agree","end_uninformative":false}"#
    );
    for r in Reason::ALL {
        assert_eq!(Reason::parse(r.as_str()), Some(r));
    }
    assert_eq!(Reason::parse("done"), None);
    // Settings stored before `allow_unchosen` and `end_uninformative`
    // existed read as false: a running study keeps its behaviour.
    let old: Adaptive = serde_json::from_str(r#"{"min":2,"max":5,"stop":"posterior","threshold":0.9}"#).unwrap();
    assert_eq!(old, Adaptive { end_uninformative: false, ..posterior(2, 5, 0.9) });
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
    let item =
        |answers, reason| AdaptiveItem { instance_id: answers, answers, wanted: answers, reason, ..Default::default() };
    let items =
        vec![item(2, Some(Reason::Agreed)), item(5, Some(Reason::Max)), item(3, Some(Reason::Agreed)), item(1, None)];
    let r = AdaptiveReport::new(crate::domain::ids::StudyId::new(7), agree(2, 5), items);
    assert_eq!((r.answers_spent, r.fixed_answers), (11, 20));
    assert_eq!(r.stopped, StopCounts { agreed: 2, confident: 0, max: 1, collecting: 1 });
    assert!((r.saved_share.unwrap() - (1.0 - 10.0 / 15.0)).abs() < 1e-12);
    assert_eq!(
        AdaptiveReport::new(crate::domain::ids::StudyId::new(7), agree(2, 5), vec![item(1, None)]).saved_share,
        None
    );
}

#[test]
fn a_study_ends_the_places_of_uninformative_people_only_when_set_to() {
    let mut rel = Reliability::uninformed(5);
    let settled = |answers, kappa| evidence::Settled { answers, kappa, contrast: 4 };
    let person = |settled| reliability::Person {
        answers: 40,
        confusion: vec![0.2; 25],
        kappa: 0.5,
        answered: vec![],
        gold: vec![],
        settled,
    };
    rel.people.insert(1, person(settled(12, 0.05)));
    rel.people.insert(2, person(settled(12, 0.7)));
    rel.people.insert(3, person(settled(9, -0.5)));
    // Twelve settled items, but only two of another value than the rest: no evidence yet.
    rel.people.insert(5, person(evidence::Settled { answers: 12, kappa: 0.0, contrast: 2 }));
    let on = posterior(2, 5, 0.95);
    assert!(on.ends_place(1, &rel) && !on.ends_place(2, &rel) && !on.ends_place(3, &rel) && !on.ends_place(4, &rel));
    assert!(!on.ends_place(5, &rel));
    let off = Adaptive { end_uninformative: false, ..on };
    assert!(!off.ends_place(1, &rel));
    // Their answers no longer count toward a stop: two agreeing people who count are needed.
    let answers = [(1, 4), (2, 4)];
    assert_eq!(on.decide(0, &answers, &rel), Decision::More);
}

#[test]
fn a_posterior_threshold_warns_where_it_was_not_calibrated() {
    let posterior = Adaptive {
        min: 2,
        max: 5,
        stop: Stop::Posterior { threshold: 0.95 },
        allow_unchosen: false,
        end_uninformative: true,
    };
    let thirty = vec![30i64; 40];
    assert_eq!(calibration_warning(&posterior, 600, &thirty, Some(3)), None, "like the measured crowds");
    assert_eq!(calibration_warning(&posterior, 600, &[], None), None, "nobody has answered yet");
    let small = calibration_warning(&posterior, 70, &thirty, None).unwrap();
    assert!(small.starts_with("70 items (under 100):") && small.contains("posterior ≥ 0.95"), "{small}");
    let mut bundles_of_five = vec![5i64; 30];
    bundles_of_five.extend([30; 10]);
    let few = calibration_warning(&posterior, 600, &bundles_of_five, Some(2)).unwrap();
    assert!(few.starts_with("a median of 5 answers per person (under 15)"), "{few}");
    let both = calibration_warning(&posterior, 70, &bundles_of_five, None).unwrap();
    assert!(both.starts_with("70 items (under 100) and a median of 5 answers"), "{both}");
    // A link study without gold: the audits' consistent swappers look careful.
    let no_gold = calibration_warning(&posterior, 600, &thirty, Some(0)).unwrap();
    assert!(no_gold.starts_with("no gold items (link.gold)") && no_gold.contains("posterior ≥ 0.95"), "{no_gold}");
    let small_no_gold = calibration_warning(&posterior, 70, &thirty, Some(0)).unwrap();
    assert!(small_no_gold.starts_with("70 items (under 100):") && small_no_gold.contains(". no gold items"));
    let agree = Adaptive { stop: Stop::Agree, ..posterior };
    assert_eq!(calibration_warning(&agree, 10, &[1], Some(0)), None, "no threshold, no promise");
}

/// The stop holds under flat class priors too: fitted priors that favour the
/// value (as a crowd swapping it with another talks them into) do not carry
/// two middling answers over the threshold, and neither do flat priors
/// carry a value the fit found rare.
#[test]
fn a_confident_stop_does_not_rest_on_the_fitted_priors() {
    let rule = posterior(2, 5, 0.95);
    let mut rel = crowd();
    // A crowd right on 60 %, the rest spread evenly.
    rel.crowd = (0..25).map(|x| if x / 5 == x % 5 { 0.6 } else { 0.1 }).collect();
    rel.priors = vec![0.6, 0.1, 0.1, 0.1, 0.1];
    let two = of(&[0, 0]);
    let weighed = rel.weigh(Some(0), &two);
    assert!(weighed.posterior[0] >= 0.95 && weighed.flat[0] < 0.95, "{weighed:?}");
    assert_eq!(rule.decide(0, &two, &rel), Decision::More);
    // A third agreeing answer is enough either way.
    assert!(matches!(
        rule.decide(0, &of(&[0, 0, 0]), &rel),
        Decision::Stop { reason: Reason::Confident, label: 0, .. }
    ));
    // A rare value: flat priors would stop on two answers, the fitted ones do not.
    let mut rel = crowd();
    rel.priors = vec![0.03, 0.2425, 0.2425, 0.2425, 0.2425];
    let weighed = rel.weigh(Some(0), &two);
    assert!(weighed.flat[0] >= 0.95 && weighed.posterior[0] < 0.95, "{weighed:?}");
    assert_eq!(rule.decide(0, &two, &rel), Decision::More);
    // Flat priors: the two posteriors are one.
    assert_eq!(crowd().weigh(Some(0), &two).flat, crowd().weigh(Some(0), &two).posterior);
}

#[test]
fn the_fit_points_step_by_one_to_ten_then_by_a_tenth_and_never_pass_the_count() {
    let points: Vec<u64> = (0..=30).map(fit_point).collect();
    assert_eq!(&points[..12], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert_eq!(&points[12..], &[11, 13, 13, 15, 15, 17, 17, 19, 19, 21, 21, 21, 24, 24, 24, 27, 27, 27, 30]);
    for n in [0u64, 1, 9, 10, 11, 399, 440, 12_345, 160_000] {
        let p = fit_point(n);
        assert!(p <= n, "{n}: {p}");
        // The next point is past n, and at most a tenth (at least one) past p.
        let next = p + p.div_ceil(10).max(1);
        assert!(next > n, "{n}: a later point {next} fits");
        assert_eq!(fit_point(next), next);
        assert_eq!(fit_point(next - 1), p);
    }
}
