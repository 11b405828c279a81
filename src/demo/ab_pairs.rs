//! Demo items for A/B/Tie (SugarCrepe appendix E.2): a drawn scene's caption
//! and two hard negatives of it from two demo "sources": `fluent` (the
//! demo's SugarCrepe-style edit) and `scrambled` (the same edit with
//! adjectives after their nouns, as rule-based generators produced). The
//! truth is known: on grammar, the fluent source is better.
use super::{edits, Colour, Shape};
use crate::domain::ab_pairs::AbPair;
use crate::domain::category::Category;
use crate::domain::rng::{mix, SplitMix64};

pub const FLUENT: &str = "fluent";
pub const SCRAMBLED: &str = "scrambled";

/// "a red circle" -> "a circle red": ungrammatical, same content.
pub fn scramble(caption: &str) -> String {
    let mut out = caption.to_string();
    for colour in Colour::ALL {
        for shape in Shape::ALL {
            out = out.replace(
                &format!("{} {}", colour.word(), shape.word()),
                &format!("{} {}", shape.word(), colour.word()),
            );
        }
    }
    out
}

/// `count` items cycling through the seven subsets; the fluent source is
/// negative a on even items and b on odd ones. Reproducible from `seed`.
pub fn generate(count: usize, seed: u64) -> Vec<AbPair> {
    (0..count)
        .map(|i| {
            let category = Category::ALL[i % Category::ALL.len()];
            let mut rng = SplitMix64::new(mix(&[seed, i as u64, 0xAB71]));
            let positive = edits::positive_for(category, &mut rng);
            let fluent = edits::negative_for(category, &positive, &mut rng).caption();
            let scrambled = scramble(&edits::negative_for(category, &positive, &mut rng).caption());
            let ((negative_a, source_a), (negative_b, source_b)) = if i % 2 == 0 {
                ((fluent, FLUENT), (scrambled, SCRAMBLED))
            } else {
                ((scrambled, SCRAMBLED), (fluent, FLUENT))
            };
            AbPair {
                caption: positive.caption(),
                negative_a,
                source_a: source_a.into(),
                negative_b,
                source_b: source_b.into(),
                category,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Description;

    #[test]
    fn the_fluent_negative_reads_back_and_the_scrambled_one_does_not() {
        let items = generate(14, 9);
        assert_eq!(items, generate(14, 9));
        for (i, p) in items.iter().enumerate() {
            let (fluent, scrambled) =
                if i % 2 == 0 { (&p.negative_a, &p.negative_b) } else { (&p.negative_b, &p.negative_a) };
            assert!(Description::parse(fluent).is_some(), "{fluent}");
            assert!(Description::parse(scrambled).is_none(), "{scrambled}");
            assert_ne!(fluent, &p.caption);
            assert_eq!(p.category, Category::ALL[i % 7]);
        }
        assert_eq!(scramble("A red circle above a large blue star."), "A circle red above a large star blue.");
    }
}
