use super::sim::{confusion, simulate, Simulated};
use super::*;

/// Both models, each with its default options.
fn models() -> [(Model, Options); 2] {
    [Model::DawidSkene, Model::Mace].map(|m| (m, Options::for_model(m)))
}

/// Eight people on 1,000 items × 5 options, 4 answers per item: six decent
/// (0.65–0.9) and two poor (0.3 with a systematic confusion, 0.25 at random).
fn crowd() -> Simulated {
    let mut people: Vec<Vec<Vec<f64>>> =
        [0.9, 0.85, 0.8, 0.75, 0.7, 0.65].iter().map(|&a| confusion(a, 5, None)).collect();
    people.push(confusion(0.3, 5, Some(1)));
    people.push(confusion(0.25, 5, None));
    simulate(2013, 1000, 5, &people, 4)
}

fn labels(a: &Aggregation) -> Vec<usize> {
    a.items.iter().map(|i| i.label).collect()
}

#[test]
fn recovers_each_persons_accuracy_within_five_points() {
    let sim = crowd();
    for (m, opts) in models() {
        let a = aggregate(m, &sim.answers, 5, &[], &opts).unwrap();
        assert!(a.converged, "{:?} did not converge in {} iterations", a.model, a.iterations);
        assert_eq!(a.people.len(), 8);
        for p in &a.people {
            let truth = sim.accuracy_of(p.person);
            assert!(
                (p.accuracy - truth).abs() <= 0.05,
                "{:?}: person {} estimated {:.3}, simulated {truth:.3}",
                a.model,
                p.person,
                p.accuracy
            );
        }
    }
}

#[test]
fn beats_majority_vote_when_two_people_are_poor() {
    let sim = crowd();
    let majority = sim.score(&sim.majority(5, 1));
    for (m, opts) in models() {
        let a = aggregate(m, &sim.answers, 5, &[], &opts).unwrap();
        let score = sim.score(&labels(&a));
        assert!(score > majority + 0.01, "{:?}: {score:.3} vs majority {majority:.3}", a.model);
    }
}

#[test]
fn dawid_skene_learns_the_systematic_confusion() {
    let sim = crowd();
    let a = aggregate(Model::DawidSkene, &sim.answers, 5, &[], &Options::dawid_skene()).unwrap();
    let c = a.person(6).unwrap().confusion.as_ref().unwrap();
    for (t, row) in c.iter().enumerate() {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(row[(t + 1) % 5] > 0.55, "truth {t}: {row:?}");
    }
    assert!(a.person(0).unwrap().competence.is_none());
    let mc = aggregate(Model::Mace, &sim.answers, 5, &[], &Options::mace()).unwrap();
    let comp: Vec<f64> = mc.people.iter().map(|p| p.competence.unwrap()).collect();
    assert!(comp[0] > comp[5] && comp[5] > comp[6] && comp[5] > comp[7], "{comp:?}");
    assert!(mc.people[0].confusion.is_none());
}

#[test]
fn mace_restarts_give_the_same_fit_on_any_number_of_threads() {
    let sim = crowd();
    let one = aggregate(Model::Mace, &sim.answers, 5, &[], &Options::mace()).unwrap();
    for threads in [2, 3, 64] {
        let many = aggregate(Model::Mace, &sim.answers, 5, &[], &Options { threads, ..Options::mace() }).unwrap();
        assert_eq!(format!("{many:?}"), format!("{one:?}"), "{threads} threads");
    }
}

