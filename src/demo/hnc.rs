//! Demo images for HNC's caption writing: a drawn scene with an assigned
//! caption type (attribute, relation, object) and, as known truth, a pair a
//! careful writer could write: the scene's caption as the positive and the
//! hard negative of that type as the negative. The demo vocabulary is the
//! scenes' own words, so a caption about the drawings fits it.
use super::scene::{Colour, Relation, Scene, Shape, Size};
use super::{edits, render};
use crate::domain::category::{Category, NegType, Subtype};
use crate::domain::rng::{mix, SplitMix64};

/// HNC's caption types the demo draws, with the edit that makes a negative of each.
pub const TYPES: [(&str, Category); 3] = [
    ("attribute", Category { neg_type: NegType::Replace, subtype: Subtype::Att }),
    ("relation", Category { neg_type: NegType::Replace, subtype: Subtype::Rel }),
    ("object", Category { neg_type: NegType::Replace, subtype: Subtype::Obj }),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoWritingItem {
    pub key: String,
    pub caption_type: &'static str,
    /// True of the image.
    pub positive: String,
    /// False of the image, changed in the assigned type.
    pub negative: String,
    pub png: Vec<u8>,
}

/// `count` items cycling through [`TYPES`]; reproducible from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<DemoWritingItem> {
    (0..count)
        .map(|i| {
            let (caption_type, category) = TYPES[i % TYPES.len()];
            let mut rng = SplitMix64::new(mix(&[seed, i as u64, 0x4E43]));
            let positive = edits::positive_for(category, &mut rng);
            let negative = edits::negative_for(category, &positive, &mut rng);
            let scene = Scene::lay_out(&positive, None, &mut rng);
            DemoWritingItem {
                key: format!("hnc-{i:03}"),
                caption_type,
                positive: positive.caption(),
                negative: negative.caption(),
                png: render::png(&scene),
            }
        })
        .collect()
}

/// Every word the demo captions use.
pub fn vocabulary() -> Vec<&'static str> {
    let mut words = vec!["a", "an", "the", "of", "is", "and", "on", "in", "with", "to", "left", "right"];
    words.extend(Shape::ALL.iter().map(|s| s.word()));
    words.extend(Colour::ALL.iter().map(|c| c.word()));
    words.extend(Size::ALL.iter().filter_map(|s| s.word()));
    words.extend(Relation::ALL.iter().flat_map(|r| r.phrase().split(' ')));
    words.sort_unstable();
    words.dedup();
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::scene::Description;
    use crate::domain::vocabulary::Vocabulary;

    #[test]
    fn the_known_pair_is_true_then_false_of_the_image_and_in_the_vocabulary() {
        let v = Vocabulary::new(vocabulary());
        for (i, item) in generate(12, 7).iter().enumerate() {
            assert_eq!(item.caption_type, TYPES[i % 3].0);
            let (category, mut rng) = (TYPES[i % 3].1, SplitMix64::new(mix(&[7, i as u64, 0x4E43])));
            let positive = edits::positive_for(category, &mut rng);
            let negative = edits::negative_for(category, &positive, &mut rng);
            let scene = Scene::lay_out(&positive, None, &mut rng);
            assert!(positive.satisfied_by(&scene) && !negative.satisfied_by(&scene), "{}", item.negative);
            assert_eq!(Description::parse(&item.positive), Some(positive));
            assert_ne!(item.positive, item.negative);
            assert!(v.unknown(&item.positive).is_empty() && v.unknown(&item.negative).is_empty(), "{item:?}");
            assert!(item.png.starts_with(b"\x89PNG"));
        }
    }
}
