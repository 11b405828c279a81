//! MACE (Hovy et al. 2013): the truth is uniform over the seen classes; a
//! person knows the answer with probability θ (competence) and otherwise
//! spams, drawing from a personal strategy ξ. So
//! P(answer a | truth t) = θ·[a = t] + (1 − θ)·ξ(a).
//! EM with smoothed M-steps and seeded random restarts, as crowd-kit 1.4.2's
//! `MACE(method="em")`; the restart with the best log-likelihood wins.
use super::prepared::Prepared;
use super::{softmax_in_place, Fit, Options, PersonExtra};
use crate::domain::rng::{mix, SplitMix64};

/// One restart's parameters.
#[derive(Clone)]
struct Params {
    competence: Vec<f64>,
    /// `strategy[w * kc + a]`.
    strategy: Vec<f64>,
}

/// Expected counts from an E-step: per person (spamming, knowing) and the
/// spammed answers per class.
struct Counts {
    spam: Vec<f64>,
    knowing: Vec<f64>,
    strategy: Vec<f64>,
}

struct Run {
    params: Params,
    q: Vec<f64>,
    log_likelihood: f64,
    iterations: usize,
    converged: bool,
}

/// Gold items' clamped posteriors also fix their expected counts.
pub(super) fn fit(p: &Prepared, opts: &Options) -> Fit {
    let kc = p.classes.len();
    let smoothing = opts.smoothing.unwrap_or(0.01 / kc as f64);
    let per_answer = 1.0 / p.answers() as f64;
    // Every restart's start drawn first: the restarts can then run side by
    // side with the same results. Each person's start is seeded by what they
    // answered, not by where their id sorts, so that a study whose people
    // arrived (and were numbered) in another order fits the same.
    let people = fingerprints(p);
    let starts: Vec<Params> = (0..opts.restarts as u64).map(|r| init(mix(&[opts.seed, r]), &people, kc)).collect();
    let restart = |mut params: Params| {
        let mut q = vec![0.0; p.items.len() * kc];
        let mut counts = e_step(p, &params, &mut q);
        let (mut iterations, mut converged) = (0, false);
        while iterations < opts.max_iter {
            iterations += 1;
            params = m_step(&counts.1, kc, smoothing);
            let next = e_step(p, &params, &mut q);
            let change = (next.0 - counts.0) * per_answer;
            counts = next;
            if change.abs() < opts.tol {
                converged = true;
                break;
            }
        }
        Run { params, q, log_likelihood: counts.0, iterations, converged }
    };
    // The first restart with the strictly best log-likelihood wins.
    let runs = in_parallel(starts, opts.threads, restart);
    let best = runs.into_iter().reduce(|b, r| if r.log_likelihood > b.log_likelihood { r } else { b });
    let run = best.expect("restarts >= 1");
    let extras = (0..p.people.len())
        .map(|w| PersonExtra {
            confusion: None,
            competence: Some(run.params.competence[w]),
            strategy: Some(run.params.strategy[w * kc..(w + 1) * kc].to_vec()),
        })
        .collect();
    Fit {
        q: run.q,
        priors: vec![1.0 / kc as f64; kc],
        extras,
        iterations: run.iterations,
        converged: run.converged,
        objective: run.log_likelihood * per_answer,
    }
}

/// Runs `f` on every start, on up to `threads` threads (none in the
/// browser), and returns the runs in the starts' order.
fn in_parallel(starts: Vec<Params>, threads: usize, f: impl Fn(Params) -> Run + Sync) -> Vec<Run> {
    let threads = threads.min(starts.len());
    if threads <= 1 || cfg!(target_arch = "wasm32") {
        return starts.into_iter().map(f).collect();
    }
    let mut runs: Vec<Option<Run>> = (0..starts.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (starts, f) = (&starts, &f);
                s.spawn(move || {
                    starts
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(r, p)| (r, f(p.clone())))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (r, run) in h.join().expect("a MACE restart panicked") {
                runs[r] = Some(run);
            }
        }
    });
    runs.into_iter().map(|r| r.expect("every restart ran")).collect()
}

