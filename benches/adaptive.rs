//! Adaptive stopping on realistic crowds: `cargo bench --bench adaptive`.
//! Three seeded crowds ([`crowd::CROWDS`]; one with spammers and adversarial
//! workers) of 60 people on 600 `four_image`-like items with skewed truth.
//! People arrive at random, take a bundle of up to 20 items that want an
//! answer (follow-ups first), and answer them interleaved with the others at
//! work (8 at a time); an item's round is decided online the moment its
//! last wanted answer arrives, by `Adaptive::decide` on the reliabilities
//! as fitted then (`Reliability::fit`, refitted once answers have grown by a
//! tenth, as the server does). Items left at `max` are settled as
//! `resolve = "dawid_skene"` settles them on the server
//! (`studies::aggregate::settle`). With `end_uninformative` (the spec's
//! default under `stop = "posterior"`; `HARDNEG_ADAPTIVE_END=0` turns it
//! off), a person `Adaptive::ends_place` recognises as carrying no
//! information gives back the rest of their bundle (those items go to the
//! front of the queue, as the server's follow-up bundles) and takes no
//! other: the server's link studies end such a place, its account studies
//! offer such an annotator nothing more. Two ways of arriving are measured:
//! 60 people who come back for more bundles (account studies), and, as a
//! link study's participants, people who hold one place each (a fresh
//! person per bundle, drawn from a crowd of 600; a follow-up bundle near the
//! end may hold one item, so its taker gives one answer, whom the crowd
//! model weighs at the pooled crowd: `domain::aggregate::sparse`).
//! `HARDNEG_ADAPTIVE_PLACES=many` or `one` runs only that one;
//! `HARDNEG_ADAPTIVE_BUNDLE` and `HARDNEG_ADAPTIVE_ITEMS` change the bundle
//! size and the items per crowd, `HARDNEG_ADAPTIVE_HOSTILE=1` adds a crowd
//! of 60 % bad workers ([`crowd::MOSTLY_BAD`]) and the audit's crowd
//! ([`crowd::AUDITED`]), a colluding crowd and two that swap values
//! ([`crowd::SWAPPING`]); `HARDNEG_ADAPTIVE_CROWDS` runs only the crowds it
//! names (comma-separated). The
//! baseline: the same people at a fixed overlap of 5, settled by
//! Dawid-Skene.
//!
//! Seeds: the stop rule's constants (prior strength, kappa floor, two
//! agreeing people) were chosen on a prototype of these crowds with seeds
//! 1-3, and those recognising people who carry no information (settled at
//! 0.8, 10 answers) on this bench with seeds 1-3; the figures use seed
//! `HARDNEG_ADAPTIVE_SEED` (default 20261125, never used while tuning;
//! 20261126 was run once, after).
#[path = "adaptive/crowd.rs"]
mod crowd;

use crowd::{World, CROWDS, K};
use hardneg::domain::adaptive::{Adaptive, Decision, Reason, Reliability, Stop};
use hardneg::domain::aggregate::{aggregate_pooling_sparse, Model, Options};
use hardneg::domain::resolution::{ItemState, ResolvedBy};
use hardneg::domain::rng::{mix, shuffle, SplitMix64};
use hardneg::domain::survey::SurveyKind;
use std::collections::{HashMap, HashSet, VecDeque};

/// Items per crowd; `HARDNEG_ADAPTIVE_ITEMS` changes it.
const ITEMS: usize = 600;
const PEOPLE: usize = 60;
/// The crowd one-place participants are drawn from (each comes once).
const ONE_PLACE_PEOPLE: usize = 600;
/// Bundle size; `HARDNEG_ADAPTIVE_BUNDLE` changes it (a link study's small bundles).
const BUNDLE: usize = 20;
const AT_WORK: usize = 8;
const THRESHOLD: f64 = 0.95;
const DEFAULT_SEED: u64 = 20_261_125;

/// A setting from the environment, or its default.
fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

struct Run {
    /// Per item: why it stopped, its value and posterior.
    stops: Vec<(Reason, usize, f64)>,
    answers: Vec<(u64, u64, usize)>,
    /// People whose place was ended as carrying no information.
    ended: HashSet<usize>,
}

