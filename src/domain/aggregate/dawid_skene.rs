//! Dawid–Skene: each person has a confusion matrix P(answer | truth), the
//! classes have priors; EM alternates item posteriors (E) and the matrices
//! and priors they imply (M). Steps as crowd-kit 1.4.2's `DawidSkene`.
use super::prepared::{class_means, Prepared};
use super::{softmax_in_place, Fit, Options, PersonExtra};

/// Floor for probabilities before taking logs (crowd-kit's `_EPS`).
const EPS: f64 = 1e-10;

pub(super) fn fit(p: &Prepared, opts: &Options) -> Fit {
    let kc = p.classes.len();
    let mut q = p.vote_shares();
    let mut priors = class_means(&q, kc);
    let mut errors = m_step(p, &q);
    let (mut loss, mut iterations, mut converged) = (f64::NEG_INFINITY, 0, false);
    while iterations < opts.max_iter {
        iterations += 1;
        e_step(p, &priors, &errors, &mut q);
        p.clamp_gold(&mut q);
        priors = class_means(&q, kc);
        errors = m_step(p, &q);
        let new_loss = elbo(p, &q, &priors, &errors) / p.answers() as f64;
        // crowd-kit's test: a rise smaller than tol (or any fall) stops.
        if new_loss - loss < opts.tol {
            loss = new_loss;
            converged = true;
            break;
        }
        loss = new_loss;
    }
    let extras = (0..p.people.len())
        .map(|w| {
            // errors[w][answer][truth] → confusion[truth][answer].
            let m = (0..kc).map(|t| (0..kc).map(|a| errors[(w * kc + a) * kc + t]).collect()).collect();
            PersonExtra { confusion: Some(m), competence: None, strategy: None }
        })
        .collect();
    Fit { q, priors, extras, iterations, converged, objective: loss }
}

/// Expected counts of (person, answer, truth), floored at EPS where the
/// person gave that answer at all, each truth's column normalised over answers.
/// Layout: `errors[(w * kc + answer) * kc + truth]`.
fn m_step(p: &Prepared, q: &[f64]) -> Vec<f64> {
    let kc = p.classes.len();
    let mut e = vec![0.0; p.people.len() * kc * kc];
    for i in 0..p.items.len() {
        let row = &q[i * kc..(i + 1) * kc];
        for x in p.starts[i]..p.starts[i + 1] {
            let base = (p.person[x] as usize * kc + p.label[x] as usize) * kc;
            for (t, &qt) in row.iter().enumerate() {
                e[base + t] += qt;
            }
        }
    }
    for person in e.chunks_mut(kc * kc) {
        // Answers the person never gave stay at 0 (crowd-kit has no row for them).
        let used: Vec<bool> = person.chunks(kc).map(|r| r.iter().any(|&x| x > 0.0)).collect();
        for (a, row) in person.chunks_mut(kc).enumerate() {
            if used[a] {
                row.iter_mut().for_each(|x| *x = x.max(EPS));
            }
        }
        for t in 0..kc {
            let sum: f64 = (0..kc).map(|a| person[a * kc + t]).sum();
            if sum > 0.0 {
                (0..kc).for_each(|a| person[a * kc + t] /= sum);
            }
        }
    }
    e
}

/// Item i's unnormalised log posterior: log prior + Σ log P(answer | truth).
fn log_scores(p: &Prepared, priors: &[f64], log_errors: &[f64], i: usize, out: &mut [f64]) {
    let kc = p.classes.len();
    for (t, o) in out.iter_mut().enumerate() {
        *o = priors[t].max(EPS).ln();
    }
    for x in p.starts[i]..p.starts[i + 1] {
        let base = (p.person[x] as usize * kc + p.label[x] as usize) * kc;
        for (t, o) in out.iter_mut().enumerate() {
            *o += log_errors[base + t];
        }
    }
}

fn logs(errors: &[f64]) -> Vec<f64> {
    errors.iter().map(|&x| x.ln()).collect()
}

fn e_step(p: &Prepared, priors: &[f64], errors: &[f64], q: &mut [f64]) {
    let kc = p.classes.len();
    let log_errors = logs(errors);
    for i in 0..p.items.len() {
        let row = &mut q[i * kc..(i + 1) * kc];
        log_scores(p, priors, &log_errors, i, row);
        softmax_in_place(row);
    }
}

/// crowd-kit's evidence lower bound: E_q[log P(answers, truth)] + H(q), with
/// the log prior counted once per answer as crowd-kit does (so stopping,
/// and hence iteration counts, match the reference).
fn elbo(p: &Prepared, q: &[f64], priors: &[f64], errors: &[f64]) -> f64 {
    let kc = p.classes.len();
    let log_errors = logs(errors);
    let log_priors: Vec<f64> = priors.iter().map(|&x| x.max(EPS).ln()).collect();
    let mut total = 0.0;
    for i in 0..p.items.len() {
        let row = &q[i * kc..(i + 1) * kc];
        for x in p.starts[i]..p.starts[i + 1] {
            let base = (p.person[x] as usize * kc + p.label[x] as usize) * kc;
            for t in 0..kc {
                total += row[t] * (log_errors[base + t] + log_priors[t]);
            }
        }
        total -= row.iter().map(|&x| x.max(EPS) * x.max(EPS).ln()).sum::<f64>();
    }
    total
}
