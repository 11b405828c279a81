//! The registry's invariants, and a kind defined only here run through the
//! generic machinery: what adding a kind takes.
use crate::domain::rng::shuffle;
use crate::domain::study::{fixture, Mapping, StudySpec};
use crate::domain::survey::{Attention, Curation, KindSpec, Needs, Role, SurveyError, SurveyKind};
use crate::domain::survey::{ItemData, Presentation, ShownOption, Verdict};

/// A caption check: the original caption against the negative one, which
/// describes the real image? Kept when the original wins.
const CAPTION_PAIR: KindSpec = KindSpec {
    name: "caption_pair",
    instructions: "Choose the description that matches the image.",
    values: &["original", "negative"],
    present: present_pair,
    answer: crate::domain::survey::one_option,
    role: Role::Curation(Curation {
        step: 5,
        label: "Step 5",
        verdict: |v| match v {
            "original" => Some(Verdict::Kept),
            "negative" => Some(Verdict::Discarded),
            _ => None,
        },
        binary: ("original", "negative"),
        binary_by_default: true,
        carried_image: |item, _| item.chosen_image.clone(),
        chosen_slot: |_| None,
    }),
    sources: &[SurveyKind::of(&crate::kinds::ambiguity::KIND)],
    questions: &[&[0]],
    needs: Needs {
        candidates: None,
        positive_image: true,
        chosen_image: true,
        paraphrase: false,
        negative_b: false,
        captions: false,
        caption_type: false,
    },
    adjudicated: true,
    raters: None,
    attention: Attention { targets: &["original", "negative"], instruction: "Select {option} here." },
    texts: &[],
};

fn present_pair(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let image = item.positive_image.clone().ok_or_else(|| SurveyError::BadItem("needs the real image".into()))?;
    let texts = [(&item.caption, "original"), (&item.negative_caption, "negative")];
    let mut order = [0usize, 1];
    shuffle(&mut order, seed);
    let options = order
        .iter()
        .enumerate()
        .map(|(pos, &i)| ShownOption::lettered(pos, None, Some(texts[i].0.clone()), texts[i].1))
        .collect();
    Ok(Presentation {
        prompt_text: String::new(),
        prompt_image: Some(image),
        options,
        shown_order: order.to_vec(),
        instructions: None,
    })
}

fn full_item(query: u8) -> ItemData {
    ItemData {
        caption: "A red circle.".into(),
        negative_caption: "A blue circle.".into(),
        positive_image: Some("real".into()),
        candidate_images: vec!["c0".into(), "c1".into(), "c2".into(), "c3".into()],
        chosen_image: Some("gen".into()),
        paraphrase: Some("A circle that is red.".into()),
        negative_b: Some("A green circle.".into()),
        caption_type: Some("attribute".into()),
        query,
    }
}

fn spec_of(kind: &str, source: Option<&str>) -> StudySpec {
    StudySpec { seed: Some(1), source: source.map(str::to_string), ..fixture::spec(kind) }
}

#[test]
fn a_kind_defined_elsewhere_runs_through_spec_validation_present_resolve_and_verdict() {
    let extra = SurveyKind::of(&CAPTION_PAIR);
    let kinds: Vec<SurveyKind> = SurveyKind::all().iter().copied().chain([extra]).collect();
    // Spec validation: known only where registered; takes a source of the kind it names.
    assert!(spec_of("caption_pair", Some("S4")).parse(0).unwrap_err().to_string().contains("unknown kind"));
    let study = spec_of("caption_pair", Some("S4")).parse_in(&kinds, 0).unwrap();
    assert_eq!(study.kind, extra);
    assert_eq!(study.instructions, CAPTION_PAIR.instructions);
    assert_eq!(study.mapping, Mapping::Binary, "its own default mapping");
    let e = spec_of("caption_pair", None).parse_in(&kinds, 0).unwrap_err().to_string();
    assert!(e.contains("field `source`") && e.contains("ambiguity (Step 4)"), "{e}");
    // Present, resolve, verdict, agreement categories.
    let p = extra.present(&full_item(0), 7).unwrap();
    assert_eq!(p.prompt_image.as_deref(), Some("real"));
    let original = p.options.iter().find(|o| o.text.as_deref() == Some("A red circle.")).unwrap();
    assert_eq!(p.resolve(&original.id.to_lowercase()).unwrap().value, "original");
    assert_eq!(extra.verdict("original"), Some(Verdict::Kept));
    assert_eq!(extra.verdict("negative"), Some(Verdict::Discarded));
    assert_eq!(extra.binary_category("negative"), Some("negative"));
    assert_eq!((extra.label(), extra.question_count()), ("Step 5", 1));
    assert!(extra.present(&ItemData::default(), 0).is_err());
}

