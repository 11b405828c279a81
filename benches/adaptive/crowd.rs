//! Seeded crowds for the adaptive bench: `four_image`-like items (slots 0-3
//! and None = class 4) with skewed truth, and people of several kinds, each
//! answering an item the same way whichever strategy asks them.
use hardneg::domain::rng::{mix, SplitMix64};

pub const K: usize = 5;
pub const NONE: usize = 4;
/// How common each true value is: slots 22/16/13/9 %, None 40 %.
pub const TRUTH: [f64; K] = [0.22, 0.16, 0.13, 0.09, 0.40];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Right with accuracy 0.80-0.95, wrong answers spread evenly.
    Good,
    /// Good otherwise, but confuses None with one slot (both ways) 35-60 % of the time.
    Confuser,
    /// Good, but answers None 30-50 % of the time whatever the truth.
    OverusesNone,
    /// Good, but answers a random image 30-50 % of the time whatever the truth.
    OverusesImages,
    /// Always the same slot.
    SpamsLetter,
    /// Always None.
    SpamsNone,
    /// Right 2-12 % of the time (below chance), wrong evenly.
    Adversarial,
    /// Any value at random, whatever the truth.
    Random,
    /// The value after the truth (None after slot 3, slot 0 after None) 85-95 % of the time.
    Rotates,
    /// Adversaries who agree: always the rarest value that is not the truth
    /// (slot 3, or slot 2 where slot 3 is true), the same for all of them.
    Colludes,
    /// Good otherwise, but swap None with slot 0 and slot 1 with slot 2
    /// 90-100 % of the time, the same pairs for all of them (session 48's
    /// audit: a shared, systematic confusion, so their errors agree).
    Swaps,
}

pub const KINDS: [(Kind, &str); 11] = [
    (Kind::Good, "good"),
    (Kind::Confuser, "confuser"),
    (Kind::OverusesNone, "overuses None"),
    (Kind::OverusesImages, "overuses images"),
    (Kind::SpamsLetter, "spams a letter"),
    (Kind::SpamsNone, "spams None"),
    (Kind::Adversarial, "adversarial"),
    (Kind::Random, "random"),
    (Kind::Rotates, "rotates"),
    (Kind::Colludes, "colludes"),
    (Kind::Swaps, "swaps pairs"),
];

pub struct Crowd {
    pub name: &'static str,
    /// Share of each kind, in [`KINDS`] order.
    pub mix: [f64; 11],
}

pub const CROWDS: [Crowd; 3] = [
    Crowd { name: "mostly good", mix: [0.70, 0.15, 0.08, 0.07, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] },
    Crowd { name: "mixed, some spammers", mix: [0.50, 0.20, 0.10, 0.10, 0.05, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0] },
    Crowd { name: "spammers and adversaries", mix: [0.45, 0.15, 0.05, 0.05, 0.08, 0.10, 0.12, 0.0, 0.0, 0.0, 0.0] },
];

/// Not in the recorded tables (`HARDNEG_ADAPTIVE_HOSTILE=1` adds it): only
/// 40 % good people, the rest confusers, spammers and adversaries.
pub const MOSTLY_BAD: Crowd =
    Crowd { name: "mostly bad", mix: [0.40, 0.15, 0.05, 0.0, 0.10, 0.10, 0.20, 0.0, 0.0, 0.0, 0.0] };

/// Not in the recorded tables (`HARDNEG_ADAPTIVE_HOSTILE=1` adds it): an
/// audit's crowd, 42 % good, 38 % answering at random, 8 % rotating the
/// truth, 7 % confusers, 5 % adversarial.
pub const AUDITED: Crowd = Crowd { name: "audited", mix: [0.42, 0.07, 0.0, 0.0, 0.0, 0.0, 0.05, 0.38, 0.08, 0.0, 0.0] };

/// Not in the recorded tables (`HARDNEG_ADAPTIVE_HOSTILE=1` adds it): a
/// later audit's crowd (session 39), mostly careful people with a few who
/// answer at random, rotate the truth, or collude on one wrong value.
pub const COLLUDING: Crowd =
    Crowd { name: "colluding", mix: [0.70, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.14, 0.08, 0.08, 0.0] };

/// Not in the recorded tables (`HARDNEG_ADAPTIVE_HOSTILE=1` adds it):
/// session 48's audit, about half careful people, 20 % who swap the same
/// two pairs of values, and lazy (always the same slot), random and
/// adversarial people.
pub const SWAPPING: Crowd =
    Crowd { name: "swapping", mix: [0.50, 0.0, 0.0, 0.0, 0.10, 0.0, 0.10, 0.10, 0.0, 0.0, 0.20] };

/// Not in the recorded tables (`HARDNEG_ADAPTIVE_HOSTILE=1` adds it): as
/// [`SWAPPING`] with 40 % who swap.
pub const MOSTLY_SWAPPING: Crowd =
    Crowd { name: "mostly swapping", mix: [0.45, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.15, 0.0, 0.0, 0.40] };

