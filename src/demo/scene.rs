//! The scene model behind every demo image. One [`Description`] is both
//! captioned (as text) and laid out (as a [`Scene`] that gets rendered), and
//! whether an image "matches" a caption is decided by checking the laid-out
//! scene against the description — never written down by hand.
//!
//! Captions are read closed-world: the scene holds exactly the objects the
//! caption names, and an object whose size is not named is of medium size.
//! Relations are read geometrically from object centres, so a subject placed
//! diagonally (up and to the left) is both "to the left of" and "above" its
//! reference — the one deliberate source of ambiguity.
use crate::domain::rng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Star,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Colour {
    Red,
    Blue,
    Green,
    Yellow,
    Purple,
    Orange,
}

/// `Medium` is the unmarked size: captions leave it unsaid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Size {
    Small,
    Medium,
    Large,
}

/// Where the subject sits relative to the reference object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    LeftOf,
    RightOf,
    Above,
    Below,
}

impl Shape {
    pub const ALL: [Shape; 4] = [Shape::Circle, Shape::Square, Shape::Triangle, Shape::Star];
    pub fn word(self) -> &'static str {
        match self {
            Shape::Circle => "circle",
            Shape::Square => "square",
            Shape::Triangle => "triangle",
            Shape::Star => "star",
        }
    }
}

impl Colour {
    pub const ALL: [Colour; 6] =
        [Colour::Red, Colour::Blue, Colour::Green, Colour::Yellow, Colour::Purple, Colour::Orange];
    pub fn word(self) -> &'static str {
        match self {
            Colour::Red => "red",
            Colour::Blue => "blue",
            Colour::Green => "green",
            Colour::Yellow => "yellow",
            Colour::Purple => "purple",
            Colour::Orange => "orange",
        }
    }
    /// The exact fill colour used by the renderer.
    pub fn rgb(self) -> [u8; 3] {
        match self {
            Colour::Red => [220, 38, 38],
            Colour::Blue => [37, 99, 235],
            Colour::Green => [22, 163, 74],
            Colour::Yellow => [250, 204, 21],
            Colour::Purple => [147, 51, 234],
            Colour::Orange => [249, 115, 22],
        }
    }
}

impl Size {
    pub const ALL: [Size; 3] = [Size::Small, Size::Medium, Size::Large];
    /// The caption word, or `None` for the unmarked medium size.
    pub fn word(self) -> Option<&'static str> {
        match self {
            Size::Small => Some("small"),
            Size::Medium => None,
            Size::Large => Some("large"),
        }
    }
    /// Nominal radius in pixels (shapes scale from it).
    pub fn radius(self) -> f32 {
        match self {
            Size::Small => 22.0,
            Size::Medium => 38.0,
            Size::Large => 58.0,
        }
    }
}

/// Centres must differ by at least this many pixels along an axis for a
/// relation on that axis to hold; aligned layouts stay far below it across.
pub const RELATION_MARGIN: i32 = 60;

impl Relation {
    pub const ALL: [Relation; 4] = [Relation::LeftOf, Relation::RightOf, Relation::Above, Relation::Below];
    pub fn phrase(self) -> &'static str {
        match self {
            Relation::LeftOf => "to the left of",
            Relation::RightOf => "to the right of",
            Relation::Above => "above",
            Relation::Below => "below",
        }
    }
    /// Unit step from the reference towards the subject, in image coordinates.
    pub fn direction(self) -> (i32, i32) {
        match self {
            Relation::LeftOf => (-1, 0),
            Relation::RightOf => (1, 0),
            Relation::Above => (0, -1),
            Relation::Below => (0, 1),
        }
    }
    pub fn is_horizontal(self) -> bool {
        matches!(self, Relation::LeftOf | Relation::RightOf)
    }
    pub fn is_orthogonal_to(self, other: Relation) -> bool {
        self.is_horizontal() != other.is_horizontal()
    }
    /// Does `subject` stand in this relation to `reference`?
    pub fn holds(self, subject: &Placed, reference: &Placed) -> bool {
        let (dx, dy) = (subject.cx - reference.cx, subject.cy - reference.cy);
        match self {
            Relation::LeftOf => dx <= -RELATION_MARGIN,
            Relation::RightOf => dx >= RELATION_MARGIN,
            Relation::Above => dy <= -RELATION_MARGIN,
            Relation::Below => dy >= RELATION_MARGIN,
        }
    }
}

/// An object as a caption names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Thing {
    pub shape: Shape,
    pub colour: Colour,
    pub size: Size,
}

impl Thing {
    /// "a large red circle", "an orange star".
    pub fn noun_phrase(&self) -> String {
        let words = match self.size.word() {
            Some(s) => format!("{s} {} {}", self.colour.word(), self.shape.word()),
            None => format!("{} {}", self.colour.word(), self.shape.word()),
        };
        let article = if words.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
        format!("{article} {words}")
    }

    fn parse(phrase: &str) -> Option<Thing> {
        let mut words = phrase.split_whitespace();
        let article = words.next()?;
        if article != "a" && article != "an" {
            return None;
        }
        let mut word = words.next()?;
        let size = match Size::ALL.into_iter().find(|s| s.word() == Some(word)) {
            Some(s) => {
                word = words.next()?;
                s
            }
            None => Size::Medium,
        };
        let colour = Colour::ALL.into_iter().find(|c| c.word() == word)?;
        let shape_word = words.next()?;
        let shape = Shape::ALL.into_iter().find(|s| s.word() == shape_word)?;
        let thing = Thing { shape, colour, size };
        (words.next().is_none() && thing.noun_phrase() == phrase).then_some(thing)
    }
}