#[test]
fn every_registered_kind_is_consistent() {
    let mut names = std::collections::HashSet::new();
    for &kind in SurveyKind::all() {
        assert!(names.insert(kind.name()), "{kind} registered twice");
        assert!(!kind.default_instructions().is_empty());
        // Keys go in the "Keys:" sentence, which a page shows only once hydrated.
        let said = kind.default_instructions().split("Keys:").next().unwrap_or_default().to_lowercase();
        for word in ["key", "arrow", "drag", "enter", "ctrl"] {
            assert!(!said.contains(word), "{kind}'s instructions say {word:?} outside their key hint");
        }
        assert!(kind.question_count() >= 1, "{kind}");
        for &source in kind.spec().sources {
            // A source's survivors, or (HNC) the pairs its writers wrote, become the items.
            let gives_items = source.curation().is_some() || !source.spec().texts.is_empty();
            assert!(SurveyKind::all().contains(&source) && gives_items, "{kind} <- {source}");
        }
        let roles = [kind.curation().is_some(), kind.outcome_fn().is_some(), kind.report().is_some()];
        assert_eq!(roles.iter().filter(|&&r| r).count(), 1, "{kind}: curates, measures or reports");
        for q in kind.spec().questions.iter().flat_map(|p| p.iter()) {
            for seed in 0..8 {
                let p = kind.present(&full_item(*q), seed).unwrap();
                for o in &p.options {
                    if kind.values().is_empty() {
                        // Answers are orders of the options; an option's value is its image's position.
                        assert!(o.value.parse::<usize>().is_ok_and(|i| i < p.options.len()), "{kind}: {:?}", o.value);
                        continue;
                    }
                    assert!(kind.values().contains(&o.value.as_str()), "{kind} stores {:?}, not listed", o.value);
                    if let Some(c) = kind.curation() {
                        assert!((c.verdict)(&o.value).is_some(), "{kind}: {:?} has no verdict", o.value);
                        assert!(kind.binary_category(&o.value).is_some());
                    }
                }
            }
        }
    }
}

#[test]
fn the_pipeline_is_found_by_role_not_by_name() {
    let four = SurveyKind::parse("four_image").unwrap();
    let ambiguity = SurveyKind::parse("ambiguity").unwrap();
    let baseline = SurveyKind::parse("human_baseline").unwrap();
    assert_eq!(SurveyKind::first_step(), Some(four));
    assert_eq!(four.next_step(), Some(ambiguity));
    assert_eq!(ambiguity.next_step(), None, "the baseline measures; it is no step");
    assert_eq!(baseline.next_step(), None);
    assert_eq!(SurveyKind::measurements().collect::<Vec<_>>(), [baseline]);
    assert_eq!((four.label(), ambiguity.label(), baseline.label()), ("Step 3", "Step 4", "human_baseline"));
    assert_eq!(baseline.spec().sources, [ambiguity, four], "the latest survivors first");
    assert!(four.default_binary_agreement() && !ambiguity.default_binary_agreement());
    assert!(!baseline.spec().adjudicated && four.spec().adjudicated);
}