/// Per person: a hash of their answers, each an `(item, class)` pair where
/// the item is known by the classes everyone gave it, never by its id: ids
/// and numbering change with a re-import or another arrival order, and the
/// start (so the optimum a sparse crowd settles in) must not (audit AF: a
/// re-imported dataset flipped a label with the same answers).
fn fingerprints(p: &Prepared) -> Vec<u64> {
    let mut answers: Vec<Vec<(u64, u64)>> = vec![Vec::new(); p.people.len()];
    for i in 0..p.items.len() {
        let range = p.starts[i]..p.starts[i + 1];
        let mut given: Vec<u64> = range.clone().map(|x| p.classes[p.label[x] as usize] as u64).collect();
        given.sort_unstable();
        let item = given.iter().fold(0x6974_656du64, |h, &c| mix(&[h, c]));
        for x in range {
            answers[p.person[x] as usize].push((item, p.classes[p.label[x] as usize] as u64));
        }
    }
    answers
        .into_iter()
        .map(|mut a| {
            a.sort_unstable();
            a.iter().fold(0x6d61_6365u64, |h, &(item, class)| mix(&[h, item, class]))
        })
        .collect()
}

/// crowd-kit's start: (spam, know) and the strategy drawn from U(1, 2.5),
/// normalised; each person's from their own stream of `restart`'s seed.
fn init(restart: u64, people: &[u64], kc: usize) -> Params {
    let mut competence = Vec::with_capacity(people.len());
    let mut strategy = Vec::with_capacity(people.len() * kc);
    for &fingerprint in people {
        let mut rng = SplitMix64::new(mix(&[restart, fingerprint]));
        let mut draw = || 1.0 + 1.5 * rng.next_f64();
        let (spam, know) = (draw(), draw());
        competence.push(know / (spam + know));
        let row: Vec<f64> = (0..kc).map(|_| draw()).collect();
        let sum: f64 = row.iter().sum();
        strategy.extend(row.iter().map(|x| x / sum));
    }
    Params { competence, strategy }
}

/// Posteriors into `q` (gold clamped), and the log-likelihood with the
/// expected counts for the next M-step.
fn e_step(p: &Prepared, params: &Params, q: &mut [f64]) -> (f64, Counts) {
    let kc = p.classes.len();
    let people = p.people.len();
    // P(a | t ≠ a) and P(a | t = a) per (person, answer), and their logs.
    let mut off = vec![0.0; people * kc];
    let mut on = vec![0.0; people * kc];
    for w in 0..people {
        let theta = params.competence[w];
        for a in 0..kc {
            off[w * kc + a] = (1.0 - theta) * params.strategy[w * kc + a];
            on[w * kc + a] = off[w * kc + a] + theta;
        }
    }
    let log_off: Vec<f64> = off.iter().map(|x| x.ln()).collect();
    let log_gain: Vec<f64> = on.iter().zip(&off).map(|(n, f)| n.ln() - f.ln()).collect();
    let uniform = -(kc as f64).ln();
    let mut log_likelihood = 0.0;
    for i in 0..p.items.len() {
        let row = &mut q[i * kc..(i + 1) * kc];
        let mut base = uniform;
        row.iter_mut().for_each(|x| *x = 0.0);
        for x in p.starts[i]..p.starts[i + 1] {
            let wa = p.person[x] as usize * kc + p.label[x] as usize;
            base += log_off[wa];
            row[p.label[x] as usize] += log_gain[wa];
        }
        row.iter_mut().for_each(|x| *x += base);
        log_likelihood += softmax_in_place(row);
    }
    p.clamp_gold(q);

    let mut counts = Counts { spam: vec![0.0; people], knowing: vec![0.0; people], strategy: vec![0.0; people * kc] };
    for i in 0..p.items.len() {
        for x in p.starts[i]..p.starts[i + 1] {
            let (w, a) = (p.person[x] as usize, p.label[x] as usize);
            // Knowing is possible only when the truth is the answer given.
            let know = q[i * kc + a] * params.competence[w] / on[w * kc + a];
            counts.knowing[w] += know;
            counts.spam[w] += 1.0 - know;
            counts.strategy[w * kc + a] += 1.0 - know;
        }
    }
    (log_likelihood, counts)
}

/// Smoothed normalisation of the expected counts (crowd-kit's `normalize`).
fn m_step(c: &Counts, kc: usize, smoothing: f64) -> Params {
    let competence = c.knowing.iter().zip(&c.spam).map(|(k, s)| (k + smoothing) / (k + s + 2.0 * smoothing)).collect();
    let mut strategy = c.strategy.clone();
    for row in strategy.chunks_mut(kc) {
        let sum: f64 = row.iter().map(|x| x + smoothing).sum();
        row.iter_mut().for_each(|x| *x = (*x + smoothing) / sum);
    }
    Params { competence, strategy }
}
