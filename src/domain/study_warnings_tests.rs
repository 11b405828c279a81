//! What a spec allows that its writer most likely did not mean: `Study::warnings`.
use super::*;
use crate::kinds::KINDS;

#[test]
fn a_posterior_stop_in_a_link_study_without_gold_is_warned_of() {
    let spec = |adaptive: &str, gold: &str| {
        let text = format!(
            "name = \"crowd\"\nkind = \"four_image\"\ndataset = \"demo\"\naccess = \"link\"\n\
             [assignment.adaptive]\nmin = 2\nmax = 4\n{adaptive}\n[link]\nbundle_size = 10\nconsent = \"ok\"\n{gold}"
        );
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 0).unwrap().warnings()
    };
    let warned = spec("stop = \"posterior\"\nthreshold = 0.9", "");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].starts_with("no gold items (link.gold)") && warned[0].contains("posterior ≥ 0.9 "), "{warned:?}");
    let gold = "gold = [{ key = \"k1\", answer = \"none\" }]";
    assert_eq!(spec("stop = \"posterior\"\nthreshold = 0.9", gold), Vec::<String>::new());
    assert_eq!(spec("stop = \"agree\"", ""), Vec::<String>::new(), "agreement promises no posterior");
}

#[test]
fn mace_in_a_link_study_is_warned_of() {
    let spec = |resolve: &str, access: &str| {
        let text = format!(
            "name = \"crowd\"\nkind = \"four_image\"\ndataset = \"demo\"\naccess = \"{access}\"\nresolve = \"{resolve}\"\n\
             [link]\nbundle_size = 10\nconsent = \"ok\"\ncopies = 3\n"
        );
        let text = match access {
            "link" => text,
            _ => text.split("[link]").next().unwrap().replace("access = \"accounts\"\n", "annotators = \"all\"\n"),
        };
        toml::from_str::<StudySpec>(&text).unwrap().parse_in(KINDS, 0).unwrap().warnings()
    };
    assert_eq!(spec("mace", "link"), [MACE_IN_LINK_STUDY.to_string()]);
    assert!(MACE_IN_LINK_STUDY.contains("dawid_skene"));
    assert_eq!(spec("dawid_skene", "link"), Vec::<String>::new());
    assert_eq!(spec("mace", "accounts"), Vec::<String>::new(), "annotators answer across the study");
}
