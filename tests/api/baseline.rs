//! Human-baseline studies: every baseline study keeps its own Human row, a
//! sample larger than the survivors is refused, and progress totals count
//! the questions each annotator will really get.
use crate::helpers::{Spec, TestApp};
use hardneg::api_types::{CompareReport, StudyOverview, StudyProgress};
use hardneg::domain::ids::StudyId;
use serde_json::Value;

fn baseline(name: &str, annotators: &[&str]) -> Spec {
    Spec::new(name).kind("human_baseline").source("S3").annotators(annotators).seed(3)
}

#[tokio::test]
async fn each_baseline_study_has_its_row_samples_are_checked_and_totals_are_real() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let s3 = app.create_study_ok(&researcher, &Spec::new("S3").annotators(&["annotator1"]).seed(1)).await;
    assert_eq!(app.work_through("annotator1", s3, |_| "A".into()).await.len(), 63, "every demo item kept");

    // More than the 63 survivors: refused with both numbers; "all" takes them all.
    let res = app.create_study(&researcher, &baseline("too many", &["annotator1"]).groups(74, 25)).await;
    assert_eq!(res.status(), 422);
    let msg = res.text().await.unwrap();
    assert!(msg.contains("74") && msg.contains("63") && msg.contains("assignment.sample"), "{msg}");
    let spec = baseline("too many", &["annotator1"]).groups(74, 25).write(&app.data_dir, "too-many.toml");
    let out = app.cli(&["study", "create", spec.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("74") && err.contains("63"), "{err}");

    // Progress totals before anyone starts: 2 instances x 4 questions each.
    let b1 = app.create_study_ok(&researcher, &baseline("B1", &["annotator1", "annotator2"]).groups(4, 2)).await;
    let progress: StudyProgress = app.get(&researcher, &format!("/api/v1/studies/{b1}/progress")).await;
    assert_eq!(progress.items, 4);
    let totals: Vec<i64> = progress.annotators.iter().map(|a| a.total).collect();
    assert_eq!(totals, [8, 8], "{progress:?}");
    assert_eq!(app.work_through("annotator1", b1, |_| "A".into()).await.len(), 8, "the total announced is the work");

    let b_all = app.create_study_ok(&researcher, &baseline("B all", &["annotator2"]).groups_all(25)).await;
    let progress: StudyProgress = app.get(&researcher, &format!("/api/v1/studies/{b_all}/progress")).await;
    assert_eq!(progress.items, 63, "sample = \"all\" takes every survivor");
    assert_eq!(progress.annotators[0].total, 100, "a group of 25 instances is 100 questions");

    // A second, unanswered baseline does not erase the first one's row.
    let report: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=demo").await;
    let h = &report.humans;
    assert_eq!(h.len(), 2, "one row per baseline study, no pooled row yet: {h:?}");
    assert_eq!((h[0].label.as_str(), h[0].study_id), ("Human: B1", Some(StudyId::new(b1))));
    assert_eq!((h[0].people, h[0].instances), (1, 2));
    assert_eq!(h[0].report.as_ref().unwrap().overall.n, 2);
    assert_eq!(h[1].label, "Human: B all");
    assert!(h[1].report.is_none(), "listed with no complete answers yet");

    // Both answered: a pooled row over every complete (annotator, instance) pair.
    assert_eq!(app.work_through("annotator2", b1, |_| "A".into()).await.len(), 8);
    assert_eq!(app.work_through("annotator2", b_all, |_| "B".into()).await.len(), 100);
    // A baseline is no Step 4 of its source, and its four answers per instance are no dispute.
    let overview: Vec<StudyOverview> = app.get(&researcher, "/api/v1/studies/overview").await;
    let status = |id: i64| overview.iter().find(|o| o.status.study_id.get() == id).unwrap().status.clone();
    assert_eq!(status(s3).step4, None, "a baseline drawn from S3 is not its Step 4");
    assert_eq!((status(b1).final_items, status(b1).waiting, status(b1).disputed), (4, 0, 0));
    let report: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=demo").await;
    let h = &report.humans;
    assert_eq!(h.len(), 3, "{h:?}");
    let n = |i: usize| h[i].report.as_ref().unwrap().overall.n;
    assert_eq!((n(0), n(1)), (4, 25));
    assert_eq!((h[2].label.as_str(), h[2].study_id, h[2].people, n(2)), ("Human (all)", None, 2, 29));

    // Naming the source: only those studies' rows; a study of another kind is refused.
    let only: CompareReport = app.get(&researcher, &format!("/api/v1/compare?dataset=demo&baseline={b_all}")).await;
    assert_eq!(only.humans.iter().map(|h| h.label.as_str()).collect::<Vec<_>>(), ["Human: B all"]);
    let path = format!("/api/v1/compare?dataset=demo&baseline={b1}&baseline={b_all}");
    assert_eq!(app.get::<CompareReport>(&researcher, &path).await.humans.len(), 3);
    let res = researcher.get(app.url(&format!("/api/v1/compare?dataset=demo&baseline={s3}"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    let err: Value = res.json().await.unwrap();
    assert!(err["error"].as_str().unwrap().contains("not a human-baseline study"), "{err}");

    // The export carries each baseline's answers, with the question each one
    // answers, so a third party recomputes the Human row.
    let out = crate::odd_one_out::export_candidates(&app, "demo");
    let mut reader = csv::Reader::from_path(out.join(format!("study-{b1}-answers.csv"))).unwrap();
    let head = reader.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (who, item, value, question) = (col("annotator"), col("instance"), col("value"), col("question"));
    let mut by_pair: std::collections::BTreeMap<(String, String), Vec<(String, String)>> = Default::default();
    for row in reader.records() {
        let row = row.unwrap();
        let pair = (row[who].to_string(), row[item].to_string());
        by_pair.entry(pair).or_default().push((row[question].to_string(), row[value].to_string()));
    }
    let right = |answers: &[(String, String)], q: &str, want: &str| answers.iter().any(|(k, v)| k == q && v == want);
    let (mut i2t, mut t2i, mut group) = (0, 0, 0);
    for answers in by_pair.values() {
        assert_eq!(answers.len(), 4, "four questions per instance: {answers:?}");
        let i = right(answers, "ipos2t", "c0") && right(answers, "ineg2t", "c1");
        let t = right(answers, "tpos2i", "i0") && right(answers, "tneg2i", "i1");
        (i2t, t2i, group) = (i2t + usize::from(i), t2i + usize::from(t), group + usize::from(i && t));
    }
    let row = h[0].report.as_ref().unwrap().overall;
    assert_eq!(row.n, by_pair.len());
    let pct = |k: usize| 100.0 * k as f64 / by_pair.len() as f64;
    for (mine, theirs) in [(pct(i2t), row.i2t), (pct(t2i), row.t2i), (pct(group), row.group)] {
        assert!((mine - theirs).abs() < 1e-9, "{mine} vs {theirs}: {row:?}");
    }
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains(&format!("`study-{b1}-answers.csv`: kind `human_baseline`")), "{card}");
}