/// One simulated study's world: truths and people (confusion matrices).
pub struct World {
    pub seed: u64,
    pub truth: Vec<usize>,
    pub kinds: Vec<Kind>,
    /// Per person, `confusion[t][a]`.
    pub people: Vec<[[f64; K]; K]>,
}

fn pick(rng: &mut SplitMix64, weights: &[f64]) -> usize {
    let mut u = rng.next_f64() * weights.iter().sum::<f64>();
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i;
        }
        u -= w;
    }
    weights.len() - 1
}

fn even(acc: f64) -> [[f64; K]; K] {
    let mut m = [[(1.0 - acc) / (K - 1) as f64; K]; K];
    (0..K).for_each(|t| m[t][t] = acc);
    m
}

fn person(rng: &mut SplitMix64, kind: Kind) -> [[f64; K]; K] {
    let mut between = |lo: f64, hi: f64| lo + (hi - lo) * rng.next_f64();
    match kind {
        Kind::Good => even(between(0.80, 0.95)),
        Kind::Confuser => {
            let (a, c) = (between(0.82, 0.95), between(0.35, 0.60));
            let mut m = even(a);
            let slot = rng.below(NONE);
            for (from, to) in [(NONE, slot), (slot, NONE)] {
                m[from].iter_mut().for_each(|x| *x *= 1.0 - c);
                m[from][to] += c;
            }
            m
        }
        Kind::OverusesNone | Kind::OverusesImages => {
            let (a, o) = (between(0.80, 0.92), between(0.30, 0.50));
            let mut m = even(a);
            for row in m.iter_mut() {
                row.iter_mut().for_each(|x| *x *= 1.0 - o);
                match kind {
                    Kind::OverusesNone => row[NONE] += o,
                    _ => (0..NONE).for_each(|s| row[s] += o / NONE as f64),
                }
            }
            m
        }
        Kind::SpamsLetter | Kind::SpamsNone => {
            let always = if kind == Kind::SpamsNone { NONE } else { rng.below(NONE) };
            let mut m = [[0.0; K]; K];
            m.iter_mut().for_each(|row| row[always] = 1.0);
            m
        }
        Kind::Adversarial => even(between(0.02, 0.12)),
        Kind::Random => [[1.0 / K as f64; K]; K],
        Kind::Colludes => {
            let mut m = [[0.0; K]; K];
            (0..K).for_each(|t| m[t][if t == 3 { 2 } else { 3 }] = 1.0);
            m
        }
        Kind::Swaps => {
            let (a, s) = (between(0.85, 0.95), between(0.90, 1.0));
            let mut m = even(a);
            for (from, to) in [(NONE, 0), (0, NONE), (1, 2), (2, 1)] {
                m[from].iter_mut().for_each(|x| *x *= 1.0 - s);
                m[from][to] += s;
            }
            m
        }
        Kind::Rotates => {
            let r = between(0.85, 0.95);
            let mut m = even(1.0 - r);
            (0..K).for_each(|t| {
                m[t] = [(1.0 - r) / (K - 1) as f64; K];
                m[t][(t + 1) % K] = r;
            });
            m
        }
    }
}

impl World {
    /// `items` items; `people` people with kinds in the crowd's shares
    /// (largest remainder), in a seeded order.
    pub fn new(crowd: &Crowd, seed: u64, items: usize, people: usize) -> World {
        let mut rng = SplitMix64::new(mix(&[seed, 0xC0]));
        let truth = (0..items).map(|_| pick(&mut rng, &TRUTH)).collect();
        let mut counts: Vec<usize> = crowd.mix.iter().map(|s| (s * people as f64).floor() as usize).collect();
        while counts.iter().sum::<usize>() < people {
            let short = (0..counts.len())
                .max_by(|&a, &b| {
                    let gap = |x: usize| crowd.mix[x] * people as f64 - counts[x] as f64;
                    gap(a).total_cmp(&gap(b))
                })
                .unwrap_or(0);
            counts[short] += 1;
        }
        let mut kinds: Vec<Kind> = KINDS.iter().zip(&counts).flat_map(|((k, _), &n)| vec![*k; n]).collect();
        hardneg::domain::rng::shuffle(&mut kinds, mix(&[seed, 0x5E]));
        let people = kinds.iter().map(|&k| person(&mut rng, k)).collect();
        World { seed, truth, kinds, people }
    }

    /// What person `p` answers on item `i`, the same whoever asks.
    pub fn answer(&self, i: usize, p: usize) -> usize {
        let mut rng = SplitMix64::new(mix(&[self.seed, 0xA5, i as u64, p as u64]));
        pick(&mut rng, &self.people[p][self.truth[i]])
    }
}
