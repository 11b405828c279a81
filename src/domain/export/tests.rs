use super::*;
use crate::domain::category::Category;
use crate::domain::resolution::PosteriorModel;

fn vote(a: &str, v: &str) -> Vote {
    Vote { annotator: a.into(), value: v.into() }
}

fn img(hash: &str, mime: &str) -> ImageRef {
    ImageRef { hash: hash.into(), mime: mime.into(), bytes: 10 }
}

#[test]
fn stages_keep_what_their_steps_decided() {
    use Verdict::*;
    assert!(Stage::Candidates.keeps(None, None));
    assert!(Stage::Step3.keeps(Some(Kept), None));
    assert!(!Stage::Step3.keeps(Some(Discarded), None));
    assert!(!Stage::Step3.keeps(None, None), "open items are not survivors");
    assert!(Stage::Final.keeps(Some(Kept), Some(Kept)));
    for s4 in [None, Some(Ambiguous), Some(Both)] {
        assert!(!Stage::Final.keeps(Some(Kept), s4));
    }
    for s in Stage::ALL {
        assert_eq!(Stage::parse(s.as_str()), Ok(s));
    }
    assert_eq!(Stage::parse("step4").unwrap_err(), "unknown stage \"step4\" (candidates, step3 or final)");
    assert_eq!(Format::parse("parquet"), Ok(Format::Parquet));
    assert!(Format::parse("xlsx").unwrap_err().contains("csv, jsonl or parquet"));
}

#[test]
fn votes_and_agreement_flags() {
    let v = [vote("annotator1", "2"), vote("annotator2", "none")];
    assert_eq!(votes_text(&v), "annotator1:2;annotator2:none");
    assert_eq!(AgreementFlag::of(&v), AgreementFlag::Disagreed);
    assert_eq!(AgreementFlag::of(&v[..1]), AgreementFlag::Single);
    assert_eq!(AgreementFlag::of(&[vote("a", "1"), vote("b", "1")]), AgreementFlag::Agreed);
    assert_eq!(AgreementFlag::of(&[]).as_str(), "none");
    assert_eq!(resolved_by_str(ResolvedBy::Adjudication), "adjudication");
}

#[test]
fn columns_start_with_bivlc_and_depend_on_the_stage() {
    let names = |s| columns(s).into_iter().map(|c| c.name().into_owned()).collect::<Vec<_>>();
    let bivlc = ["image", "caption", "negative_caption", "negative_image", "type", "subtype"];
    for s in Stage::ALL {
        assert_eq!(names(s)[..6], bivlc);
    }
    assert!(names(Stage::Candidates).ends_with(&["candidate_2".to_string(), "candidate_3".to_string()]));
    assert!(!names(Stage::Step3).contains(&"step4_votes".to_string()));
    assert!(names(Stage::Final).ends_with(&[
        "step4_votes".into(),
        "step4_resolved_by".into(),
        "step4_agreement".into(),
        "step4_posterior".into(),
        "step4_posterior_model".into()
    ]));
    assert_eq!(Column::Candidate(0).kind(), ColumnKind::Image);
    assert_eq!(Column::Votes(Step::Step4).kind(), ColumnKind::Votes);
}

#[test]
fn cells_of_a_row() {
    let row = Row {
        instance_id: 7,
        key: "k7".into(),
        caption: "a cat".into(),
        negative_caption: "a dog".into(),
        caption_orig: "A cat.".into(),
        negative_caption_orig: "A dog.".into(),
        category: Category::ALL[3],
        image: Some(img("aa", "image/png")),
        negative_image: Some(img("bb", "image/jpeg")),
        candidates: vec![],
        step3: Some(StepRecord {
            votes: vec![vote("a1", "2"), vote("a2", "2")],
            resolved_by: ResolvedBy::Unanimous,
            posterior: Some(Posterior { value: 0.98765432, model: PosteriorModel::DawidSkene }),
        }),
        step4: None,
    };
    let text = |c| row.cell(c).text().map(|t| t.into_owned());
    assert_eq!(text(Column::Posterior(Step::Step3)).as_deref(), Some("0.987654"));
    assert_eq!(text(Column::Posterior(Step::Step4)), None, "no Step 4 record");
    assert_eq!(
        text(Column::PosteriorModel(Step::Step3)).as_deref(),
        Some("dawid_skene"),
        "the posterior names its model"
    );
    assert_eq!(text(Column::PosteriorModel(Step::Step4)), None);
    assert_eq!(text(Column::Image).as_deref(), Some("images/aa.png"));
    assert_eq!(text(Column::NegativeImage).as_deref(), Some("images/bb.jpg"));
    assert_eq!(text(Column::Type).as_deref(), Some("swap"));
    assert_eq!(text(Column::Subtype).as_deref(), Some("obj"));
    assert_eq!(text(Column::InstanceId).as_deref(), Some("7"));
    assert_eq!(text(Column::Votes(Step::Step3)).as_deref(), Some("a1:2;a2:2"));
    assert_eq!(text(Column::ResolvedBy(Step::Step3)).as_deref(), Some("unanimous"));
    assert_eq!(text(Column::Agreement(Step::Step3)).as_deref(), Some("agreed"));
    assert_eq!(text(Column::Votes(Step::Step4)), None);
    assert_eq!(text(Column::Candidate(0)), None);
    assert_eq!(row.images().count(), 2);
}

#[test]
fn safe_names_for_files() {
    assert_eq!(safe_name("demo"), "demo");
    assert_eq!(safe_name("my data/set\"x"), "my_data_set_x");
    assert_eq!(safe_name("../.."), "_..");
    assert_eq!(safe_name(""), "dataset");
    assert_eq!(safe_name(&"x".repeat(100)).len(), 64);
}
