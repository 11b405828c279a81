//! Demo triplets for the odd-one-out kinds (SugarCrepe++): a drawn scene, its
//! caption (P1), the same statement from the other object's side (P2: "a
//! blue square to the right of a red circle") and the hard negative, for
//! SugarCrepe++'s five subsets. The truth is known: the negative is the odd one.
use super::{edits, render, Description, Relation, Scene};
use crate::domain::category::{Category, NegType, Subtype};
use crate::domain::rng::{mix, SplitMix64};

/// SugarCrepe++'s subsets: replace obj/att/rel and swap obj/att.
pub const SUBSETS: [Category; 5] = [
    Category { neg_type: NegType::Replace, subtype: Subtype::Obj },
    Category { neg_type: NegType::Replace, subtype: Subtype::Att },
    Category { neg_type: NegType::Replace, subtype: Subtype::Rel },
    Category { neg_type: NegType::Swap, subtype: Subtype::Obj },
    Category { neg_type: NegType::Swap, subtype: Subtype::Att },
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoTriplet {
    pub key: String,
    pub p1: String,
    pub p2: String,
    pub negative: String,
    pub category: Category,
    pub png: Vec<u8>,
}

impl Relation {
    /// The same relation seen from the reference ("left of" <-> "right of").
    pub fn inverse(self) -> Relation {
        match self {
            Relation::LeftOf => Relation::RightOf,
            Relation::RightOf => Relation::LeftOf,
            Relation::Above => Relation::Below,
            Relation::Below => Relation::Above,
        }
    }
}

/// The same statement in other words: told from the reference object's side.
pub fn paraphrase(d: &Description) -> Description {
    Description { subject: d.reference, relation: d.relation.inverse(), reference: d.subject, extra: d.extra }
}

/// `count` triplets cycling through [`SUBSETS`]; reproducible from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<DemoTriplet> {
    (0..count)
        .map(|i| {
            let category = SUBSETS[i % SUBSETS.len()];
            let mut rng = SplitMix64::new(mix(&[seed, i as u64, 0x0DD1]));
            let positive = edits::positive_for(category, &mut rng);
            let negative = edits::negative_for(category, &positive, &mut rng);
            let scene = Scene::lay_out(&positive, None, &mut rng);
            DemoTriplet {
                key: format!("triplet-{i:03}"),
                p1: positive.caption(),
                p2: paraphrase(&positive).caption(),
                negative: negative.caption(),
                category,
                png: render::png(&scene),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2_says_what_p1_says_and_the_negative_does_not_hold_in_the_image() {
        for i in 0..40 {
            let category = SUBSETS[i % SUBSETS.len()];
            let mut rng = SplitMix64::new(mix(&[7, i as u64, 0x0DD1]));
            let positive = edits::positive_for(category, &mut rng);
            let negative = edits::negative_for(category, &positive, &mut rng);
            let scene = Scene::lay_out(&positive, None, &mut rng);
            let p2 = paraphrase(&positive);
            assert!(p2.satisfied_by(&scene) && positive.satisfied_by(&scene), "{}", p2.caption());
            assert!(!negative.satisfied_by(&scene), "{} holds in the image", negative.caption());
            assert_ne!(p2.caption(), positive.caption());
            assert_ne!(p2.caption(), negative.caption());
            assert_eq!(Description::parse(&p2.caption()), Some(p2), "a caption the demo can read back");
        }
    }

    #[test]
    fn covers_the_five_subsets_reproducibly() {
        let a = generate(10, 3);
        assert_eq!(a, generate(10, 3));
        assert_eq!(a.iter().filter(|t| t.category == SUBSETS[2]).count(), 2);
        assert!(a.iter().all(|t| t.png.starts_with(b"\x89PNG")));
    }
}