#[test]
fn crosses_the_wire_as_its_name_and_refuses_unknown_names() {
    let four = SurveyKind::parse("four_image").unwrap();
    assert_eq!(serde_json::to_string(&four).unwrap(), "\"four_image\"");
    assert_eq!(serde_json::from_str::<SurveyKind>("\"ambiguity\"").unwrap().name(), "ambiguity");
    let e = serde_json::from_str::<SurveyKind>("\"five_image\"").unwrap_err().to_string();
    assert!(e.contains("unknown survey kind \"five_image\"") && e.contains("four_image"), "{e}");
    assert_eq!(format!("{four:?} {four}"), "four_image four_image");
}

#[test]
fn every_kind_makes_attention_checks_that_name_the_option_to_pick() {
    let kinds = SurveyKind::all().iter().copied().chain([SurveyKind::of(&CAPTION_PAIR)]);
    for kind in kinds {
        let attention = &kind.spec().attention;
        // Only a kind without a fixed set of values (ranking: an order) has no check to make.
        if kind.values().is_empty() {
            assert!(attention.targets.is_empty(), "{kind}");
            continue;
        }
        assert!(!attention.targets.is_empty() && attention.instruction.contains("{option}"), "{kind}");
        let first = kind.spec().questions[0][0];
        for &target in attention.targets {
            for seed in 0..6 {
                let p = kind.attention_check(&full_item(first), seed, target).unwrap();
                // The instruction names exactly the option that passes.
                let named: Vec<_> =
                    p.options.iter().filter(|o| p.prompt_text.contains(&format!(" {} ", o.label))).collect();
                assert_eq!(named.len(), 1, "{kind}: {:?}", p.prompt_text);
                assert_eq!(named[0].value, target);
                // Same options and order as the ordinary item: only the prompt changes.
                assert_eq!(p.options, kind.present(&full_item(first), seed).unwrap().options);
            }
        }
        assert!(kind.attention_check(&full_item(first), 0, "no such value").is_err());
    }
}

#[test]
fn a_kind_the_option_card_cannot_answer_has_a_card_of_its_own() {
    // The shared card posts one option's id and has no text box: a kind
    // whose answer carries free text, or is more than one option, needs its own.
    let needs_card = |kind: SurveyKind| {
        let p = kind.present(&full_item(kind.spec().questions[0][0]), 1).unwrap();
        !kind.spec().texts.is_empty() || p.options.iter().any(|o| (kind.spec().answer)(&p, &o.id).is_err())
    };
    let carded: Vec<&str> = super::KINDS.iter().filter(|&&k| super::ui(k).is_some()).map(|k| k.name()).collect();
    for &kind in super::KINDS {
        assert!(!needs_card(kind) || super::ui(kind).is_some(), "{kind} has no card of its own");
    }
    assert_eq!(carded, ["ranking", "triplet_check", "caption_writing"]);
}

#[test]
fn the_registry_table_lists_every_kind_in_order_with_the_server_parts_it_names() {
    let listed: Vec<SurveyKind> = super::REGISTRY.kinds().collect();
    assert_eq!(listed, super::KINDS);
    let with_server: Vec<&str> =
        super::REGISTRY.entries.iter().filter(|e| e.server.is_some()).map(|e| e.kind.name()).collect();
    assert_eq!(with_server, ["ranking", "triplet_check", "caption_writing", "pair_validation"]);
    // A kind that reports its own statistics has a server report to give them.
    for kind in super::REGISTRY.kinds() {
        let own = matches!(kind.report(), Some(crate::domain::survey::Report::Own));
        assert_eq!(own, super::REGISTRY.server(kind).and_then(|s| s.report).is_some(), "{kind}");
    }
    let reporting: Vec<SurveyKind> = super::REGISTRY.reports().collect();
    assert!(reporting.iter().all(|k| k.report().is_some()) && !reporting.is_empty());
}
