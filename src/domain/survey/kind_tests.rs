//! The pipeline lookups over a handed-down list of kinds, on kinds made
//! here: a list out of step order, a late step, a measurement and a report.
use super::*;
use crate::domain::survey::one_option;

static STEP3: KindSpec = spec("step3", curation(3), &[]);
static STEP4: KindSpec = spec("step4", curation(4), &FROM_STEP3);
static STEP5: KindSpec = spec("step5", curation(5), &FROM_STEP3);
static MEASURE: KindSpec = spec("measure", Role::Measurement { outcome: |_| None, queries: &[] }, &FROM_STEP3);
static REPORT: KindSpec = spec("report", Role::Report(Report::Own), &[]);
static FROM_STEP3: [SurveyKind; 1] = [SurveyKind::of(&STEP3)];

const fn curation(step: u8) -> Role {
    Role::Curation(Curation {
        step,
        label: "Step",
        verdict: |_| None,
        binary: ("keep", "drop"),
        binary_by_default: true,
        carried_image: |_, _| None,
        chosen_slot: |_| None,
    })
}

const fn spec(name: &'static str, role: Role, sources: &'static [SurveyKind]) -> KindSpec {
    KindSpec {
        name,
        instructions: "",
        values: &["keep", "drop"],
        present: |_, _| Err(SurveyError::BadItem("not shown in these tests".into())),
        answer: one_option,
        role,
        sources,
        questions: &[&[0]],
        needs: Needs {
            candidates: None,
            captions: false,
            caption_type: false,
            positive_image: false,
            chosen_image: false,
            paraphrase: false,
            negative_b: false,
        },
        adjudicated: false,
        raters: None,
        attention: Attention { targets: &[], instruction: "" },
        texts: &[],
    }
}

fn kinds() -> [SurveyKind; 5] {
    [&REPORT, &MEASURE, &STEP5, &STEP4, &STEP3].map(SurveyKind::of)
}

#[test]
fn the_first_step_is_the_lowest_step_without_sources() {
    assert_eq!(SurveyKind::first_step_in(&kinds()), Some(SurveyKind::of(&STEP3)));
    assert_eq!(SurveyKind::first_step_in(&kinds()[..2]), None, "no curation kind");
    assert_eq!(SurveyKind::first_step_in(&[]), None);
}

#[test]
fn the_next_step_is_the_lowest_later_step_taking_this_ones_survivors() {
    let [report, measure, step5, step4, step3] = kinds();
    assert_eq!(step3.next_step_in(&kinds()), Some(step4));
    assert_eq!(step3.next_step_in(&[step3, step5]), Some(step5), "only the steps in the list");
    assert_eq!(step4.next_step_in(&kinds()), None, "step 5 takes step 3's survivors, not step 4's");
    assert_eq!(step5.next_step_in(&kinds()), None);
    assert_eq!(measure.next_step_in(&kinds()), None, "a measurement is no step");
    assert_eq!(report.next_step_in(&kinds()), None);
}

#[test]
fn the_measurements_are_the_kinds_with_an_outcome() {
    let measurements: Vec<SurveyKind> = SurveyKind::measurements_in(&kinds()).collect();
    assert_eq!(measurements, [SurveyKind::of(&MEASURE)]);
}
