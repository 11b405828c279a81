use super::render::{self, BACKGROUND, HEIGHT, WIDTH};
use super::*;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The default run is shared: rendering it once keeps the suite quick.
fn default_run() -> &'static Vec<DemoInstance> {
    static RUN: OnceLock<Vec<DemoInstance>> = OnceLock::new();
    RUN.get_or_init(|| generate(DEFAULT_COUNT, DEFAULT_SEED))
}

fn thing(shape: Shape, colour: Colour, size: Size) -> Thing {
    Thing { shape, colour, size }
}

fn at(t: Thing, cx: i32, cy: i32) -> Placed {
    Placed { thing: t, cx, cy }
}

fn decode(png: &[u8]) -> image::RgbImage {
    image::load_from_memory_with_format(png, image::ImageFormat::Png).expect("valid PNG").to_rgb8()
}

#[test]
fn every_category_is_covered_evenly() {
    const { assert!(DEFAULT_COUNT >= 60 && DEFAULT_COUNT.is_multiple_of(7)) };
    let mut seen: HashMap<Category, usize> = HashMap::new();
    for inst in default_run() {
        *seen.entry(inst.category).or_default() += 1;
    }
    assert_eq!(seen.len(), 7);
    for c in Category::ALL {
        assert_eq!(seen[&c], DEFAULT_COUNT / 7, "{c}");
    }
}

#[test]
fn keys_are_stable_and_captions_differ() {
    let run = default_run();
    assert_eq!(run.len(), DEFAULT_COUNT);
    for (i, inst) in run.iter().enumerate() {
        assert_eq!(inst.key, format!("demo-{i:03}"));
        assert_ne!(inst.caption, inst.negative_caption, "{}", inst.key);
        assert!(inst.caption.ends_with('.') && inst.caption.starts_with('A'), "{}", inst.caption);
    }
    assert_eq!(run[0].key, "demo-000");
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = generate(14, 7);
    let b = generate(14, 7);
    assert_eq!(a, b);
    let c = generate(14, 8);
    assert_ne!(a, c);
    assert!(a.iter().zip(&c).any(|(x, y)| x.caption != y.caption));
    assert!(a.iter().zip(&c).any(|(x, y)| x.positive_png != y.positive_png));
    // Positive captions and images of instance i do not depend on the run length.
    for (short, long) in generate_models(7, 7).iter().zip(&generate_models(14, 7)) {
        assert!(short.positive == long.positive && short.positive_scene == long.positive_scene, "{}", short.key);
    }
}

#[test]
fn pngs_decode_at_320_by_320() {
    for inst in default_run() {
        for png in std::iter::once(&inst.positive_png).chain(&inst.candidates_png) {
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            let img = decode(png);
            assert_eq!((img.width(), img.height()), (WIDTH, HEIGHT), "{}", inst.key);
            assert!(png.len() < 40_000, "{} is {} bytes", inst.key, png.len());
        }
    }
}

#[test]
fn rendered_instances_come_from_their_models() {
    let models = generate_models(DEFAULT_COUNT, DEFAULT_SEED);
    for (model, inst) in models.iter().zip(default_run()) {
        assert_eq!(model.render(), *inst);
        assert_eq!(inst.caption, model.positive.caption());
        assert_eq!(inst.negative_caption, model.negative.caption());
    }
}

#[test]
fn truth_agrees_with_the_scene_model_via_the_caption_text() {
    for (model, inst) in generate_models(DEFAULT_COUNT, DEFAULT_SEED).iter().zip(default_run()) {
        // Read the captions back from text, so the check is against what annotators see.
        let pos = Description::parse(&inst.caption).expect("positive caption parses");
        let neg = Description::parse(&inst.negative_caption).expect("negative caption parses");
        assert_eq!((pos, neg), (model.positive, model.negative), "{}", inst.key);
        assert!(pos.satisfied_by(&model.positive_scene), "{}: positive image fits its caption", inst.key);
        assert!(!neg.satisfied_by(&model.positive_scene), "{}: positive image fits the negative", inst.key);
        for (i, scene) in model.candidate_scenes.iter().enumerate() {
            assert_eq!(inst.matches_negative[i], neg.satisfied_by(scene), "{} cand {i}", inst.key);
            assert_eq!(inst.matches_positive[i], pos.satisfied_by(scene), "{} cand {i}", inst.key);
        }
    }
}

