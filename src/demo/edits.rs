//! Caption-level edits: a random positive description per category, the
//! SugarCrepe-style hard negative of it, and plausible generator mistakes
//! (pictures a text-to-image model might produce for the negative caption).
use super::scene::{Colour, Description, Relation, Shape, Size, Thing};
use crate::domain::category::{Category, NegType, Subtype};
use crate::domain::rng::SplitMix64;

fn pick<T: Copy>(rng: &mut SplitMix64, items: &[T]) -> T {
    items[rng.below(items.len())]
}

fn pick_except<T: Copy + PartialEq>(rng: &mut SplitMix64, items: &[T], except: &[T]) -> T {
    let left: Vec<T> = items.iter().copied().filter(|x| !except.contains(x)).collect();
    pick(rng, &left)
}

fn random_size(rng: &mut SplitMix64) -> Size {
    match rng.below(5) {
        0 => Size::Small,
        1 => Size::Large,
        _ => Size::Medium,
    }
}

/// Two objects with different shapes and different colours, in a relation.
/// `add/att` needs an unmarked (medium) object to add a size to.
pub fn positive_for(category: Category, rng: &mut SplitMix64) -> Description {
    let s1 = pick(rng, &Shape::ALL);
    let s2 = pick_except(rng, &Shape::ALL, &[s1]);
    let c1 = pick(rng, &Colour::ALL);
    let c2 = pick_except(rng, &Colour::ALL, &[c1]);
    let mut subject = Thing { shape: s1, colour: c1, size: random_size(rng) };
    let mut reference = Thing { shape: s2, colour: c2, size: random_size(rng) };
    let relation = pick(rng, &Relation::ALL);
    let wants_medium = (category.neg_type, category.subtype) == (NegType::Add, Subtype::Att);
    if wants_medium && subject.size != Size::Medium && reference.size != Size::Medium {
        if rng.below(2) == 0 {
            subject.size = Size::Medium;
        } else {
            reference.size = Size::Medium;
        }
    }
    Description { subject, relation, reference, extra: None }
}

fn target(desc: &mut Description, first: bool) -> &mut Thing {
    if first {
        &mut desc.subject
    } else {
        &mut desc.reference
    }
}

/// The hard negative: `positive` changed in exactly one compositional detail.
pub fn negative_for(category: Category, positive: &Description, rng: &mut SplitMix64) -> Description {
    let mut neg = *positive;
    let shapes = [positive.subject.shape, positive.reference.shape];
    let colours = [positive.subject.colour, positive.reference.colour];
    let first = rng.below(2) == 0;
    match (category.neg_type, category.subtype) {
        (NegType::Replace, Subtype::Obj) => target(&mut neg, first).shape = pick_except(rng, &Shape::ALL, &shapes),
        (NegType::Replace, Subtype::Att) => {
            let thing = target(&mut neg, first);
            if thing.size != Size::Medium && rng.below(2) == 0 {
                thing.size = if thing.size == Size::Small { Size::Large } else { Size::Small };
            } else {
                thing.colour = pick_except(rng, &Colour::ALL, &colours);
            }
        }
        (NegType::Replace, Subtype::Rel) => neg.relation = pick_except(rng, &Relation::ALL, &[positive.relation]),
        (NegType::Swap, Subtype::Obj) => {
            neg.subject.shape = positive.reference.shape;
            neg.reference.shape = positive.subject.shape;
        }
        (NegType::Swap, Subtype::Att) => {
            neg.subject.colour = positive.reference.colour;
            neg.reference.colour = positive.subject.colour;
        }
        (NegType::Add, Subtype::Obj) => {
            neg.extra = Some(Thing {
                shape: pick_except(rng, &Shape::ALL, &shapes),
                colour: pick_except(rng, &Colour::ALL, &colours),
                size: if rng.below(3) == 0 { Size::Small } else { Size::Medium },
            });
        }
        (NegType::Add, Subtype::Att) => {
            let first = match (positive.subject.size, positive.reference.size) {
                (Size::Medium, Size::Medium) => first,
                (Size::Medium, _) => true,
                _ => false,
            };
            target(&mut neg, first).size = if rng.below(3) == 0 { Size::Small } else { Size::Large };
        }
        (_, Subtype::Rel) => unreachable!("SugarCrepe has no {category}"),
    }
    neg
}

/// A wrong picture for the negative caption, in the ways image generators
/// typically fail: ignoring the edit, binding an attribute to the wrong
/// object, or getting some other detail wrong. May occasionally still match
/// the negative caption; callers check against the scene model.
pub fn generator_mistake(positive: &Description, negative: &Description, rng: &mut SplitMix64) -> Description {
    match rng.below(20) {
        0..=6 => *positive,
        7..=9 => leak_colour(negative, rng).unwrap_or_else(|| perturb(negative, rng)),
        _ => perturb(negative, rng),
    }
}

/// Attribute leakage: both main objects come out in one of their colours.
fn leak_colour(desc: &Description, rng: &mut SplitMix64) -> Option<Description> {
    if desc.subject.colour == desc.reference.colour {
        return None;
    }
    let mut out = *desc;
    if rng.below(2) == 0 {
        out.reference.colour = desc.subject.colour;
    } else {
        out.subject.colour = desc.reference.colour;
    }
    Some(out)
}

/// One detail of `desc` changed at random (colour, shape, size, relation,
/// or a missing/spurious third object).
pub fn perturb(desc: &Description, rng: &mut SplitMix64) -> Description {
    let mut out = *desc;
    let used_shapes = [desc.subject.shape, desc.reference.shape];
    let used_colours = [desc.subject.colour, desc.reference.colour];
    let which = rng.below(desc.object_count());
    let thing = match which {
        0 => &mut out.subject,
        1 => &mut out.reference,
        _ => out.extra.as_mut().expect("object_count counts the extra"),
    };
    match rng.below(5) {
        0 => thing.colour = pick_except(rng, &Colour::ALL, &[thing.colour]),
        1 => thing.shape = pick_except(rng, &Shape::ALL, &[thing.shape]),
        2 => thing.size = pick_except(rng, &Size::ALL, &[thing.size]),
        3 => out.relation = pick_except(rng, &Relation::ALL, &[desc.relation]),
        _ => {
            out.extra = match desc.extra {
                Some(_) => None,
                None => Some(Thing {
                    shape: pick_except(rng, &Shape::ALL, &used_shapes),
                    colour: pick_except(rng, &Colour::ALL, &used_colours),
                    size: Size::Medium,
                }),
            }
        }
    }
    // Keep a spurious third object small enough for the layout.
    if let Some(extra) = &mut out.extra {
        if extra.size == Size::Large {
            extra.size = Size::Medium;
        }
    }
    out
}
