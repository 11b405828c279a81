//! Unit tests of study-spec parsing, against the registered kinds (named
//! here: the core itself never names one).
use super::*;
use crate::kinds::KINDS;

fn spec(annotators: AnnotatorsSpec) -> StudySpec {
    StudySpec { name: " Step 3 ".into(), annotators: Some(annotators), ..fixture::spec("four_image") }
}

#[test]
fn parses_a_minimal_spec_with_defaults() {
    let s = spec(AnnotatorsSpec::Keyword("all".into())).parse_in(KINDS, 42).unwrap();
    assert_eq!(s.name, "Step 3");
    assert_eq!(s.kind, SurveyKind::parse_in(KINDS, "four_image").unwrap());
    assert_eq!(s.annotators, Annotators::All);
    assert_eq!(s.seed, 42);
    assert_eq!(s.rule, AssignmentRule::EachAnnotatorAll);
    assert!(s.instructions.starts_with("Select one image"));
}

#[test]
fn names_the_field_that_is_wrong() {
    let mut bad = spec(AnnotatorsSpec::Keyword("everyone".into()));
    assert!(bad.clone().parse_in(KINDS, 0).unwrap_err().to_string().starts_with("field `annotators`"));
    bad.annotators = Some(AnnotatorsSpec::Names(vec![]));
    assert!(bad.clone().parse_in(KINDS, 0).is_err());
    bad.annotators = None;
    assert!(bad.clone().parse_in(KINDS, 0).unwrap_err().to_string().contains("field `annotators`: missing"));
    bad.annotators = Some(AnnotatorsSpec::Names(vec!["ana".into()]));
    bad.kind = "five_image".into();
    let e = bad.clone().parse_in(KINDS, 0).unwrap_err().to_string();
    assert!(e.contains("field `kind`") && e.contains("four_image"), "{e}");
    bad.kind = "four_image".into();
    bad.assignment.rule = "random".into();
    assert!(bad.clone().parse_in(KINDS, 0).unwrap_err().to_string().contains("assignment.rule"));
    bad.assignment.rule = "each_annotator_all".into();
    bad.name = "  ".into();
    assert!(bad.parse_in(KINDS, 0).unwrap_err().to_string().contains("field `name`"));
}

#[test]
fn keeps_explicit_seed_names_and_instructions() {
    let mut s = spec(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into()]));
    s.seed = Some(5);
    s.instructions = Some("Be careful.".into());
    let s = s.parse_in(KINDS, 42).unwrap();
    assert_eq!(s.seed, 5);
    assert_eq!(s.instructions, "Be careful.");
    assert_eq!(s.annotators, Annotators::Named(vec!["ana".into(), "bo".into()]));
}

fn err(s: StudySpec) -> String {
    s.parse_in(KINDS, 0).unwrap_err().to_string()
}

#[test]
fn agreement_mapping_defaults_by_kind_and_can_be_chosen() {
    let s = spec(AnnotatorsSpec::Keyword("all".into()));
    assert_eq!(s.clone().parse_in(KINDS, 0).unwrap().mapping, Mapping::Binary, "BiVLC's Step 3 kappa is binary");
    let mut full = s.clone();
    full.agreement = Some("full".into());
    assert_eq!(full.parse_in(KINDS, 0).unwrap().mapping, Mapping::Full);
    let mut step4 = s.clone();
    step4.kind = "ambiguity".into();
    step4.source = Some("Step 3".into());
    let step4 = step4.parse_in(KINDS, 0).unwrap();
    assert_eq!((step4.mapping, step4.source.as_deref()), (Mapping::Full, Some("Step 3")));
    let mut no_binary = s.clone();
    no_binary.kind = "odd_one_out".into();
    no_binary.agreement = Some("binary".into());
    let message = err(no_binary);
    assert!(message.contains("field `agreement`") && message.contains("no binary reading"), "{message}");
    let mut bad = s;
    bad.agreement = Some("loose".into());
    assert!(err(bad).contains("field `agreement`"));
}

