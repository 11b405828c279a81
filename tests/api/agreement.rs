//! Agreement over a study's real answers, through the API and the CLI.
use crate::helpers::{demo_study, TestApp};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Answers every item; `none_if` decides from the caption shown.
async fn annotate_all(app: &TestApp, user: &str, none_if: fn(&str) -> bool) -> HashMap<String, bool> {
    let study = demo_study(&app.login(user).await, app).await;
    let mut said_none = HashMap::new();
    app.work_through(user, study, |task| {
        let none = none_if(&task.prompt.text);
        said_none.insert(task.prompt.text.clone(), none);
        if none { "none" } else { "A" }.into()
    })
    .await;
    said_none
}
#[tokio::test]
async fn cohen_kappa_of_two_annotators_matches_the_hand_computed_table() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let url = app.url("/api/v1/studies/1/agreement?mapping=binary");
    let empty: Value = researcher.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(empty["pairs"], json!([]));
    assert!(empty["mean_kappa"].is_null() && empty["mean_kappa_reason"].is_string(), "{empty}");

    let a = annotate_all(&app, "annotator1", |c| c.len() % 3 == 0).await;
    let b = annotate_all(&app, "annotator2", |c| c.len() % 3 == 0 || c.len() % 4 == 0).await;
    assert_eq!(a.len(), 63);
    // The 2×2 table by hand (category 0 = image, 1 = none, in the mapping's order).
    let mut t = [[0f64; 2]; 2];
    for (caption, &na) in &a {
        t[na as usize][b[caption] as usize] += 1.0;
    }
    let n = 63.0;
    let po = (t[0][0] + t[1][1]) / n;
    let pe = ((t[0][0] + t[0][1]) * (t[0][0] + t[1][0]) + (t[1][0] + t[1][1]) * (t[0][1] + t[1][1])) / (n * n);
    let kappa = (po - pe) / (1.0 - pe);

    let r: Value = researcher.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(r["categories"], json!(["image", "none"]));
    let pair = &r["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str(), pair["n"].as_u64()),
        (Some("annotator1"), Some("annotator2"), Some(63))
    );
    assert!((pair["observed"].as_f64().unwrap() - po).abs() < 1e-12);
    assert!((pair["expected"].as_f64().unwrap() - pe).abs() < 1e-12);
    assert!((pair["kappa"].as_f64().unwrap() - kappa).abs() < 1e-12);
    assert_eq!(pair["confusion"], json!([[t[0][0] as u64, t[0][1] as u64], [t[1][0] as u64, t[1][1] as u64]]));
    assert!((r["mean_kappa"].as_f64().unwrap() - kappa).abs() < 1e-12);
    assert!(r["fleiss_kappa"].is_number() && r["krippendorff_alpha"].is_number());

    // The researcher page shows it too.
    let page = researcher.get(app.url("/research")).send().await.unwrap().text().await.unwrap();
    let row = page.split("data-mapping=\"binary\"").nth(1).expect("a binary agreement row");
    assert!(row.split("</tr>").next().unwrap().contains(&format!("{kappa:.3}")), "kappa {kappa:.3} not on the page");

    // The CLI prints the same JSON; the full mapping has five categories.
    let out = app.cli(&["agreement", "1", "--mapping", "binary", "--json"]);
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), r);
    let default: Value =
        researcher.get(app.url("/api/v1/studies/1/agreement")).send().await.unwrap().json().await.unwrap();
    assert_eq!(default, r, "a four_image study reports the binary mapping unless asked otherwise");
    let full: Value =
        researcher.get(app.url("/api/v1/studies/1/agreement?mapping=full")).send().await.unwrap().json().await.unwrap();
    assert_eq!(full["categories"].as_array().unwrap().len(), 5);
    assert_eq!(researcher.get(app.url("/api/v1/studies/1/agreement?mapping=odd")).send().await.unwrap().status(), 422);
    let annotator = app.login("annotator1").await;
    assert_eq!(annotator.get(&url).send().await.unwrap().status(), 403);
}
