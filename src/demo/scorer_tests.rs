//! The pixel reader and the two demo scorers, against the scene model the
//! pictures were drawn from.
use super::reader::{read, read_png};
use super::render;
use super::scorers::{caption_words, fit, scene_words, DemoScorer};
use super::*;
use crate::domain::category::NegType;
use crate::domain::metrics::{Aggregator, Outcome};
use std::sync::OnceLock;

fn models() -> &'static Vec<InstanceModel> {
    static MODELS: OnceLock<Vec<InstanceModel>> = OnceLock::new();
    MODELS.get_or_init(|| generate_models(DEFAULT_COUNT, DEFAULT_SEED))
}

fn sorted_things(scene: &Scene) -> Vec<(Shape, Colour, Size)> {
    let mut v: Vec<_> = scene.objects.iter().map(|o| (o.thing.shape, o.thing.colour, o.thing.size)).collect();
    v.sort_by_key(|t| format!("{t:?}"));
    v
}

/// Per instance model: its positive scene and candidates, each drawn and
/// read back (once for the whole suite: rendering is the slow part).
fn drawn_and_read() -> &'static Vec<Vec<(&'static Scene, Scene)>> {
    static READ: OnceLock<Vec<Vec<(&'static Scene, Scene)>>> = OnceLock::new();
    READ.get_or_init(|| {
        let each = |m: &'static InstanceModel| -> Vec<(&'static Scene, Scene)> {
            std::iter::once(&m.positive_scene)
                .chain(m.candidate_scenes.iter())
                .map(|s| (s, read(&render::render(s))))
                .collect()
        };
        std::thread::scope(|t| {
            let parts: Vec<_> =
                models().chunks(16).map(|part| t.spawn(move || part.iter().map(each).collect::<Vec<_>>())).collect();
            parts.into_iter().flat_map(|h| h.join().unwrap()).collect()
        })
    })
}

#[test]
fn the_reader_finds_every_drawn_object_with_its_attributes() {
    let pairs: Vec<_> = drawn_and_read().iter().flatten().collect();
    assert_eq!(pairs.len(), DEFAULT_COUNT * 5);
    for (drawn, seen) in pairs {
        assert_eq!(sorted_things(seen), sorted_things(drawn), "{drawn:?}");
    }
}

#[test]
fn captions_hold_on_the_read_scene_exactly_when_they_hold_on_the_drawn_one() {
    for (m, pairs) in models().iter().zip(drawn_and_read()) {
        for (drawn, seen) in pairs {
            for desc in [&m.positive, &m.negative] {
                assert_eq!(desc.satisfied_by(seen), desc.satisfied_by(drawn), "{} on {drawn:?}", desc.caption());
            }
        }
    }
}

#[test]
fn the_reader_reads_png_bytes_and_refuses_other_bytes() {
    let scene = &models()[0].positive_scene;
    let seen = read_png(&render::png(scene)).expect("a PNG");
    assert_eq!(sorted_things(&seen), sorted_things(scene));
    assert!(read_png(b"not a picture").is_none());
}

#[test]
fn fit_is_full_exactly_when_the_caption_holds() {
    for m in models() {
        for scene in std::iter::once(&m.positive_scene).chain(m.candidate_scenes.iter()) {
            for desc in [&m.positive, &m.negative] {
                let f = fit(desc, scene);
                assert!((0.0..=1.0).contains(&f));
                assert_eq!(f == 1.0, desc.satisfied_by(scene), "{} on {scene:?}: {f}", desc.caption());
            }
        }
    }
}

#[test]
fn bag_of_words_ignores_order_relations_and_binding() {
    let words = caption_words("A large red circle to the left of a blue square.");
    assert_eq!(words, ["blue", "circle", "large", "red", "square"]);
    assert_eq!(caption_words("A blue circle above a large red square."), words);
    let scene = &models()[0].positive_scene;
    let bag = DemoScorer::BagOfWords;
    assert_eq!(bag.score(&models()[0].positive.caption(), scene), 1.0, "{:?}", scene_words(scene));
    assert_eq!(bag.score("Nothing of interest.", scene), 0.0);
    assert_eq!(DemoScorer::SceneReader.score("Nothing of interest.", scene), 0.0);
}

/// The demo's stored rule for the negative image: the first candidate that
/// depicts the negative caption, else slot 0 (see store::negatives).
fn outcomes(scorer: DemoScorer) -> Aggregator {
    let mut agg = Aggregator::new();
    for (m, pairs) in models().iter().zip(drawn_and_read()) {
        let slot = m.matches_negative().iter().position(|&b| b).unwrap_or(0);
        let (i0, i1) = (&pairs[0].1, &pairs[1 + slot].1);
        let s = scorer.similarities(&m.positive.caption(), &m.negative.caption(), i0, i1);
        agg.add(m.category, Outcome::from_scores(s));
    }
    agg
}

#[test]
fn the_order_blind_model_fails_swap_and_the_scene_reader_does_not() {
    let bag = outcomes(DemoScorer::BagOfWords).report();
    let reader = outcomes(DemoScorer::SceneReader).report();
    let group = |r: &crate::domain::metrics::Report, t: NegType| r.by_type[&t].group;
    assert_eq!(group(&bag, NegType::Swap), 0.0, "identical bags tie, and ties fail");
    assert!(group(&bag, NegType::Replace) > group(&bag, NegType::Swap));
    assert!(group(&reader, NegType::Swap) > group(&bag, NegType::Swap));
    assert!(reader.overall.group > bag.overall.group);
}