/// The study as the server runs it, answer by answer; with `one_place`,
/// each person takes one bundle and never comes back.
fn run(world: &World, rule: Adaptive, seed: u64, one_place: bool) -> Run {
    let n = world.truth.len();
    let mut rng = SplitMix64::new(mix(&[seed, 0xA2]));
    let (mut wanted, mut assigned) = (vec![rule.min; n], vec![0usize; n]);
    let mut had: Vec<HashSet<usize>> = vec![HashSet::new(); n];
    let mut given: Vec<Vec<(u64, usize)>> = vec![Vec::new(); n];
    let mut stops: Vec<Option<(Reason, usize, f64)>> = vec![None; n];
    let mut queue: VecDeque<usize> = (0..n).collect();
    let mut at_work: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut answers = Vec::new();
    let (mut rel, mut fitted_at) = (Reliability::uninformed(K), None::<usize>);
    let mut ended: HashSet<usize> = HashSet::new();
    let mut stopped = 0;
    let mut fresh = 0..world.people.len();
    let bundle_size = knob("HARDNEG_ADAPTIVE_BUNDLE", BUNDLE);
    while stopped < n {
        let mut tries = 0;
        while at_work.len() < AT_WORK && !queue.is_empty() && tries < 1_000 {
            tries += 1;
            let person = match one_place {
                true => fresh.next().expect("the crowd has people left for every place"),
                false => rng.below(world.people.len()),
            };
            if ended.contains(&person) {
                continue;
            }
            let mut bundle = Vec::new();
            queue.retain(|&i| {
                if bundle.len() >= bundle_size || had[i].contains(&person) || assigned[i] >= wanted[i] {
                    return true;
                }
                bundle.push(i);
                had[i].insert(person);
                assigned[i] += 1;
                assigned[i] < wanted[i]
            });
            if !bundle.is_empty() {
                shuffle(&mut bundle, rng.next_u64());
                at_work.push((person, bundle));
            } else if one_place {
                break; // nothing to hand out now: no fresh person is spent on it
            }
        }
        assert!(!at_work.is_empty(), "nobody at work with {} items open", n - stopped);
        let w = rng.below(at_work.len());
        let person = at_work[w].0;
        let i = at_work[w].1.pop().expect("bundles are not empty");
        if at_work[w].1.is_empty() {
            at_work.swap_remove(w);
        }
        let class = world.answer(i, person);
        given[i].push((person as u64, class));
        answers.push((i as u64, person as u64, class));
        // As the server: the fit is looked at on every answer, refitted
        // once answers have grown by a tenth.
        if fitted_at.is_none_or(|at| (answers.len() - at) * 10 >= at.max(1)) {
            rel = Reliability::fit(&answers, &[], K);
            fitted_at = Some(answers.len());
        }
        if !ended.contains(&person) && rule.ends_place(person as u64, &rel) {
            ended.insert(person);
            while let Some(w) = at_work.iter().position(|b| b.0 == person) {
                for j in at_work.swap_remove(w).1 {
                    assigned[j] -= 1;
                    if !queue.contains(&j) {
                        queue.push_front(j);
                    }
                }
            }
        }
        if given[i].len() < wanted[i] {
            continue;
        }
        match rule.decide(i as u64, &given[i], &rel) {
            Decision::Stop { reason, label, posterior } => {
                stops[i] = Some((reason, label, posterior));
                stopped += 1;
            }
            Decision::More => {
                wanted[i] += 1;
                queue.push_front(i);
            }
        }
    }
    Run { stops: stops.into_iter().map(|s| s.expect("every item stops")).collect(), answers, ended }
}

/// The settled value per item: the stop rule's where it stopped early,
/// Dawid-Skene's (on a value somebody gave) where it reached `max`.
fn settled(world: &World, run: &Run) -> Vec<usize> {
    let kind = SurveyKind::parse("four_image").expect("a kind");
    let values = kind.values();
    let mut states: Vec<ItemState> = run
        .stops
        .iter()
        .map(|&(reason, label, _)| match reason {
            Reason::Max => ItemState::Disputed { values: vec![] },
            _ => ItemState::Final { value: values[label].to_string(), by: ResolvedBy::Adaptive },
        })
        .collect();
    let settled_early: HashSet<i64> =
        run.stops.iter().enumerate().filter(|(_, s)| s.0 != Reason::Max).map(|(i, _)| i as i64).collect();
    let scope = hardneg::studies::aggregate::Scope { settled: settled_early, only_given: true };
    // As the server settles: people with one answer are weighed at the pooled crowd.
    let answers = &run.answers;
    let mut posteriors = vec![None; states.len()];
    let items = states.iter_mut().zip(posteriors.iter_mut()).enumerate().map(|(i, (s, p))| (i as i64, s, p));
    let kind_seed = world.seed;
    hardneg::studies::aggregate::settle(Model::DawidSkene, kind, kind_seed, answers, &HashMap::new(), &scope, items);
    states
        .iter()
        .zip(&run.stops)
        .map(|(s, stop)| match s {
            ItemState::Final { value, .. } => values.iter().position(|v| v == value).unwrap_or(0),
            _ => stop.1,
        })
        .collect()
}

fn right(world: &World, labels: &[usize]) -> usize {
    labels.iter().zip(&world.truth).filter(|(l, t)| l == t).count()
}

