//! Demo prompts for the `ranking` kind: a caption and 2–5 drawn images of
//! which the k-th gets k details wrong (a colour, then a shape, then the
//! relation, then a size), stored in a seeded order. The truth is known: the
//! fewer details wrong, the better the match. Two demo models score the
//! images: `demo-exact` by the details right (it agrees with the truth),
//! `demo-random` at random.
use super::{edits, render, Colour, Relation, Scene, Shape, Size};
use crate::domain::category::Category;
use crate::domain::rng::{mix, shuffle, SplitMix64};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct DemoPrompt {
    pub key: String,
    pub prompt: String,
    pub category: Category,
    /// PNGs in stored (slot) order.
    pub images: Vec<Vec<u8>>,
    /// Details wrong per slot; the true order sorts slots by it.
    pub errors: Vec<usize>,
    pub scores: BTreeMap<String, Vec<f64>>,
}

impl DemoPrompt {
    /// The slots best first.
    pub fn truth(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = (0..self.errors.len()).collect();
        slots.sort_by_key(|&s| self.errors[s]);
        slots
    }
}

fn other<T: Copy + PartialEq>(all: &[T], not: &[T], rng: &mut SplitMix64) -> T {
    let left: Vec<T> = all.iter().copied().filter(|x| !not.contains(x)).collect();
    left[rng.below(left.len())]
}

/// `count` prompts with 2, 3, 4, 5, 2, … images; reproducible from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<DemoPrompt> {
    (0..count)
        .map(|i| {
            let mut rng = SplitMix64::new(mix(&[seed, i as u64, 0x4A4E]));
            let category = super::triplets::SUBSETS[i % super::triplets::SUBSETS.len()];
            let positive = edits::positive_for(category, &mut rng);
            let n = 2 + i % 4;
            let mut wrong = positive;
            let mut drawn = Vec::with_capacity(n);
            for k in 0..n {
                match k {
                    0 => {}
                    1 => {
                        let used = [positive.subject.colour, positive.reference.colour];
                        wrong.subject.colour = other(&Colour::ALL, &used, &mut rng);
                    }
                    2 => {
                        let used = [positive.subject.shape, positive.reference.shape];
                        wrong.reference.shape = other(&Shape::ALL, &used, &mut rng);
                    }
                    3 => wrong.relation = other(&Relation::ALL, &[positive.relation], &mut rng),
                    _ => wrong.reference.size = other(&Size::ALL, &[positive.reference.size], &mut rng),
                }
                drawn.push((k, render::png(&Scene::lay_out(&wrong, None, &mut rng))));
            }
            shuffle(&mut drawn, mix(&[seed, i as u64, 0x5107]));
            let errors: Vec<usize> = drawn.iter().map(|d| d.0).collect();
            let exact = errors.iter().map(|&e| -(e as f64)).collect();
            let random = errors.iter().map(|_| rng.below(1000) as f64 / 1000.0).collect();
            DemoPrompt {
                key: format!("rank-{i:03}"),
                prompt: positive.caption(),
                category,
                images: drawn.into_iter().map(|d| d.1).collect(),
                errors,
                scores: BTreeMap::from([("demo-exact".to_string(), exact), ("demo-random".to_string(), random)]),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Description;

    #[test]
    fn prompts_have_two_to_five_images_and_a_known_best_first_order() {
        let prompts = generate(8, 3);
        assert_eq!(prompts, generate(8, 3), "reproducible");
        let sizes: Vec<usize> = prompts.iter().map(|p| p.images.len()).collect();
        assert_eq!(sizes, [2, 3, 4, 5, 2, 3, 4, 5]);
        for p in &prompts {
            let mut errors = p.errors.clone();
            errors.sort();
            assert_eq!(errors, (0..p.images.len()).collect::<Vec<_>>());
            assert_eq!(p.errors[p.truth()[0]], 0);
            assert!(p.images.iter().all(|png| png.starts_with(b"\x89PNG")));
            assert!(Description::parse(&p.prompt).is_some(), "{}", p.prompt);
            assert_eq!(p.scores["demo-exact"].len(), p.images.len());
        }
        assert!(prompts.iter().any(|p| p.truth() != (0..p.images.len()).collect::<Vec<_>>()), "shuffled");
    }
}
