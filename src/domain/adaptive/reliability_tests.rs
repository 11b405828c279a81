use super::*;
use crate::domain::aggregate::sim::{confusion, simulate};

const K: usize = 5;

/// A confusion matrix that always answers `a`.
fn always(a: usize) -> Vec<Vec<f64>> {
    (0..K).map(|_| (0..K).map(|x| if x == a { 1.0 } else { 0.0 }).collect()).collect()
}

/// 300 items, 5 answers each, from 20 people: 12 good (0.85), 2 always
/// None (class 4), 2 always slot 1, 2 adversarial (0.05), 2 confusing None
/// with slot 2 (the rest right).
fn crowd_of_types() -> (crate::domain::aggregate::sim::Simulated, Reliability) {
    let mut people = vec![confusion(0.85, K, None); 12];
    people.extend([always(4), always(4), always(1), always(1)]);
    people.extend(vec![confusion(0.05, K, None); 2]);
    let mut confuser = confusion(0.95, K, None);
    confuser[4] = vec![0.0125, 0.0125, 0.45, 0.0125, 0.5125];
    confuser[2] = vec![0.0125, 0.0125, 0.5125, 0.0125, 0.45];
    people.extend(vec![confuser; 2]);
    let sim = simulate(11, 300, K, &people, 5);
    let rel = Reliability::fit(&sim.answers, &[], K);
    (sim, rel)
}

#[test]
fn spammers_and_adversaries_do_not_count_and_good_workers_do() {
    let (_, rel) = crowd_of_types();
    for p in 0..12 {
        assert!(rel.counts(p), "good worker {p}: {:?}", rel.people[&p].kappa);
        assert!(rel.people[&p].kappa > 0.6, "{p}: {}", rel.people[&p].kappa);
    }
    for p in 12..18 {
        assert!(!rel.counts(p), "{p} carries no information: kappa {}", rel.people[&p].kappa);
    }
    // Their answers leave the posterior where it was.
    assert_eq!(rel.posterior(&[(12, 4), (14, 1), (16, 0)]), rel.posterior(&[]));
    // Someone the fit has not seen counts as the crowd.
    assert!(rel.counts(999));
    let expected = {
        let mut p = rel.priors.clone();
        (0..K).for_each(|t| p[t] *= rel.crowd[t * K + 3]);
        p[3] / p.iter().sum::<f64>()
    };
    assert!((rel.posterior(&[(999, 3)])[3] - expected).abs() < 1e-12);
}

#[test]
fn a_confusers_none_weighs_little_against_their_slot() {
    let (_, rel) = crowd_of_types();
    let confuser = &rel.people[&18];
    assert!(confuser.counts());
    // Their "None" is about as likely when the truth is slot 2 as when it is None.
    let (given_none, given_slot) = (confuser.confusion[4 * K + 4], confuser.confusion[2 * K + 4]);
    assert!(given_slot > 0.3 && given_none < 0.7, "{given_none} {given_slot}");
    // A good worker's None against slot 2 is decisive, the confuser's is not.
    let good = rel.posterior(&[(0, 4)]);
    let conf = rel.posterior(&[(18, 4)]);
    assert!(good[4] / good[2] > 5.0 * conf[4] / conf[2], "{good:?} {conf:?}");
}

#[test]
fn a_few_lucky_answers_earn_little_trust() {
    // Person 100 answers 2 items, both right by the consensus of 5 good workers.
    let mut people = vec![confusion(0.85, K, None); 5];
    people.extend(vec![confusion(0.6, K, None); 5]);
    let sim = simulate(3, 200, K, &people, 6);
    let mut answers = sim.answers.clone();
    answers.extend([(0, 100, sim.truth[0]), (1, 100, sim.truth[1])]);
    let rel = Reliability::fit(&answers, &[], K);
    let lucky = rel.people[&100].accuracy(&rel.priors);
    let crowd_acc: f64 = (0..K).map(|t| rel.priors[t] * rel.crowd[t * K + t]).sum();
    // Two answers are worth less than the prior's five: shrunk to under
    // half-way between the crowd and certainty.
    assert!(lucky > crowd_acc && lucky < crowd_acc + 0.5 * (1.0 - crowd_acc), "{lucky} vs crowd {crowd_acc}");
    // One answer of theirs alone is far from settling an item.
    assert!(rel.posterior(&[(100, 2)])[2] < 0.9, "{:?}", rel.posterior(&[(100, 2)]));
    // Someone right on 200 answers has earned it.
    let mut more = sim.answers.clone();
    more.extend((0..200u64).map(|i| (i, 100, sim.truth[i as usize])));
    let rel = Reliability::fit(&more, &[], K);
    assert!(rel.people[&100].accuracy(&rel.priors) > 0.95);
}