#[test]
fn step4_needs_a_source_and_step3_refuses_one() {
    let mut s = spec(AnnotatorsSpec::Keyword("all".into()));
    s.kind = "ambiguity".into();
    assert!(err(s.clone()).contains("field `source`"));
    s.kind = "four_image".into();
    s.source = Some("x".into());
    assert!(err(s).contains("field `source`"));
}

#[test]
fn pairs_name_the_annotators_and_default_to_adjudication() {
    let mut s = spec(AnnotatorsSpec::Keyword("all".into()));
    s.annotators = None;
    s.assignment = AssignmentSpec {
        rule: "pairs".into(),
        pairs: Some(vec![vec!["ana".into(), "bo".into()], vec!["cy".into(), "di".into()]]),
        overlap: Some(100),
        ..AssignmentSpec::default()
    };
    let st = s.clone().parse_in(KINDS, 0).unwrap();
    assert_eq!(st.annotators, Annotators::Named(vec!["ana".into(), "bo".into(), "cy".into(), "di".into()]));
    assert_eq!(st.resolve, ResolveRule::Adjudication);
    assert!(matches!(st.rule, AssignmentRule::Pairs { overlap: 100, .. }));
    let mut primary = s.clone();
    primary.resolve = Some("primary".into());
    assert_eq!(primary.parse_in(KINDS, 0).unwrap().resolve, ResolveRule::Primary, "pairs name their primaries");

    let mut wrong = s.clone();
    wrong.annotators = Some(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into()]));
    assert!(err(wrong).contains("exactly the annotators"));
    let mut wrong = s.clone();
    wrong.annotators = Some(AnnotatorsSpec::Keyword("all".into()));
    assert!(err(wrong).contains("field `annotators`"));
    let mut wrong = s.clone();
    wrong.assignment.pairs = Some(vec![vec!["ana".into()]]);
    assert!(err(wrong).contains("pair 1 has 1 names"));
    let mut wrong = s.clone();
    wrong.assignment.pairs = Some(vec![vec!["ana".into(), "bo".into()], vec!["bo".into(), "cy".into()]]);
    assert!(err(wrong).contains("\"bo\" appears in more than one place"));
    let mut wrong = s.clone();
    wrong.assignment.overlap = None;
    assert!(err(wrong).contains("field `assignment.overlap`"));
    let mut wrong = s;
    wrong.resolve = Some("vote".into());
    assert!(err(wrong).contains("field `resolve`"));
}

#[test]
fn human_baseline_samples_in_groups_of_named_annotators() {
    let mut s = spec(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into()]));
    s.kind = "human_baseline".into();
    s.source = Some("Step 4".into());
    assert!(err(s.clone()).contains("rule = \"groups\""), "the default rule does not fit");
    s.assignment = AssignmentSpec { rule: "groups".into(), ..AssignmentSpec::default() };
    let st = s.clone().parse_in(KINDS, 0).unwrap();
    assert_eq!(st.sample, Some(Sample::Count(DEFAULT_SAMPLE)));
    assert_eq!(st.rule, AssignmentRule::Groups { size: DEFAULT_GROUP_SIZE, roster: vec!["ana".into(), "bo".into()] });
    assert_eq!(st.mapping, Mapping::Full);
    s.assignment.sample = Some(SampleSpec::Count(6));
    s.assignment.group_size = Some(3);
    let st = s.clone().parse_in(KINDS, 0).unwrap();
    assert_eq!(
        (st.sample, &st.rule),
        (Some(Sample::Count(6)), &AssignmentRule::Groups { size: 3, roster: vec!["ana".into(), "bo".into()] })
    );
    let mut every = s.clone();
    every.assignment.sample = Some(SampleSpec::Word("all".into()));
    assert_eq!(every.clone().parse_in(KINDS, 0).unwrap().sample, Some(Sample::All));
    every.assignment.sample = Some(SampleSpec::Word("most".into()));
    assert!(err(every).contains("field `assignment.sample`: expected a number or \"all\", got \"most\""));
    let mut all = s.clone();
    all.annotators = Some(AnnotatorsSpec::Keyword("all".into()));
    assert!(err(all).contains("needs the list of annotators"));
    let mut no_source = s.clone();
    no_source.source = None;
    assert!(err(no_source).contains("field `source`"));
    let mut step3 = s.clone();
    step3.kind = "four_image".into();
    step3.source = None;
    assert!(err(step3).contains("only it does"), "groups are for the human baseline");
    s.assignment.group_size = Some(0);
    assert!(err(s).contains("at least 1"));
}