#[test]
fn negatives_follow_sugarcrepe_edit_semantics() {
    for m in generate_models(DEFAULT_COUNT, DEFAULT_SEED) {
        let (p, n) = (m.positive, m.negative);
        let key = &m.key;
        assert!(p.extra.is_none(), "{key}");
        let diff =
            |f: fn(&Thing) -> u8| (f(&p.subject) != f(&n.subject)) as u8 + (f(&p.reference) != f(&n.reference)) as u8;
        let shapes = diff(|t| t.shape as u8);
        let colours = diff(|t| t.colour as u8);
        let sizes = diff(|t| t.size as u8);
        let same_rel = p.relation == n.relation;
        match (m.category.neg_type, m.category.subtype) {
            (NegType::Replace, Subtype::Obj) => assert!(shapes == 1 && colours + sizes == 0 && same_rel, "{key}"),
            (NegType::Replace, Subtype::Att) => assert!(shapes == 0 && colours + sizes == 1 && same_rel, "{key}"),
            (NegType::Replace, Subtype::Rel) => assert!(shapes + colours + sizes == 0 && !same_rel, "{key}"),
            (NegType::Swap, Subtype::Obj) => {
                assert!(n.subject.shape == p.reference.shape && n.reference.shape == p.subject.shape, "{key}");
                assert!(shapes == 2 && colours + sizes == 0 && same_rel, "{key}");
            }
            (NegType::Swap, Subtype::Att) => {
                assert!(n.subject.colour == p.reference.colour && n.reference.colour == p.subject.colour, "{key}");
                assert!(colours == 2 && shapes + sizes == 0 && same_rel, "{key}");
            }
            (NegType::Add, Subtype::Obj) => {
                let extra = n.extra.expect("add/obj adds an object");
                assert!(n.caption().starts_with(p.caption().trim_end_matches('.')), "{key}");
                assert!(extra.shape != p.subject.shape && extra.shape != p.reference.shape, "{key}");
            }
            (NegType::Add, Subtype::Att) => {
                assert!(sizes == 1 && shapes + colours == 0 && same_rel && n.extra.is_none(), "{key}");
                let added =
                    if p.subject.size != n.subject.size { (p.subject, n.subject) } else { (p.reference, n.reference) };
                assert_eq!(added.0.size, Size::Medium, "{key}: size was unmarked before");
                assert!(n.caption().split(' ').count() == p.caption().split(' ').count() + 1, "{key}");
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn images_show_exactly_the_named_colours_where_the_objects_are() {
    let models = generate_models(DEFAULT_COUNT, DEFAULT_SEED);
    for (model, inst) in models.iter().zip(default_run()) {
        let img = decode(&inst.positive_png);
        let present: Vec<[u8; 3]> =
            Colour::ALL.iter().map(|c| c.rgb()).filter(|rgb| img.pixels().any(|p| p.0 == *rgb)).collect();
        let named: Vec<[u8; 3]> =
            Colour::ALL.iter().filter(|c| inst.caption.contains(c.word())).map(|c| c.rgb()).collect();
        assert_eq!(present, named, "{}: palette colours in the image vs the caption", inst.key);
        for obj in &model.positive_scene.objects {
            assert_eq!(img.get_pixel(obj.cx as u32, obj.cy as u32).0, obj.thing.colour.rgb(), "{}", inst.key);
        }
        assert_eq!(img.get_pixel(0, 0).0, BACKGROUND);
        for (scene, png) in model.candidate_scenes.iter().zip(&inst.candidates_png) {
            let img = decode(png);
            for obj in &scene.objects {
                assert_eq!(img.get_pixel(obj.cx as u32, obj.cy as u32).0, obj.thing.colour.rgb(), "{}", inst.key);
            }
        }
    }
}

#[test]
fn larger_objects_cover_more_pixels() {
    let mut rng = crate::domain::rng::SplitMix64::new(1);
    let mut area = |size| {
        let d = Description {
            subject: thing(Shape::Star, Colour::Red, size),
            relation: Relation::LeftOf,
            reference: thing(Shape::Square, Colour::Blue, Size::Medium),
            extra: None,
        };
        let img = render::render(&Scene::lay_out(&d, None, &mut rng));
        img.pixels().filter(|p| p.0 == Colour::Red.rgb()).count()
    };
    let (s, m, l) = (area(Size::Small), area(Size::Medium), area(Size::Large));
    assert!(s > 100 && s * 2 < m && m * 2 < l, "{s} {m} {l}");
}

#[test]
fn truth_pattern_has_empty_multi_and_ambiguous_instances() {
    let run = default_run();
    let mut by_count = [0usize; 5];
    for inst in run {
        by_count[inst.matching_count()] += 1;
    }
    assert_eq!(by_count, [13, 30, 16, 3, 1], "quotas of 20/50/25/4/1 % of 63, rounded");
    let ambiguous: Vec<&DemoInstance> = run.iter().filter(|i| (0..4).any(|c| i.is_ambiguous(c))).collect();
    assert!(!ambiguous.is_empty() && ambiguous.len() <= DEFAULT_COUNT / 7, "{}", ambiguous.len());
    for inst in &ambiguous {
        assert_eq!(inst.category.to_string(), "replace/rel");
        assert_eq!((0..4).filter(|&c| inst.is_ambiguous(c)).count(), 1, "{}", inst.key);
    }
    // Wrong candidates are a mix of "ignored the edit" and other mistakes.
    let wrong =
        run.iter().flat_map(|i| (0..4).filter(move |&c| !i.matches_negative[c]).map(move |c| i.matches_positive[c]));
    let (shows_positive, other): (Vec<bool>, Vec<bool>) = wrong.partition(|&p| p);
    assert!(shows_positive.len() >= 20 && other.len() >= 40, "{} {}", shows_positive.len(), other.len());
    // Where the correct candidates sit varies.
    let mut first_match = [0usize; 4];
    for inst in run {
        if let Some(c) = inst.matches_negative.iter().position(|&m| m) {
            first_match[c] += 1;
        }
    }
    assert!(first_match.iter().filter(|&&n| n > 0).count() >= 3, "{first_match:?}");
}

#[test]
fn truth_pattern_depends_on_the_seed() {
    let a = matching_counts(63, 1);
    let b = matching_counts(63, 2);
    assert_ne!(a, b);
    let mut sorted = a.clone();
    sorted.sort();
    let mut sorted_b = b;
    sorted_b.sort();
    assert_eq!(sorted, sorted_b);
    assert_eq!(matching_counts(0, 1), Vec::<usize>::new());
    for n in 1..10 {
        assert_eq!(matching_counts(n, 3).len(), n);
    }
}

#[test]
fn satisfaction_is_closed_world_order_free_and_geometric() {
    let red_circle = thing(Shape::Circle, Colour::Red, Size::Medium);
    let blue_square = thing(Shape::Square, Colour::Blue, Size::Medium);
    let star = thing(Shape::Star, Colour::Yellow, Size::Small);
    let left = Description { subject: red_circle, relation: Relation::LeftOf, reference: blue_square, extra: None };
    let above = Description { relation: Relation::Above, ..left };
    let side_by_side = Scene { objects: vec![at(blue_square, 240, 160), at(red_circle, 80, 165)] };
    assert!(left.satisfied_by(&side_by_side));
    assert!(!above.satisfied_by(&side_by_side));
    assert!(!Description { relation: Relation::RightOf, ..left }.satisfied_by(&side_by_side));
    let diagonal = Scene { objects: vec![at(red_circle, 80, 80), at(blue_square, 240, 240)] };
    assert!(left.satisfied_by(&diagonal) && above.satisfied_by(&diagonal));
    let crowded = Scene { objects: vec![at(red_circle, 80, 100), at(blue_square, 240, 100), at(star, 160, 250)] };
    assert!(!left.satisfied_by(&crowded), "an unnamed object breaks the match");
    assert!(Description { extra: Some(star), ..left }.satisfied_by(&crowded));
    let large =
        Scene { objects: vec![at(Thing { size: Size::Large, ..red_circle }, 80, 160), at(blue_square, 240, 160)] };
    assert!(!left.satisfied_by(&large), "an unnamed size means medium");
}

#[test]
fn captions_read_naturally_and_parse_back() {
    let d = Description {
        subject: thing(Shape::Star, Colour::Orange, Size::Medium),
        relation: Relation::Below,
        reference: thing(Shape::Triangle, Colour::Green, Size::Large),
        extra: Some(thing(Shape::Circle, Colour::Purple, Size::Small)),
    };
    assert_eq!(d.caption(), "An orange star below a large green triangle and a small purple circle.");
    assert_eq!(Description::parse(&d.caption()), Some(d));
    assert_eq!(Description::parse("A red circle near a blue square."), None);
    assert_eq!(Description::parse("A red blob to the left of a blue square."), None);
    assert_eq!(Description::parse("A orange star above a blue square."), None, "wrong article");
}

#[test]
fn layouts_keep_objects_on_canvas_and_apart() {
    for m in generate_models(140, 99) {
        for scene in std::iter::once(&m.positive_scene).chain(&m.candidate_scenes) {
            let reach = |o: &Placed| o.thing.size.radius() * 1.15 + 3.0;
            for (i, a) in scene.objects.iter().enumerate() {
                assert!(a.cx as f32 - reach(a) >= 0.0 && a.cx as f32 + reach(a) <= WIDTH as f32, "{}: {a:?}", m.key);
                assert!(a.cy as f32 - reach(a) >= 0.0 && a.cy as f32 + reach(a) <= HEIGHT as f32, "{}: {a:?}", m.key);
                for b in &scene.objects[i + 1..] {
                    let apart = (a.cx - b.cx).abs().max((a.cy - b.cy).abs()) as f32;
                    assert!(apart > reach(a) + reach(b), "{}: {a:?} overlaps {b:?}", m.key);
                }
            }
        }
    }
}