#[test]
fn gold_answers_are_direct_evidence() {
    let people = vec![confusion(0.8, K, None); 6];
    let sim = simulate(5, 100, K, &people, 4);
    // Person 50 gave no real answers yet, only 12 gold ones: 11 right, one wrong.
    let gold: Vec<(u64, usize, usize)> = (0..12).map(|i| (50, i % K, if i == 0 { 1 } else { i % K })).collect();
    let rel = Reliability::fit(&sim.answers, &gold, K);
    let earned = rel.people[&50].accuracy(&rel.priors);
    assert!(earned > 0.8 && rel.counts(50), "{earned}");
    // The same person failing 60 gold items does not count (12 failures are
    // not yet enough against a prior worth 5 answers per row).
    let bad: Vec<(u64, usize, usize)> = (0..60).map(|i| (50, i % K, (i + 1) % K)).collect();
    assert!(!Reliability::fit(&sim.answers, &bad, K).counts(50));
}

#[test]
fn no_answers_leave_the_prior() {
    let rel = Reliability::fit(&[], &[], K);
    assert_eq!(rel, Reliability::uninformed(K));
    assert_eq!(rel.posterior(&[]), vec![0.2; K]);
    // Out-of-range classes are ignored, in the fit and in a posterior.
    assert_eq!(Reliability::fit(&[(1, 1, 9)], &[(1, 9, 0)], K), Reliability::uninformed(K));
    assert_eq!(rel.posterior(&[(1, 7)]), vec![0.2; K]);
    let row: f64 = rel.crowd[..K].iter().sum();
    assert!((row - 1.0).abs() < 1e-12 && rel.crowd[0] == PRIOR_ACCURACY);
}

#[test]
fn the_fitted_posterior_recovers_a_messy_crowds_truth() {
    let (sim, rel) = crowd_of_types();
    let mut by_item: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
    for &(i, p, c) in &sim.answers {
        by_item.entry(i).or_default().push((p, c));
    }
    let labels: Vec<usize> = (0..sim.truth.len() as u64)
        .map(|i| {
            let post = rel.posterior(&by_item[&i]);
            (0..K).max_by(|&a, &b| post[a].total_cmp(&post[b])).unwrap()
        })
        .collect();
    let (ours, majority) = (sim.score(&labels), sim.score(&sim.majority(K, 1)));
    assert!(ours > majority + 0.05 && ours > 0.85, "{ours} vs majority {majority}");
}