/// P(X <= right) for X ~ Binomial(n, p): the one-sided test of "right at p".
fn binomial_cdf(right: usize, n: usize, p: f64) -> f64 {
    let (mut log_pmf, mut logs) = (n as f64 * (1.0 - p).ln(), Vec::with_capacity(right + 1));
    for j in 0..=right {
        logs.push(log_pmf);
        log_pmf += ((n - j) as f64 / (j + 1) as f64).ln() + (p / (1.0 - p)).ln();
    }
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (top + logs.iter().map(|l| (l - top).exp()).sum::<f64>().ln()).exp().min(1.0)
}

#[derive(Default)]
struct Tally {
    items: usize,
    confident: usize,
    confident_right: usize,
    answers: usize,
    fixed_answers: usize,
    right: usize,
    fixed_right: usize,
    /// Per posterior bin: (items, right, sum of posteriors); confident items, then those at max.
    bins: [[(usize, usize, f64); 6]; 2],
}

const BINS: [f64; 7] = [0.0, 0.8, 0.95, 0.97, 0.98, 0.99, 1.000_001];

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.items += o.items;
        self.confident += o.confident;
        self.confident_right += o.confident_right;
        self.answers += o.answers;
        self.fixed_answers += o.fixed_answers;
        self.right += o.right;
        self.fixed_right += o.fixed_right;
        for (mine, theirs) in self.bins.iter_mut().zip(&o.bins) {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m = (m.0 + t.0, m.1 + t.1, m.2 + t.2);
            }
        }
    }

    fn row(&self, name: &str) {
        let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        let conf = share(self.confident_right, self.confident);
        println!(
            "{name:<26} {:>5} {:>6} {:>7.2}% {:>7.3} {:>7} {:>6.1}% {:>8.2}% {:>8.2}% {:>+6.2}",
            self.items,
            self.confident,
            100.0 * conf,
            binomial_cdf(self.confident_right, self.confident, THRESHOLD),
            self.answers,
            100.0 * share(self.answers, self.fixed_answers),
            100.0 * share(self.right, self.items),
            100.0 * share(self.fixed_right, self.items),
            100.0 * (share(self.right, self.items) - share(self.fixed_right, self.items)),
        );
    }
}

/// The crowd's figures, and how many of each kind had their place ended.
fn measure(world: &World, seed: u64, one_place: bool) -> (Tally, String) {
    let end_uninformative = std::env::var("HARDNEG_ADAPTIVE_END").map_or(true, |v| v != "0");
    let stop = Stop::Posterior { threshold: THRESHOLD };
    let rule = Adaptive { min: 2, max: 5, stop, allow_unchosen: false, end_uninformative };
    let adaptive = run(world, rule, seed, one_place);
    let fixed_rule = Adaptive { min: 5, max: 5, stop: Stop::Agree, allow_unchosen: false, end_uninformative: false };
    let fixed = run(world, fixed_rule, seed, one_place);
    let opts = Options { seed: world.seed, ..Options::dawid_skene() };
    let ds = aggregate_pooling_sparse(Model::DawidSkene, &fixed.answers, K, &[], &opts).expect("a crowd to fit");
    let items = world.truth.len();
    let fixed_labels: Vec<usize> = (0..items).map(|i| ds.item(i as u64).map_or(usize::MAX, |p| p.label)).collect();
    let labels = settled(world, &adaptive);
    let ended = kinds_of(world, adaptive.ended.iter().copied());
    let mut t = Tally {
        items,
        answers: adaptive.answers.len(),
        fixed_answers: fixed.answers.len(),
        right: right(world, &labels),
        fixed_right: right(world, &fixed_labels),
        ..Tally::default()
    };
    for (i, &(reason, label, p)) in adaptive.stops.iter().enumerate() {
        let is_right = label == world.truth[i];
        let which = usize::from(reason == Reason::Max);
        if which == 0 {
            t.confident += 1;
            t.confident_right += usize::from(is_right);
        }
        let bin = BINS.windows(2).position(|w| p >= w[0] && p < w[1]).unwrap_or(0);
        let b = &mut t.bins[which][bin];
        *b = (b.0 + 1, b.1 + usize::from(is_right), b.2 + p);
    }
    (t, if ended.is_empty() { "nobody".into() } else { ended })
}

/// How many of `people` are of each kind, e.g. "3 good, 1 spams None".
fn kinds_of(world: &World, people: impl Iterator<Item = usize> + Clone) -> String {
    let counts = crowd::KINDS.iter().filter_map(|(k, name)| {
        let n = people.clone().filter(|&p| world.kinds[p] == *k).count();
        (n > 0).then(|| format!("{n} {name}"))
    });
    counts.collect::<Vec<_>>().join(", ")
}

