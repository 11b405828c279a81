//! The demo's comparison page is filled at start: the two demo scorers rate
//! the demo instances from their images and land in the run store.
use crate::helpers::TestApp;
use hardneg::api_types::CompareReport;
use hardneg::domain::category::NegType;

#[tokio::test]
async fn demo_start_scores_both_demo_models_and_the_order_blind_one_fails_swap() {
    let data = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(data.path(), &[]);
    let researcher = app.login("researcher").await;
    let report: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=demo").await;
    let names: Vec<&str> = report.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["demo: scene reader", "demo: bag of words"]);
    let group = |i: usize, t: NegType| report.models[i].report.by_type[&t].group;
    for m in &report.models {
        assert_eq!(m.n, 63, "every demo instance has both images: {}", m.name);
    }
    assert!(
        group(1, NegType::Swap) < group(1, NegType::Replace),
        "bag of words: SWAP {} vs REPLACE {}",
        group(1, NegType::Swap),
        group(1, NegType::Replace)
    );
    assert!(group(0, NegType::Swap) > group(1, NegType::Swap), "reading relations and bindings helps on SWAP");

    // A restart rescores instead of adding runs.
    app.kill();
    let mut again = TestApp::spawn_on(data.path(), &[]);
    again.accounts = app.accounts.clone();
    let researcher = again.login("researcher").await;
    let rerun: CompareReport = again.get(&researcher, "/api/v1/compare?dataset=demo").await;
    assert_eq!(rerun.models, report.models);
}