/// 200 items settled by 6 good workers; then people with a dozen answers
/// each on them: a spammer, an adversary, a good worker; and a spammer
/// with too few answers to tell.
#[test]
fn spammers_are_recognised_on_a_dozen_answers_others_settled() {
    let sim = simulate(7, 200, K, &vec![confusion(0.85, K, None); 6], 4);
    let mut answers = sim.answers.clone();
    let truth = |i: u64| sim.truth[i as usize];
    answers.extend((0..12u64).map(|i| (i, 100, 4)));
    answers.extend((20..32u64).map(|i| (i, 101, (truth(i) + 1 + i as usize % 3) % K)));
    answers.extend((40..52u64).map(|i| (i, 102, if i == 41 { (truth(i) + 1) % K } else { truth(i) })));
    answers.extend((60..66u64).map(|i| (i, 103, 4)));
    let rel = Reliability::fit(&answers, &[], K);
    let person = |p: u64| &rel.people[&p];
    for p in [100, 101] {
        assert!(person(p).settled.answers >= MIN_SETTLED, "{p}: {:?}", person(p).settled);
        assert!(rel.uninformative(p) && !rel.counts(p), "{p}: {:?}", person(p));
    }
    // The shrunk rows alone would still count the spammer: a dozen answers
    // are outweighed by the crowd prior.
    assert!(person(100).kappa > MIN_KAPPA, "{:?}", person(100));
    assert!(person(100).settled.kappa.abs() < 0.05 && person(101).settled.kappa < 0.0, "{rel:?}");
    assert!(!rel.uninformative(102) && rel.counts(102) && person(102).settled.kappa > 0.8, "{:?}", person(102));
    assert_eq!(person(103).settled.answers, 6);
    assert!(!rel.uninformative(103), "six answers are too few to tell");
    // Nobody who answered alone is judged, and nobody unseen.
    assert!(!rel.uninformative(999));
    for p in 0..6 {
        assert!(!rel.uninformative(p), "good worker {p}: {:?}", person(p).settled);
    }
    // Gold answers are evidence too: twelve failed gold items, no real answers.
    let gold: Vec<(u64, usize, usize)> = (0..12).map(|i| (50, i % K, (i + 2) % K)).collect();
    assert!(Reliability::fit(&sim.answers, &gold, K).uninformative(50));
}

/// Nine truths in ten are None: a careful person whose settled items are all
/// None agrees with them at kappa 0 (every answer one value, as the
/// reference), yet is no spammer; one who always says None is told apart
/// only once a few settled items of other values show it (audit AN: people
/// right on every item were ended).
#[test]
fn a_careful_person_is_not_uninformative_where_nearly_every_truth_is_one_value() {
    let truth = |i: u64| if i.is_multiple_of(10) { (i / 10 % 4) as usize } else { 4 };
    let mut answers: Vec<(u64, u64, usize)> = Vec::new();
    for i in 0..300u64 {
        for w in 0..4u64 {
            let wrong = (i + w) % 9 == 0;
            answers.push((i, w, if wrong { (truth(i) + 1) % K } else { truth(i) }));
        }
    }
    // 100: right on fifteen items that are all None; 101: right on fifteen
    // with four of other values; 102: always None on those same fifteen.
    let all_none: Vec<u64> = (1..40).filter(|i| i % 10 != 0).take(15).collect();
    let mixed: Vec<u64> = (0..15).map(|x| if x < 4 { x * 10 } else { 100 + x }).collect();
    answers.extend(all_none.iter().map(|&i| (i, 100, truth(i))));
    answers.extend(mixed.iter().map(|&i| (i, 101, truth(i))));
    answers.extend(mixed.iter().map(|&i| (i, 102, 4)));
    let rel = Reliability::fit(&answers, &[], K);
    let person = |p: u64| &rel.people[&p];
    assert!(person(100).settled.answers >= MIN_SETTLED && person(100).settled.kappa.abs() < 1e-9, "{:?}", person(100));
    assert!(person(100).settled.contrast == 0 && !rel.uninformative(100) && rel.counts(100), "{:?}", person(100));
    assert!(person(101).settled.contrast >= MIN_CONTRAST && person(101).settled.kappa > 0.8, "{:?}", person(101));
    assert!(!rel.uninformative(101) && rel.counts(101));
    assert!(person(102).settled.contrast >= MIN_CONTRAST && rel.uninformative(102), "{:?}", person(102));
    for w in 0..4 {
        assert!(!rel.uninformative(w), "good worker {w}: {:?}", person(w).settled);
    }
}

/// PostgreSQL and SQLite hand the answers back in different orders, and a
/// study's answers may be stored in any order: the fit must not care.
#[test]
fn the_order_answers_are_read_in_changes_no_fitted_figure() {
    let (sim, rel) = crowd_of_types();
    let mut shuffled = sim.answers.clone();
    crate::domain::rng::shuffle(&mut shuffled, 7);
    assert_ne!(shuffled, sim.answers);
    assert_eq!(Reliability::fit(&shuffled, &[], K), rel);
}