fn main() {
    let seed: u64 = std::env::var("HARDNEG_ADAPTIVE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEED);
    let places = std::env::var("HARDNEG_ADAPTIVE_PLACES").unwrap_or_default();
    for one_place in [false, true] {
        if places == if one_place { "many" } else { "one" } {
            continue;
        }
        report(seed, one_place);
    }
}

/// Every crowd's table, calibration and the target, for one way of arriving.
fn report(seed: u64, one_place: bool) {
    let (items, bundle) = (knob("HARDNEG_ADAPTIVE_ITEMS", ITEMS), knob("HARDNEG_ADAPTIVE_BUNDLE", BUNDLE));
    // Enough fresh people for every place a one-place study can hand out.
    let one_place_people = ONE_PLACE_PEOPLE.max(items * 6 / bundle + AT_WORK);
    let (people, arriving) = match one_place {
        true => (one_place_people, "each person holds one place (a link study), drawn from"),
        false => (PEOPLE, "people come back for more bundles:"),
    };
    println!(
        "\n== adaptive stopping (stop = \"posterior\", threshold {THRESHOLD}, min 2, max 5) on {items} items, seed {seed}; {arriving} {people} people per crowd"
    );
    println!("truth: slots 22/16/13/9 %, None 40 %; people arrive at random, {AT_WORK} at work, bundles of {bundle}");
    let mut pooled = Tally::default();
    let mut rows = Vec::new();
    let hostile = std::env::var("HARDNEG_ADAPTIVE_HOSTILE").is_ok_and(|v| v == "1");
    let crowds = CROWDS
        .iter()
        .chain(hostile.then_some(&crowd::MOSTLY_BAD))
        .chain(hostile.then_some(&crowd::AUDITED))
        .chain(hostile.then_some(&crowd::COLLUDING))
        .chain(hostile.then_some(&crowd::SWAPPING))
        .chain(hostile.then_some(&crowd::MOSTLY_SWAPPING));
    // `HARDNEG_ADAPTIVE_CROWDS=swapping,colluding` runs only the crowds named.
    let only = std::env::var("HARDNEG_ADAPTIVE_CROWDS").unwrap_or_default();
    let named = |c: &crowd::Crowd| only.is_empty() || only.split(',').any(|n| n.trim() == c.name);
    for (c, crowd) in crowds.enumerate() {
        if !named(crowd) {
            continue;
        }
        let world = World::new(crowd, mix(&[seed, c as u64]), items, people);
        println!("crowd {:?}: {}", crowd.name, kinds_of(&world, 0..people));
        let (t, ended) = measure(&world, mix(&[seed, c as u64, 1]), one_place);
        println!("  places ended as carrying no information: {ended}");
        pooled.add(&t);
        rows.push((crowd.name, t));
    }
    println!(
        "\n{:<26} {:>5} {:>6} {:>8} {:>7} {:>7} {:>7} {:>9} {:>9} {:>6}",
        "crowd", "items", "confid", "right", "p(<.95)", "answers", "of 5x", "accuracy", "fixed5+DS", "diff"
    );
    for (name, t) in &rows {
        t.row(name);
    }
    pooled.row("pooled");
    println!("\ncalibration (pooled): the stop posterior against the share right");
    println!("{:<14} {:>22} {:>22}", "posterior", "confident: n / mean p / right", "at max: n / mean p / right");
    for (b, w) in BINS.windows(2).enumerate() {
        let cell = |x: (usize, usize, f64)| {
            if x.0 == 0 {
                format!("{:>22}", "-")
            } else {
                format!("{:>6} / {:.3} / {:>6.2}%", x.0, x.2 / x.0 as f64, 100.0 * x.1 as f64 / x.0 as f64)
            }
        };
        println!("[{:.2}, {:.2}) {} {}", w[0], w[1].min(1.0), cell(pooled.bins[0][b]), cell(pooled.bins[1][b]));
    }
    let conf = pooled.confident_right as f64 / pooled.confident.max(1) as f64;
    let p = binomial_cdf(pooled.confident_right, pooled.confident, THRESHOLD);
    let share = pooled.answers as f64 / pooled.fixed_answers as f64;
    let (acc, fixed) = (pooled.right as f64 / pooled.items as f64, pooled.fixed_right as f64 / pooled.items as f64);
    let met =
        pooled.confident >= 1_000 && conf >= THRESHOLD - 0.01 && p >= 0.05 && acc >= fixed - 0.01 && share <= 0.65;
    println!(
        "\ntarget (>= 1,000 confident items right at >= {:.0}% and not significantly below {:.0}% (one-sided binomial, 5%); \
         accuracy within 1 point of fixed 5 + DS on <= 65% of its answers): {}",
        100.0 * (THRESHOLD - 0.01),
        100.0 * THRESHOLD,
        if met { "met" } else { "NOT met" }
    );
}