#[test]
fn primary_must_be_named_and_one_of_the_annotators() {
    let mut s = spec(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into()]));
    s.resolve = Some("primary".into());
    assert!(err(s.clone()).contains("field `primary`"));
    s.primary = Some("cy".into());
    assert!(err(s.clone()).contains("not one of the study's annotators"));
    s.primary = Some("bo".into());
    assert_eq!(s.clone().parse_in(KINDS, 0).unwrap().primary.as_deref(), Some("bo"));
    // Under any other rule it would name a winner nobody asked for.
    s.resolve = Some("first".into());
    assert_eq!(
        err(s.clone()),
        "field `primary`: it names whose answer wins under resolve = \"primary\"; this study resolves by \"first\""
    );
    s.resolve = None;
    assert!(err(s).contains("resolves by \"adjudication\""));
}

#[test]
fn a_name_listed_twice_in_annotators_is_refused() {
    let twice = spec(AnnotatorsSpec::Names(vec!["ana".into(), "bo".into(), "ana".into()]));
    assert_eq!(err(twice), "field `annotators`: \"ana\" is named twice; a name may appear once");
    let once = spec(AnnotatorsSpec::Names(vec!["ana".into(), "Ana".into()]));
    assert!(once.parse_in(KINDS, 0).is_ok(), "usernames are compared as written");
}

#[test]
fn a_sample_larger_than_the_survivors_is_refused_with_both_numbers() {
    assert_eq!(Sample::Count(24).size(24), Ok(24));
    assert_eq!(Sample::Count(5).size(24), Ok(5));
    assert_eq!(Sample::All.size(24), Ok(24));
    let e = Sample::Count(74).size(24).unwrap_err();
    assert!(e.contains("74") && e.contains("24") && e.contains("\"all\""), "{e}");
}

#[test]
fn sample_is_read_from_toml_as_a_number_or_all() {
    let parse =
        |v: &str| toml::from_str::<AssignmentSpec>(&format!("rule = \"groups\"\nsample = {v}")).map(|a| a.sample);
    assert_eq!(parse("12").unwrap(), Some(SampleSpec::Count(12)));
    assert_eq!(parse("\"all\"").unwrap(), Some(SampleSpec::Word("all".into())));
}