/// A person's rows without their answer on the item being decided: someone
/// whose only answer is on that item weighs as the crowd, however well
/// that answer agreed with the consensus it joined.
#[test]
fn an_item_is_weighed_without_its_own_answers_in_the_rows() {
    let sim = simulate(9, 150, K, &vec![confusion(0.8, K, None); 8], 4);
    // An item its four answers agree on: settled without person 100.
    let agreed = |i: u64| sim.answers.iter().filter(|a| a.0 == i).all(|a| a.2 == sim.truth[i as usize]);
    let item = (0..150u64).find(|&i| agreed(i)).expect("an item everybody got right");
    let mut answers = sim.answers.clone();
    let truth = sim.truth[item as usize];
    answers.push((item, 100, truth));
    let rel = Reliability::fit(&answers, &[], K);
    assert_eq!(rel.people[&100].answered, vec![(item, truth)], "the one answer the fit read");
    let on_it = rel.weigh(Some(item), &[(100, truth)]);
    assert_eq!(on_it.counted, vec![true]);
    let unseen = rel.weigh(Some(item), &[(999, truth)]);
    assert!((on_it.posterior[truth] - unseen.posterior[truth]).abs() < 1e-12, "{on_it:?} vs {unseen:?}");
    // Read on any other item, the answer the fit saw does lift them.
    let other = item + 1;
    assert!(rel.weigh(Some(other), &[(100, truth)]).posterior[truth] > on_it.posterior[truth] + 1e-3);
    assert_eq!(rel.weigh(None, &[(100, truth)]).posterior, rel.posterior(&[(100, truth)]));
}

/// Bundles of about five answers a person from a crowd of 60 % spammers,
/// adversaries and confusers: the posterior must keep its promise. Fitted
/// with the per-person rows, the crowd centre and priors were talked into
/// a confidence nobody earned (items at 0.95 right on about 80 %).
#[test]
fn a_hostile_crowd_of_small_bundles_keeps_the_posteriors_promise() {
    let mut kinds = vec![confusion(0.85, K, None); 8];
    kinds.extend([always(4), always(1), always(2)]);
    kinds.extend(vec![confusion(0.05, K, None); 3]);
    let mut confuser = confusion(0.9, K, None);
    confuser[4] = vec![0.025, 0.025, 0.45, 0.025, 0.475];
    confuser[2] = vec![0.025, 0.025, 0.475, 0.025, 0.45];
    kinds.extend(vec![confuser; 6]);
    // 20 kinds, 16 people of each: about 5 answers a person.
    let people: Vec<_> = (0..320).map(|p| kinds[p % kinds.len()].clone()).collect();
    let (mut right, mut confident) = (0, 0);
    for seed in [21, 22, 23] {
        let sim = simulate(seed, 400, K, &people, 4);
        let rel = Reliability::fit(&sim.answers, &[], K);
        let mut by_item: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
        sim.answers.iter().for_each(|&(i, p, c)| by_item.entry(i).or_default().push((p, c)));
        for (&i, given) in &by_item {
            let post = rel.weigh(Some(i), given).posterior;
            let label = (0..K).max_by(|&a, &b| post[a].total_cmp(&post[b])).unwrap();
            if post[label] >= 0.95 {
                confident += 1;
                right += usize::from(label == sim.truth[i as usize]);
            }
        }
    }
    let share = right as f64 / confident as f64;
    assert!(confident >= 100 && share >= 0.93, "{right} of {confident} confident items right");
}

/// The value two swappers give on `t`: None (4) for slot 0, slot 2 for slot 1, and back.
fn swapped(t: usize) -> usize {
    match t {
        4 => 0,
        0 => 4,
        1 => 2,
        2 => 1,
        t => t,
    }
}

