//! Two real models for the demo dataset, so its comparison page has
//! something to compare. Both look at a picture only through
//! [`super::reader`] (pixels to objects):
//!
//! * the **scene reader** parses the caption and checks it against the
//!   objects: which object is which, their attributes and the relation;
//! * the **bag-of-words** model counts the caption's colour, shape and size
//!   words against the words the objects would be described with, ignoring
//!   which word belongs to which object, word order and relations.
//!
//! The second fails exactly where the benchmark says order-blind models do:
//! a SWAP negative has the same bag of words as its positive, so every
//! comparison ties, and a tie is a failure.
use super::scene::{Description, Placed, Scene, Thing};
use super::{Colour, Shape, Size};
use crate::domain::metrics::Similarities;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoScorer {
    SceneReader,
    BagOfWords,
}

impl DemoScorer {
    pub const ALL: [DemoScorer; 2] = [DemoScorer::SceneReader, DemoScorer::BagOfWords];

    /// The run's name on the comparison page.
    pub fn name(self) -> &'static str {
        match self {
            DemoScorer::SceneReader => "demo: scene reader",
            DemoScorer::BagOfWords => "demo: bag of words",
        }
    }

    /// How well the caption fits the scene, from 0 to 1.
    pub fn score(self, caption: &str, scene: &Scene) -> f64 {
        match self {
            DemoScorer::SceneReader => Description::parse(caption).map_or(0.0, |d| fit(&d, scene)),
            DemoScorer::BagOfWords => dice(&caption_words(caption), &scene_words(scene)),
        }
    }

    /// The four similarities of an instance: captions C0, C1 against the
    /// scenes read from images I0, I1.
    pub fn similarities(self, c0: &str, c1: &str, i0: &Scene, i1: &Scene) -> Similarities {
        Similarities::new(self.score(c0, i0), self.score(c1, i0), self.score(c0, i1), self.score(c1, i1))
    }
}

/// Share of the caption's facts the scene bears out under the best reading
/// of which object is which: each named object's shape, colour and size,
/// the relation, and that nothing else is there. 1.0 exactly when
/// [`Description::satisfied_by`] holds.
pub fn fit(desc: &Description, scene: &Scene) -> f64 {
    let objs = &scene.objects;
    let like = |o: &Placed, t: &Thing| {
        [o.thing.shape == t.shape, o.thing.colour == t.colour, o.thing.size == t.size].iter().filter(|&&b| b).count()
            as f64
            / 3.0
    };
    let mut best = 0.0f64;
    for (s, subject) in objs.iter().enumerate() {
        for (r, reference) in objs.iter().enumerate().filter(|&(r, _)| r != s) {
            let extra = desc.extra.map_or(0.0, |extra| {
                objs.iter()
                    .enumerate()
                    .filter(|&(e, _)| e != s && e != r)
                    .map(|(_, o)| like(o, &extra))
                    .fold(0.0, f64::max)
            });
            let relation = desc.relation.holds(subject, reference) as u8 as f64;
            best = best.max(like(subject, &desc.subject) + like(reference, &desc.reference) + extra + relation);
        }
    }
    let count = (objs.len() == desc.object_count()) as u8 as f64;
    (best + count) / (desc.object_count() as f64 + 2.0)
}

/// The words the bag-of-words model knows: colours, shapes and marked sizes.
fn vocabulary(word: &str) -> bool {
    Colour::ALL.iter().any(|c| c.word() == word)
        || Shape::ALL.iter().any(|s| s.word() == word)
        || Size::ALL.iter().any(|s| s.word() == Some(word))
}

/// The caption's known words, sorted: order and every other word are lost.
pub fn caption_words(caption: &str) -> Vec<String> {
    let mut words: Vec<String> = caption
        .split(|c: char| !c.is_ascii_alphabetic())
        .map(str::to_ascii_lowercase)
        .filter(|w| vocabulary(w))
        .collect();
    words.sort();
    words
}

/// The words describing the scene's objects, sorted.
pub fn scene_words(scene: &Scene) -> Vec<String> {
    let mut words: Vec<String> = scene
        .objects
        .iter()
        .flat_map(|o| [Some(o.thing.colour.word()), Some(o.thing.shape.word()), o.thing.size.word()])
        .flatten()
        .map(String::from)
        .collect();
    words.sort();
    words
}

/// Dice overlap of two sorted multisets of words.
fn dice(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}