#[test]
fn link_studies_name_no_annotators_and_carry_their_settings() {
    let toml_spec = |extra: &str| {
        format!(
            "name = \"crowd\"\nkind = \"four_image\"\ndataset = \"demo\"\naccess = \"link\"\n{extra}\n[link]\nbundle_size = 10\nconsent = \"I agree\"\n"
        )
    };
    let parse = |text: &str| toml::from_str::<StudySpec>(text).unwrap().parse_in(KINDS, 1);
    let s = parse(&toml_spec("")).unwrap();
    let link = s.link.expect("link settings");
    assert_eq!((link.bundle_size, link.copies, link.consent.as_str()), (10, 1, "I agree"));
    assert_eq!(s.annotators, Annotators::Named(Vec::new()), "no account is admitted to a link study");
    let named = parse(&toml_spec("annotators = \"all\"")).unwrap_err().to_string();
    assert!(named.starts_with("field `annotators`: a link study"), "{named}");
    let primary = parse(&toml_spec("resolve = \"primary\"")).unwrap_err().to_string();
    assert!(primary.starts_with("field `resolve`"), "{primary}");
    // The baseline's groups rule needs no roster when participants arrive by link.
    let baseline = "name = \"b\"\nkind = \"human_baseline\"\ndataset = \"demo\"\nsource = \"s4\"\naccess = \"link\"\n\
                    [assignment]\nrule = \"groups\"\n[link]\nbundle_size = 25\nconsent = \"ok\"\n";
    let b = parse(baseline).unwrap();
    assert!(matches!(b.rule, AssignmentRule::Groups { ref roster, .. } if roster.is_empty()));
    assert_eq!(b.sample, Some(Sample::Count(DEFAULT_SAMPLE)));
    // Its bundles are link.bundle_size items: a group_size would be ignored, so it is refused.
    let sized = baseline.replace("rule = \"groups\"\n", "rule = \"groups\"\ngroup_size = 7\n");
    let sized = parse(&sized).unwrap_err().to_string();
    assert!(sized.starts_with("field `assignment.group_size`: a link study's bundles"), "{sized}");
    // An account study keeps its annotators and has no link.
    assert_eq!(spec(AnnotatorsSpec::Keyword("all".into())).parse_in(KINDS, 1).unwrap().link, None);
}

#[test]
fn stratified_sample_rule_parses_with_its_fields_named_in_errors() {
    let parse = |assignment: &str, tail: &str| {
        let text = format!(
            "name = \"pp\"\nkind = \"odd_one_out\"\ndataset = \"pp\"\n{tail}\n[assignment]\n{assignment}\n{}",
            if tail.contains("link") { "[link]\nbundle_size = 10\nconsent = \"ok\"\nsamples = 4\n" } else { "" }
        );
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 1).map_err(|e| e.to_string())
    };
    let s = parse("rule = \"stratified_sample\"\nper_subset = 30\nsubsets = [\"swap/obj\"]", "annotators = \"all\"")
        .unwrap();
    let swap_obj = crate::domain::category::Category::parse("swap", "obj").unwrap();
    assert_eq!(s.rule, AssignmentRule::StratifiedSample { per_subset: 30, subsets: Some(vec![swap_obj]) });
    let link = parse("rule = \"stratified_sample\"\nper_subset = 2", "access = \"link\"").unwrap();
    assert_eq!(link.link.unwrap().samples, Some(4));
    let err = |a: &str, t: &str| parse(a, t).unwrap_err();
    assert!(err("rule = \"stratified_sample\"\nper_subset = 0", "annotators = \"all\"")
        .starts_with("field `assignment.per_subset`"));
    assert!(err("rule = \"stratified_sample\"\nper_subset = 1\nsubsets = [\"add/rel\"]", "annotators = \"all\"")
        .starts_with("field `assignment.subsets`"));
    assert!(
        err("subsets = [\"swap/obj\"]", "annotators = \"all\"").starts_with("field `assignment.subsets`: per_subset")
    );
    assert!(err("rule = \"each_annotator_all\"", "access = \"link\"").starts_with("field `link.samples`: belongs to"));
    let groups = err("rule = \"stratified_sample\"\nper_subset = 2\ngroup_size = 3", "annotators = \"all\"");
    assert!(groups.starts_with("field `assignment.rule`"), "{groups}");
    let unknown = err("rule = \"sampled\"", "annotators = \"all\"");
    assert!(unknown.contains("known rules: each_annotator_all, pairs, groups, stratified_sample"), "{unknown}");
}

