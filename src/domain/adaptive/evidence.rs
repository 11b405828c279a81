//! Recognising people who carry no information (spammers, adversaries) from
//! their answers on items that *other people* settled: the fitted, shrunk
//! rows of [`super::reliability`] lean on the crowd prior for dozens of
//! answers, so they keep a spammer looking like a middling worker far too
//! long. Here each answer is compared with its item's posterior without
//! that person's own answer (leave-one-out), and only where that posterior
//! is settled (at least [`SETTLED`]); gold answers compare with their known
//! truth. Their Cohen's kappa against those values is, unshrunk, zero for
//! someone who always gives the same value or answers at random, and below
//! zero for an adversary. It is zero too for a careful person whose settled
//! items all have one value (most truths None: kappa's prevalence paradox),
//! so the evidence also counts the settled items of other values
//! ([`Settled::contrast`]): without a few, it cannot tell them apart.

/// Leave-one-out posterior an item's value needs for an answer on it to be evidence.
pub const SETTLED: f64 = 0.8;
/// Answers on settled items (or gold) before a person can be recognised as
/// carrying no information: few enough to act within a bundle, enough that
/// a good worker's kappa is not at the floor by bad luck.
pub const MIN_SETTLED: usize = 10;
/// Of those, items settled on another value than the commonest: where nearly
/// every truth is one value, only they tell a careful person from a spammer.
pub const MIN_CONTRAST: usize = 3;

/// Per person: answers on settled items (gold included) and their kappa
/// against the settled values (0 without any).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Settled {
    pub answers: usize,
    pub kappa: f64,
    /// How many of those items settled on another value than the commonest
    /// one among them (each item counted by its most probable value, not
    /// its posterior mass: twenty None items settled at 0.8-0.9 left 3 items'
    /// worth of mass on other values, a verifier found): the items that can
    /// show whether the person tells values apart (an audit AN crowd, 90 %
    /// None: people right on every item were ended as uninformative at kappa 0).
    pub contrast: usize,
}

impl Settled {
    /// Enough evidence to judge the person by their kappa.
    pub fn enough(&self) -> bool {
        self.answers >= MIN_SETTLED && self.contrast >= MIN_CONTRAST
    }
}

/// `rows`: `(item, person, class)` by index; `gold`: `(person, truth,
/// class)`; `q`: each item's posterior (`k` per item) as the fit ends;
/// `confusion`: each person's `k * k` rows; `counts`: whose answers are in `q`.
pub fn settled(
    rows: &[(usize, usize, usize)],
    gold: &[(usize, usize, usize)],
    q: &[f64],
    confusion: &[f64],
    counts: &[bool],
    k: usize,
) -> Vec<Settled> {
    let people = counts.len();
    // Per person: agreement, answer counts and reference shares, summed.
    let mut agree = vec![0.0; people];
    let mut n = vec![0usize; people];
    let mut answered = vec![0.0; people * k];
    let mut reference = vec![0.0; people * k];
    // Per person and value: the settled items whose most probable value it is.
    let mut settled_as = vec![0usize; people * k];
    let mut add = |w: usize, r: &[f64], c: usize| {
        agree[w] += r[c];
        n[w] += 1;
        answered[w * k + c] += 1.0;
        reference[w * k..(w + 1) * k].iter_mut().zip(r).for_each(|(s, x)| *s += x);
        let value = (0..k).fold(0, |best, t| if r[t] > r[best] { t } else { best });
        settled_as[w * k + value] += 1;
    };
    let mut without = vec![0.0; k];
    for &(i, w, c) in rows {
        without.copy_from_slice(&q[i * k..(i + 1) * k]);
        if counts[w] {
            // Divides the person's own answer out of the item's posterior.
            without.iter_mut().enumerate().for_each(|(t, x)| *x /= confusion[(w * k + t) * k + c].max(1e-12));
            let sum: f64 = without.iter().sum();
            without.iter_mut().for_each(|x| *x /= sum);
        }
        if without.iter().copied().fold(0.0, f64::max) >= SETTLED {
            add(w, &without, c);
        }
    }
    let mut truth = vec![0.0; k];
    for &(w, t, c) in gold {
        truth.iter_mut().enumerate().for_each(|(x, v)| *v = f64::from(u8::from(x == t)));
        add(w, &truth, c);
    }
    (0..people)
        .map(|w| {
            if n[w] == 0 {
                return Settled::default();
            }
            let total = n[w] as f64;
            let observed = agree[w] / total;
            let chance: f64 = (0..k).map(|a| answered[w * k + a] * reference[w * k + a]).sum::<f64>() / (total * total);
            let kappa = if chance >= 1.0 { 0.0 } else { (observed - chance) / (1.0 - chance) };
            let commonest = settled_as[w * k..(w + 1) * k].iter().copied().max().unwrap_or(0);
            Settled { answers: n[w], kappa, contrast: n[w] - commonest }
        })
        .collect()
}