/// What a caption says: a subject in a relation to a reference, and
/// optionally one more object ("... and a yellow star") with no relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Description {
    pub subject: Thing,
    pub relation: Relation,
    pub reference: Thing,
    pub extra: Option<Thing>,
}

impl Description {
    /// "A red circle to the left of a blue square and a yellow star."
    pub fn caption(&self) -> String {
        let mut s = self.subject.noun_phrase();
        s[..1].make_ascii_uppercase();
        s.push(' ');
        s.push_str(self.relation.phrase());
        s.push(' ');
        s.push_str(&self.reference.noun_phrase());
        if let Some(extra) = &self.extra {
            s.push_str(" and ");
            s.push_str(&extra.noun_phrase());
        }
        s.push('.');
        s
    }

    /// Reads back a caption produced by [`Description::caption`].
    pub fn parse(caption: &str) -> Option<Description> {
        let text = caption.trim().strip_suffix('.')?.to_ascii_lowercase();
        let (relation, (left, right)) = Relation::ALL
            .into_iter()
            .find_map(|r| text.split_once(&format!(" {} ", r.phrase())).map(|parts| (r, parts)))?;
        let (reference, extra) = match right.split_once(" and ") {
            Some((reference, extra)) => (reference, Some(Thing::parse(extra)?)),
            None => (right, None),
        };
        Some(Description { subject: Thing::parse(left)?, relation, reference: Thing::parse(reference)?, extra })
    }

    pub fn object_count(&self) -> usize {
        2 + self.extra.is_some() as usize
    }

    /// True iff the scene holds exactly the named objects (in any order) and
    /// the subject stands in the relation to the reference.
    pub fn satisfied_by(&self, scene: &Scene) -> bool {
        let objs = &scene.objects;
        if objs.len() != self.object_count() {
            return false;
        }
        let n = objs.len();
        (0..n).any(|s| {
            objs[s].thing == self.subject
                && (0..n).filter(|&r| r != s).any(|r| {
                    objs[r].thing == self.reference
                        && self.relation.holds(&objs[s], &objs[r])
                        && match &self.extra {
                            None => true,
                            Some(extra) => (0..n).any(|e| e != s && e != r && objs[e].thing == *extra),
                        }
                })
        })
    }
}

/// An object with a position (its centre, in pixels on the 320×320 canvas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub thing: Thing,
    pub cx: i32,
    pub cy: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scene {
    pub objects: Vec<Placed>,
}

/// Half the distance between subject and reference centres along an axis.
const SPREAD: i32 = 76;
/// Per-object wobble so no two renderings of a description are identical.
const JITTER: i32 = 6;

fn jitter(rng: &mut SplitMix64, amount: i32) -> i32 {
    rng.below((2 * amount + 1) as usize) as i32 - amount
}

impl Scene {
    /// Places a description's objects so it holds. With `also`, a relation
    /// orthogonal to the description's own, the subject goes diagonally so
    /// both relations hold at once (a deliberately ambiguous picture).
    pub fn lay_out(desc: &Description, also: Option<Relation>, rng: &mut SplitMix64) -> Scene {
        let (mut dx, mut dy) = desc.relation.direction();
        if let Some(also) = also {
            assert!(also.is_orthogonal_to(desc.relation), "diagonal layouts need orthogonal relations");
            let (ax, ay) = also.direction();
            dx += ax;
            dy += ay;
        }
        let flip = rng.below(2) == 0;
        let side = if flip { 1 } else { -1 };
        // Centre of the pair, and where a third object (if any) goes.
        let (centre, extra_at) = match (dx != 0, dy != 0, desc.extra.is_some()) {
            (_, _, false) => {
                let slide = jitter(rng, 28);
                let centre = if dy == 0 {
                    (160, 160 + slide)
                } else if dx == 0 {
                    (160 + slide, 160)
                } else {
                    (160, 160)
                };
                (centre, (0, 0))
            }
            (true, false, true) => ((160, 160 - 60 * side), (160, 160 + 90 * side)),
            (false, true, true) => ((160 - 60 * side, 160), (160 + 90 * side, 160)),
            (true, true, true) => ((160, 160), (160 + dx * SPREAD * side, 160 - dy * SPREAD * side)),
            (false, false, true) => unreachable!("every relation has a direction"),
        };
        let mut place =
            |thing: Thing, x: i32, y: i32| Placed { thing, cx: x + jitter(rng, JITTER), cy: y + jitter(rng, JITTER) };
        let mut objects = vec![
            place(desc.subject, centre.0 + dx * SPREAD, centre.1 + dy * SPREAD),
            place(desc.reference, centre.0 - dx * SPREAD, centre.1 - dy * SPREAD),
        ];
        if let Some(extra) = desc.extra {
            objects.push(place(extra, extra_at.0, extra_at.1));
        }
        Scene { objects }
    }

    pub fn colours(&self) -> Vec<Colour> {
        let mut out: Vec<Colour> = Vec::new();
        for o in &self.objects {
            if !out.contains(&o.thing.colour) {
                out.push(o.thing.colour);
            }
        }
        out
    }
}