#[test]
fn names_and_instructions_are_plain_bounded_text_and_a_sample_needs_its_rule() {
    let ok = spec(AnnotatorsSpec::Names(vec!["ana".into()]));
    let mut bad = ok.clone();
    bad.name = "Step 3\u{202E}".into();
    assert_eq!(err(bad), "field `name`: character U+202E at 7 is not allowed");
    let mut bad = ok.clone();
    bad.name = "x".repeat(201);
    assert_eq!(err(bad), "field `name`: 201 characters; at most 200 are allowed");
    let mut bad = ok.clone();
    bad.instructions = Some("Read.\0".into());
    assert_eq!(err(bad), "field `instructions`: character U+0000 at 6 is not allowed");
    let mut fine = ok.clone();
    fine.instructions = Some("Read the caption.\nThen pick.".into());
    assert!(fine.parse_in(KINDS, 0).is_ok(), "line breaks are fine in instructions");
    let mut bad = ok;
    bad.assignment.sample = Some(SampleSpec::Count(100_000));
    assert_eq!(err(bad), "field `assignment.sample`: sample belongs to rule = \"groups\"");
}

#[test]
fn a_kind_that_fixes_its_raters_refuses_specs_that_give_another_number() {
    let parse = |text: &str| toml::from_str::<StudySpec>(text).unwrap().parse_in(KINDS, 1).unwrap();
    let triplets = |extra: &str| parse(&format!("name = \"t\"\nkind = \"triplet_check\"\ndataset = \"d\"\n{extra}"));
    let check = |s: &Study, accounts| check_raters(s, 2, accounts, 20).map_err(|e| e.to_string());
    assert_eq!(check(&triplets("annotators = [\"e1\", \"e2\"]"), 9), Ok(()));
    let three = check(&triplets("annotators = [\"e1\", \"e2\", \"e3\"]"), 9).unwrap_err();
    assert_eq!(three, "field `annotators`: triplet_check wants 2 people on every item; the spec names 3");
    assert!(check(&triplets("annotators = [\"e1\"]"), 9).is_err());
    assert_eq!(check(&triplets("annotators = \"all\""), 2), Ok(()));
    assert_eq!(check(&triplets("annotators = \"all\""), 0), Ok(()), "accounts come later");
    let all = check(&triplets("annotators = \"all\""), 14).unwrap_err();
    assert!(all.starts_with("field `annotators`") && all.ends_with("now, 14"), "{all}");
    // BiVLC's pairs: two on the shared blocks, one on every other item.
    let pairs = |overlap: usize, pairs: &str| {
        triplets(&format!("[assignment]\nrule = \"pairs\"\noverlap = {overlap}\npairs = [{pairs}]\n"))
    };
    let one_pair = "[\"e1\", \"e2\"]";
    assert_eq!(check(&pairs(20, one_pair), 9), Ok(()), "one pair shares all 20 items");
    assert_eq!(check(&pairs(25, one_pair), 9), Ok(()), "an overlap past the items shares them all");
    assert_eq!(
        check(&pairs(3, one_pair), 9).unwrap_err(),
        "field `assignment.overlap`: triplet_check wants 2 people on every item; 1 pair(s) sharing 3 items each \
         leave 17 of the study's 20 items to one person (one pair: an overlap of at least the items; several: \
         pairs × overlap = items)"
    );
    let two_pairs = "[\"e1\", \"e2\"], [\"e3\", \"e4\"]";
    assert_eq!(check(&pairs(10, two_pairs), 9), Ok(()));
    assert!(check(&pairs(5, two_pairs), 9).unwrap_err().contains("leave 10 of the study's 20 items"));
    let link =
        |copies: &str| triplets(&format!("access = \"link\"\n[link]\nbundle_size = 5\nconsent = \"ok\"\n{copies}"));
    assert_eq!(check(&link("copies = 2"), 0), Ok(()));
    let one = check(&link(""), 0).unwrap_err();
    assert_eq!(one, "field `link.copies`: triplet_check wants 2 people on every item: set it to 2, not 1");
    let adaptive = "annotators = [\"e1\", \"e2\", \"e3\"]\n[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n";
    assert!(check(&triplets(adaptive), 9).unwrap_err().starts_with("field `assignment.adaptive`"));
    let sample = "annotators = [\"e1\", \"e2\"]\n[assignment]\nrule = \"stratified_sample\"\nper_subset = 1\n";
    assert!(check(&triplets(sample), 9).unwrap_err().starts_with("field `assignment.rule`"));
    let raters = |kind: &str| KINDS.iter().find(|k| k.name() == kind).unwrap().spec().raters;
    assert_eq!((raters("triplet_check"), raters("pair_validation"), raters("four_image")), (Some(2), Some(2), None));
}