/// 200 items settled by 8 good workers, then a bundle of 20 more that only
/// two people answered, both swapping the same values (session 48's audit).
fn a_swapping_pair(gold: &[(u64, usize, usize)]) -> (crate::domain::aggregate::sim::Simulated, Reliability) {
    let mut sim = simulate(13, 200, K, &vec![confusion(0.85, K, None); 8], 3);
    let bundle: Vec<usize> = (0..20).map(|x| [4, 0, 1, 2, 4][x % 5]).collect();
    for (x, &t) in bundle.iter().enumerate() {
        let i = 200 + x as u64;
        sim.truth.push(t);
        sim.answers.extend([(i, 100, swapped(t)), (i, 101, swapped(t))]);
    }
    let rel = Reliability::fit(&sim.answers, gold, K);
    (sim, rel)
}

/// Two people who agree only with each other earn nothing from it: on their
/// shared bundle they weigh as two people the fit never saw, where their
/// fitted rows (made of that agreement) would have called a wrong value sure.
#[test]
fn people_who_only_checked_each_other_weigh_as_the_crowd() {
    let (sim, rel) = a_swapping_pair(&[]);
    for i in 200..220u64 {
        let given = swapped(sim.truth[i as usize]);
        let pair = rel.weigh(Some(i), &[(100, given), (101, given)]);
        let strangers = rel.weigh(Some(i), &[(900, given), (901, given)]);
        for (a, b) in pair.posterior.iter().zip(&strangers.posterior) {
            assert!((a - b).abs() < 1e-9, "item {i}: {pair:?} vs {strangers:?}");
        }
        assert_eq!(pair.counted, vec![true, true]);
    }
    // Their fitted rows alone would be sure of the swapped value.
    let (i, given) = (200u64, swapped(sim.truth[200]));
    let mut log: Vec<f64> = rel.priors.iter().map(|p| p.ln()).collect();
    for p in [100, 101] {
        (0..K).for_each(|t| log[t] += rel.people[&p].confusion[t * K + given].ln());
    }
    softmax(&mut log);
    assert!(log[given] > rel.weigh(Some(i), &[(100, given), (101, given)]).posterior[given] + 0.01, "{log:?}");
}

/// Gold answers are evidence about a person whoever they are weighed beside:
/// the pair's failed gold items (None answered as slot 0) make their slot 0
/// weigh less than two strangers' would.
#[test]
fn gold_still_counts_beside_the_people_one_shared_items_with() {
    let gold: Vec<(u64, usize, usize)> = [100, 101].iter().flat_map(|&p| (0..8).map(move |_| (p, 4, 0))).collect();
    let (_, rel) = a_swapping_pair(&gold);
    let pair = rel.weigh(Some(201), &[(100, 0), (101, 0)]).posterior;
    let strangers = rel.weigh(Some(201), &[(900, 0), (901, 0)]).posterior;
    assert!(pair[0] < strangers[0] - 0.1 && pair[4] > strangers[4], "{pair:?} vs {strangers:?}");
}

/// Someone weighed beside a person they shared items with keeps what they
/// earned on items settled by others.
#[test]
fn reliability_earned_elsewhere_is_kept_beside_a_co_rater() {
    let sim = simulate(17, 200, K, &vec![confusion(0.75, K, None); 8], 4);
    let mut answers = sim.answers.clone();
    // Person 100 answers items 0-39 right (each settled by four others);
    // 100 and 101 then share item 300, which nobody else answered.
    answers.extend((0..40u64).map(|i| (i, 100, sim.truth[i as usize])));
    answers.extend([(300, 100, 3), (300, 101, 3)]);
    let rel = Reliability::fit(&answers, &[], K);
    let pair = rel.weigh(Some(300), &[(100, 3), (101, 3)]).posterior;
    let strangers = rel.weigh(Some(300), &[(900, 3), (901, 3)]).posterior;
    // Their doubt is well under the strangers' (the 101's half is the crowd's).
    assert!(1.0 - pair[3] < 0.8 * (1.0 - strangers[3]), "{pair:?} vs {strangers:?}");
}
