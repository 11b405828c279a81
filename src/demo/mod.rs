//! The embedded demo dataset: compositional scenes ("a red circle to the left
//! of a blue square") generated and drawn by the program itself, each with a
//! SugarCrepe-style hard-negative caption and four candidate negative images
//! of which a known subset truly depicts the negative caption.
//!
//! Everything is derived from one scene model ([`scene`]): captions are
//! printed from a [`Description`], images are rendered from a [`Scene`] laid
//! out from a description, and the truth flags are computed by checking each
//! candidate's scene against the captions' descriptions.
pub mod ab_pairs;
pub mod edits;
pub mod hnc;
pub mod ranking_prompts;
pub mod reader;
pub mod render;
pub mod scene;
#[cfg(test)]
mod scorer_tests;
pub mod scorers;
#[cfg(test)]
mod tests;
pub mod triplets;

use crate::domain::category::{Category, NegType, Subtype};
use crate::domain::rng::{mix, shuffle, SplitMix64};
pub use scene::{Colour, Description, Placed, Relation, Scene, Shape, Size, Thing};

/// At least 60 and a multiple of 7, so every SugarCrepe category gets 9.
pub const DEFAULT_COUNT: usize = 63;
/// The seed the app uses for its built-in demo.
pub const DEFAULT_SEED: u64 = 2024;
pub const CANDIDATES: usize = 4;

/// One demo item, ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoInstance {
    /// Stable id: "demo-000", "demo-001", …
    pub key: String,
    pub caption: String,
    pub negative_caption: String,
    pub category: Category,
    pub positive_png: Vec<u8>,
    pub candidates_png: [Vec<u8>; CANDIDATES],
    /// Truth for the four-image step: candidate i depicts the negative caption.
    pub matches_negative: [bool; CANDIDATES],
    /// Candidate i depicts the positive caption. For a candidate that also
    /// matches the negative, this marks a deliberately ambiguous picture.
    pub matches_positive: [bool; CANDIDATES],
}

impl DemoInstance {
    /// Candidate i depicts both captions, so it makes a poor hard negative.
    pub fn is_ambiguous(&self, i: usize) -> bool {
        self.matches_negative[i] && self.matches_positive[i]
    }
    pub fn matching_count(&self) -> usize {
        self.matches_negative.iter().filter(|&&m| m).count()
    }
}

/// The model behind a [`DemoInstance`], before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceModel {
    pub key: String,
    pub category: Category,
    pub positive: Description,
    pub negative: Description,
    pub positive_scene: Scene,
    pub candidate_scenes: [Scene; CANDIDATES],
}

impl InstanceModel {
    pub fn matches_negative(&self) -> [bool; CANDIDATES] {
        self.candidate_scenes.each_ref().map(|s| self.negative.satisfied_by(s))
    }
    pub fn matches_positive(&self) -> [bool; CANDIDATES] {
        self.candidate_scenes.each_ref().map(|s| self.positive.satisfied_by(s))
    }

    pub fn render(&self) -> DemoInstance {
        DemoInstance {
            key: self.key.clone(),
            caption: self.positive.caption(),
            negative_caption: self.negative.caption(),
            category: self.category,
            positive_png: render::png(&self.positive_scene),
            candidates_png: self.candidate_scenes.each_ref().map(render::png),
            matches_negative: self.matches_negative(),
            matches_positive: self.matches_positive(),
        }
    }
}

/// `count` demo instances, cycling through the seven categories in
/// `Category::ALL` order; byte-for-byte reproducible from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<DemoInstance> {
    let models = generate_models(count, seed);
    // Rendering is pure, so it is split over a few threads; order is kept.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    if threads == 1 || models.len() < 8 {
        return models.iter().map(InstanceModel::render).collect();
    }
    let chunk = models.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = models
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(InstanceModel::render).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("rendering does not panic")).collect()
    })
}

/// The scene models of [`generate`], without rendering (cheap).
pub fn generate_models(count: usize, seed: u64) -> Vec<InstanceModel> {
    let counts = matching_counts(count, seed);
    let category = |i: usize| Category::ALL[i % Category::ALL.len()];
    // About a quarter of the replace/rel instances that have a correct
    // candidate get one drawn diagonally, fitting both captions.
    let mut eligible: Vec<usize> = (0..count)
        .filter(|&i| (category(i).neg_type, category(i).subtype) == (NegType::Replace, Subtype::Rel) && counts[i] > 0)
        .collect();
    shuffle(&mut eligible, mix(&[seed, 0xA4B1]));
    eligible.truncate((eligible.len() as f64 * AMBIGUOUS_SHARE).round() as usize);
    (0..count).map(|i| build(i, category(i), counts[i], eligible.contains(&i), seed)).collect()
}

/// How many candidates match, per instance: about 20% none, 50% one, 25%
/// two, 4% three and 1% four — as exact quotas, shuffled by the seed, so
/// every reasonably sized run has both empty and multi-match instances.
pub fn matching_counts(count: usize, seed: u64) -> Vec<usize> {
    let mut counts = Vec::with_capacity(count);
    for (k, share) in [(0, 0.20), (2, 0.25), (3, 0.04), (4, 0.01)] {
        let quota = ((count as f64 * share).round() as usize).min(count - counts.len());
        counts.extend(std::iter::repeat_n(k, quota));
    }
    counts.resize(count, 1);
    shuffle(&mut counts, mix(&[seed, 0xC0_0175]));
    counts
}

/// Share of eligible `replace/rel` instances made deliberately ambiguous.
const AMBIGUOUS_SHARE: f64 = 0.25;

fn build(index: usize, category: Category, matching: usize, ambiguous: bool, seed: u64) -> InstanceModel {
    let mut rng = SplitMix64::new(mix(&[seed, index as u64, 0xDE40]));
    let positive = edits::positive_for(category, &mut rng);
    let mut negative = edits::negative_for(category, &positive, &mut rng);
    let positive_scene = Scene::lay_out(&positive, None, &mut rng);
    if ambiguous && !negative.relation.is_orthogonal_to(positive.relation) {
        // A diagonal picture needs the new relation on the other axis.
        let across: Vec<Relation> =
            Relation::ALL.into_iter().filter(|r| r.is_orthogonal_to(positive.relation)).collect();
        negative.relation = across[rng.below(across.len())];
    }

    let mut scenes: Vec<Scene> = (0..matching)
        .map(|j| {
            let also = (j == 0 && ambiguous).then_some(positive.relation);
            Scene::lay_out(&negative, also, &mut rng)
        })
        .collect();
    while scenes.len() < CANDIDATES {
        let wrong = (0..64)
            .map(|_| Scene::lay_out(&edits::generator_mistake(&positive, &negative, &mut rng), None, &mut rng))
            .find(|s| !negative.satisfied_by(s))
            .unwrap_or_else(|| Scene::lay_out(&positive, None, &mut rng));
        scenes.push(wrong);
    }
    shuffle(&mut scenes, rng.next_u64());
    let candidate_scenes: [Scene; CANDIDATES] = scenes.try_into().expect("exactly four candidates");
    InstanceModel { key: format!("demo-{index:03}"), category, positive, negative, positive_scene, candidate_scenes }
}