#[test]
fn adaptive_overlap_is_refused_on_kinds_that_grade_people_against_a_known_answer() {
    let adaptive = |kind: &str| {
        let text = format!(
            "name = \"a\"\nkind = \"{kind}\"\ndataset = \"d\"\nannotators = \"all\"\n\
             [assignment.adaptive]\nmin = 2\nmax = 4\nstop = \"agree\"\n"
        );
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 0).map_err(|e| e.to_string())
    };
    assert!(adaptive("four_image").unwrap().adaptive.is_some());
    use crate::domain::survey::{Report, Role};
    let graded: Vec<_> =
        KINDS.iter().filter(|k| matches!(k.spec().role, Role::Report(Report::Accuracy { .. }))).collect();
    assert!(graded.iter().any(|k| k.name() == "caption_match"), "{graded:?}");
    for kind in graded {
        let e = adaptive(kind.name()).unwrap_err();
        assert!(e.starts_with("field `assignment.adaptive`") && e.contains("measures people"), "{kind}: {e}");
    }
}

/// The primary would answer only some items: those left at max without it
/// would all wait for adjudication (audit AW), so the pair is refused.
#[test]
fn resolve_primary_with_adaptive_overlap_is_refused() {
    let text = |resolve: &str| {
        format!(
            "name = \"a\"\nkind = \"four_image\"\ndataset = \"d\"\nannotators = [\"e1\", \"e2\", \"e3\", \"e4\"]\n\
             {resolve}\n[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n"
        )
    };
    let parse = |t: String| toml::from_str::<StudySpec>(&t).unwrap().parse_in(KINDS, 0).map_err(|e| e.to_string());
    let e = parse(text("resolve = \"primary\"\nprimary = \"e1\"")).unwrap_err();
    assert!(e.starts_with("field `resolve`") && e.contains("adaptive overlap"), "{e}");
    assert!(parse(text("resolve = \"first\"")).is_ok());
}

#[test]
fn resolve_on_a_kind_that_settles_nothing_is_refused() {
    let parse = |kind: &str, extra: &str| {
        let text = format!("name = \"r\"\nkind = \"{kind}\"\ndataset = \"d\"\nannotators = \"all\"\n{extra}");
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 1).map_err(|e| e.to_string())
    };
    assert_eq!(
        parse("odd_one_out", "resolve = \"dawid_skene\"").unwrap_err(),
        "field `resolve`: kind odd_one_out settles no item between answers (its statistics count every answer); remove it"
    );
    assert!(parse("odd_one_out", "").is_ok());
    assert!(parse("four_image", "resolve = \"dawid_skene\"").is_ok());
}

#[test]
fn gold_and_practice_answers_belong_to_the_first_question_they_ask() {
    // A/B/Tie asks gold and practice items its first question (commonsense):
    // a grammar answer could never be given there.
    let ab = |table: &str| {
        let text = format!(
            "name = \"ab\"\nkind = \"ab_tie\"\ndataset = \"d\"\naccess = \"link\"\n[link]\nbundle_size = 5\nconsent = \"ok\"\n{table}"
        );
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 1).map_err(|e| e.to_string())
    };
    for (table, field) in [("gold", "link.gold"), ("practice", "link.practice")] {
        assert!(ab(&format!("{table} = [{{ key = \"1\", answer = \"commonsense_a\" }}]")).is_ok());
        let e = ab(&format!("{table} = [{{ key = \"1\", answer = \"grammar_b\" }}]")).unwrap_err();
        assert!(e.starts_with(&format!("field `{field}`: item 1 (1): answer \"grammar_b\" is not one of")), "{e}");
        assert!(e.contains("commonsense_a, commonsense_b, commonsense_tie") && e.contains("first question"), "{e}");
    }
}