#[test]
fn posteriors_are_distributions_and_labels_their_argmax() {
    let sim = simulate(5, 200, 3, &[confusion(0.8, 3, None), confusion(0.7, 3, None), confusion(0.6, 3, None)], 2);
    for (m, opts) in models() {
        let a = aggregate(m, &sim.answers, 3, &[], &opts).unwrap();
        assert_eq!(a.items.len(), 200);
        for i in &a.items {
            assert!((i.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            assert_eq!(i.posterior, i.probabilities[i.label]);
            assert!(i.probabilities.iter().all(|&p| p <= i.posterior * (1.0 + 1e-9)));
        }
        assert!((a.priors.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // Same input, same output (MACE's restarts are seeded).
        assert_eq!(aggregate(m, &sim.answers, 3, &[], &opts).unwrap(), a);
    }
}

#[test]
fn unanimous_items_take_their_label() {
    // Three people agree on items 1 and 2 and split on 3.
    #[rustfmt::skip]
    let answers = [(1, 10, 0), (1, 20, 0), (1, 30, 0), (2, 10, 1), (2, 20, 1), (2, 30, 1),
                   (3, 10, 0), (3, 20, 0), (3, 30, 1)];
    for (m, opts) in models() {
        let a = aggregate(m, &answers, 2, &[], &opts).unwrap();
        assert_eq!(labels(&a), [0, 1, 0], "{:?}", a.model);
        assert!(a.item(1).unwrap().posterior > 0.9);
        assert_eq!(a.item(4), None);
        assert_eq!(a.person(30).unwrap().answers, 3);
    }
}

#[test]
fn gold_items_are_clamped() {
    // Person 30 is the lone dissenter on item 3; gold says they were right.
    #[rustfmt::skip]
    let answers = [(1, 10, 0), (1, 20, 0), (1, 30, 0), (2, 10, 1), (2, 20, 1), (2, 30, 1),
                   (3, 10, 0), (3, 20, 0), (3, 30, 1)];
    for (m, opts) in models() {
        let a = aggregate(m, &answers, 2, &[(3, 1)], &opts).unwrap();
        let item = a.item(3).unwrap();
        assert_eq!((item.label, item.posterior), (1, 1.0), "{:?}", a.model);
        assert!(a.person(30).unwrap().accuracy > a.person(10).unwrap().accuracy);
    }
}

#[test]
fn a_class_nobody_chose_gets_no_mass() {
    let answers = [(1, 10, 0), (1, 20, 2), (2, 10, 2), (2, 20, 2), (3, 10, 0), (3, 20, 0)];
    for (m, opts) in models() {
        let a = aggregate(m, &answers, 4, &[], &opts).unwrap();
        assert_eq!(a.unseen_classes, [1, 3]);
        assert_eq!(a.k, 4);
        for i in &a.items {
            assert_eq!((i.probabilities[1], i.probabilities[3]), (0.0, 0.0));
        }
        assert_eq!((a.priors[1], a.priors[3]), (0.0, 0.0));
        if let Some(c) = &a.people[0].confusion {
            assert_eq!(c[1], vec![0.0; 4]);
        }
        // A gold label makes its class seen.
        let g = aggregate(m, &answers, 4, &[(1, 3)], &opts).unwrap();
        assert_eq!(g.unseen_classes, [1]);
        assert_eq!(g.item(1).unwrap().label, 3);
    }
}

#[test]
fn a_repeated_answer_replaces_the_earlier_one() {
    let first = [(1, 10, 1), (1, 10, 0), (1, 20, 0), (2, 10, 1), (2, 20, 1)];
    let clean = [(1, 10, 0), (1, 20, 0), (2, 10, 1), (2, 20, 1)];
    for (m, opts) in models() {
        assert_eq!(aggregate(m, &first, 2, &[], &opts).unwrap(), aggregate(m, &clean, 2, &[], &opts).unwrap());
    }
}

#[test]
fn the_iteration_cap_is_reported() {
    let sim = crowd();
    for (m, opts) in models() {
        let a = aggregate(m, &sim.answers, 5, &[], &Options { max_iter: 1, ..opts.clone() }).unwrap();
        assert_eq!((a.iterations, a.converged), (1, false), "{:?}", a.model);
        let b = aggregate(m, &sim.answers, 5, &[], &Options { max_iter: 3, tol: -1.0, ..opts }).unwrap();
        assert_eq!((b.iterations, b.converged), (3, false), "a negative tol runs the cap");
    }
}

#[test]
fn failure_modes_are_clear_errors() {
    let ok = [(1, 10, 0), (1, 20, 1), (2, 10, 1), (2, 20, 1)];
    for (m, opts) in models() {
        assert_eq!(aggregate(m, &[], 2, &[], &opts).unwrap_err(), AggregateError::NoAnswers);
        assert_eq!(aggregate(m, &ok, 1, &[], &opts).unwrap_err(), AggregateError::TooFewClasses(1));
        let e = aggregate(m, &[(1, 10, 0), (2, 20, 5)], 3, &[], &opts).unwrap_err();
        assert_eq!(e, AggregateError::LabelOutOfRange { index: 1, item: 2, person: 20, label: 5, k: 3 });
        assert!(e.to_string().contains("answer 1 (item 2, person 20): label 5 is out of range for 3 classes"));
        assert_eq!(
            aggregate(m, &ok, 2, &[(1, 2)], &opts).unwrap_err(),
            AggregateError::GoldOutOfRange { item: 1, label: 2, k: 2 }
        );
        assert_eq!(aggregate(m, &ok, 2, &[(9, 0)], &opts).unwrap_err(), AggregateError::GoldWithoutAnswers { item: 9 });
        let few = [(1, 10, 0), (1, 20, 1), (2, 10, 1), (2, 20, 1), (2, 30, 0)];
        let e = aggregate(m, &few, 2, &[], &opts).unwrap_err();
        assert_eq!(e, AggregateError::TooFewAnswers { person: 30, answers: 1, min: 2 });
        assert!(e.to_string().contains("person 30 gave 1 answer(s); at least 2 per person"));
        let lenient = Options { min_answers_per_person: 1, ..opts.clone() };
        assert_eq!(aggregate(m, &few, 2, &[], &lenient).unwrap().people.len(), 3);
        let zero = Options { max_iter: 0, ..opts.clone() };
        assert_eq!(aggregate(m, &ok, 2, &[], &zero).unwrap_err().to_string(), "max_iter must be at least 1");
    }
    let e = aggregate(Model::Mace, &ok, 2, &[], &Options { restarts: 0, ..Options::mace() }).unwrap_err();
    assert_eq!(e, AggregateError::ZeroOption("restarts"));
}

#[test]
fn labels_a_rounding_error_apart_tie_and_go_to_the_smaller() {
    assert_eq!(argmax(&[0.2547, 0.2547 * (1.0 + 3e-10), 0.2]), 0);
    assert_eq!(argmax(&[0.1, 0.2547, 0.2547 * (1.0 + 3e-10)]), 1);
    assert_eq!(argmax(&[0.2547, 0.2547 * (1.0 + 1e-6)]), 1, "a real difference still counts");
    // Two people who contradict each other on two items: Dawid–Skene (started
    // from the vote shares, so symmetric) finds the same evidence for 0 and 1,
    // whichever way EM's sums ran. (MACE's random restarts break the symmetry.)
    let answers = [(1, 10, 0), (1, 20, 1), (2, 10, 1), (2, 20, 0)];
    let a = aggregate(Model::DawidSkene, &answers, 2, &[], &Options::dawid_skene()).unwrap();
    for i in &a.items {
        assert!((i.probabilities[0] - i.probabilities[1]).abs() < 1e-6, "{i:?}");
        assert_eq!(i.label, 0, "{i:?}");
    }
}

/// The same answers from people numbered in another order (a study whose
/// participants arrived in another order), on items with other ids (a
/// re-imported dataset), read in another order: the same labels and
/// posteriors, item by item. MACE's random starts once followed the people's
/// ids, then the items' (audit AF), and on a sparse crowd moved its
/// posteriors by 0.04 and flipped a label.
#[test]
fn renumbering_the_people_or_items_or_reordering_the_answers_changes_nothing() {
    // 60 people with about 5 answers each: MACE's likelihood has many optima here.
    let mut people = vec![confusion(0.8, 4, None); 30];
    people.extend(vec![confusion(0.3, 4, None); 20]);
    people.extend(vec![confusion(0.4, 4, Some(1)); 10]);
    let sim = simulate(77, 100, 4, &people, 3);
    // Items renumbered in reverse, so their order flips too.
    let item = |i: u64| 50_000 - i * 3;
    let mut renumbered: Vec<(u64, u64, usize)> =
        sim.answers.iter().map(|&(i, p, c)| (item(i), 1_000 - p * 7, c)).collect();
    crate::domain::rng::shuffle(&mut renumbered, 5);
    for (m, opts) in models() {
        let (a, b) =
            (aggregate(m, &sim.answers, 4, &[], &opts).unwrap(), aggregate(m, &renumbered, 4, &[], &opts).unwrap());
        for x in &a.items {
            let y = b.item(item(x.item)).unwrap();
            assert_eq!(x.label, y.label, "{m:?} item {}", x.item);
            for (p, q) in x.probabilities.iter().zip(&y.probabilities) {
                assert!((p - q).abs() < 1e-12, "{m:?} item {}: {:?} vs {:?}", x.item, x.probabilities, y.probabilities);
            }
        }
    }
}

#[test]
fn mace_finds_the_random_answerer_uninformed_and_only_a_group_of_such_people_carries_nothing() {
    let sim = crowd();
    let mace = aggregate(Model::Mace, &sim.answers, 5, &[], &Options::mace()).unwrap();
    let uninformed: Vec<u64> = mace.people.iter().filter(|p| p.carries_no_information()).map(|p| p.person).collect();
    assert!(uninformed.contains(&7), "the 0.25-at-random person: {:?}", mace.person(7));
    assert!(uninformed.iter().all(|&p| p >= 6), "the decent ones are informed: {uninformed:?}");
    assert!(mace.none_informed(&[7]));
    assert!(!mace.none_informed(&[7, 0]), "one informed giver is enough");
    assert!(!mace.none_informed(&[]) && !mace.none_informed(&[99]), "nobody, or somebody the fit has not seen");
    let ds = aggregate(Model::DawidSkene, &sim.answers, 5, &[], &Options::dawid_skene()).unwrap();
    assert!(!ds.none_informed(&[7]), "Dawid–Skene has no competence to judge by");
}
