//! The blind text-only audit over the real binary: the baselines and an
//! external text scorer (a stdlib stub with known scores) on the demo
//! triplets, the stored result over HTTP and in the export's card, and the
//! refusals (a stage not reached, a failing scorer, a baseline's name).
use crate::helpers::{fixture, text, TestApp};
use crate::odd_one_out::export_candidates;
use hardneg::demo::triplets::generate;
use serde_json::Value;

fn overall(audit: &Value) -> &Value {
    let row = &audit["rows"][0];
    assert_eq!(row["subset"], "all");
    row
}

fn stub(args: &str) -> String {
    format!("python3 {} {args}", fixture("stub_text_scorer.py").display())
}

#[tokio::test]
async fn audits_the_demo_triplets_with_baselines_and_an_external_scorer() {
    let app = TestApp::spawn();
    let demo = generate(10, 2024);

    let res = app.cli(&["audit", "demo-triplets", "--stage", "candidates", "--json"]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    let baselines: Vec<Value> = serde_json::from_slice(&res.stdout).unwrap();
    let names: Vec<&str> = baselines.iter().map(|a| a["scorer"].as_str().unwrap()).collect();
    assert_eq!(names, ["length", "word-frequency"]);
    // The length baseline, worked from the generator's captions.
    let longer = demo.iter().filter(|t| t.p1.len() > t.negative.len()).count() as f64;
    let same = demo.iter().filter(|t| t.p1.len() == t.negative.len()).count() as f64;
    let length = overall(&baselines[0]);
    assert_eq!(length["instances"], 10);
    assert_eq!(length["rate"].as_f64().unwrap(), (longer + same / 2.0) / 10.0, "{length}");
    let (lo, hi) = (length["low"].as_f64().unwrap(), length["high"].as_f64().unwrap());
    assert!(lo < length["rate"].as_f64().unwrap() && hi > lo && hi <= 1.0, "{length}");

    // The stub scores the positives of swap triplets 1, everything else 0:
    // swaps are told apart, the rest tie (half a pick each).
    let table: serde_json::Map<String, Value> = demo
        .iter()
        .filter(|t| t.category.neg_type.as_str() == "swap")
        .map(|t| (t.p1.clone(), Value::from(1.0)))
        .collect();
    let swaps = table.len();
    assert!(swaps > 0 && swaps < 10);
    let table_file = app.data_dir.join("scores.json");
    std::fs::write(&table_file, serde_json::to_vec(&table).unwrap()).unwrap();
    let cmd = stub(&format!("--table {}", table_file.display()));
    let res = app.cli(&["audit", "demo-triplets", "--stage", "candidates", "--external", &cmd, "--name", "stub"]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    let printed = text(&res.stdout);
    assert!(printed.contains("10 instances") && printed.contains("stub"), "{printed}");

    let researcher = app.login("researcher").await;
    let audits: Vec<Value> = app.get(&researcher, "/api/v1/datasets/demo-triplets/audit").await;
    assert_eq!(audits.len(), 3, "two baselines and the stored scorer: {audits:?}");
    let stored = &audits[2];
    assert_eq!((stored["scorer"].as_str(), stored["stage"].as_str()), (Some("stub"), Some("candidates")));
    assert!(stored["source"].as_str().unwrap().contains("stub-text"), "the hello's model: {stored}");
    assert!(stored["created_at"].as_i64().is_some());
    let all = overall(stored);
    assert_eq!((all["positive"].as_u64(), all["ties"].as_u64()), (Some(swaps as u64), Some(10 - swaps as u64)));
    assert_eq!(all["rate"].as_f64().unwrap(), (swaps as f64 + (10 - swaps) as f64 / 2.0) / 10.0);
    let swap = stored["rows"].as_array().unwrap().iter().find(|r| r["subset"] == "swap").unwrap();
    assert_eq!(swap["rate"].as_f64(), Some(1.0));

    // The export's card carries the audit of its stage.
    let card = std::fs::read_to_string(export_candidates(&app, "demo-triplets").join("README.md")).unwrap();
    let section = &card[card.find("## Blind text-only audit").expect("an audit section")..];
    assert!(section.contains("`stub`: external:") && section.contains("`word-frequency`: built-in"), "{section}");
    assert!(section.contains("stub             all                   10"), "{section}");
}

#[tokio::test]
async fn audit_refuses_an_unreached_stage_a_failing_scorer_and_a_baseline_name() {
    let app = TestApp::spawn();
    let res = app.cli(&["audit", "demo-triplets", "--stage", "final"]);
    assert!(!res.status.success());
    assert!(text(&res.stderr).contains("has no Step 3 study; stage final needs one"), "{}", text(&res.stderr));

    let res =
        app.cli(&["audit", "demo-triplets", "--stage", "candidates", "--external", &stub("--fail"), "--name", "bad"]);
    assert!(!res.status.success());
    assert!(text(&res.stderr).contains("stub told to fail"), "{}", text(&res.stderr));
    let researcher = app.login("researcher").await;
    let audits: Vec<Value> = app.get(&researcher, "/api/v1/datasets/demo-triplets/audit?stage=candidates").await;
    assert_eq!(audits.len(), 2, "a failed run stores nothing");

    let res =
        app.cli(&["audit", "demo-triplets", "--stage", "candidates", "--external", &stub(""), "--name", "length"]);
    assert!(text(&res.stderr).contains("names a built-in baseline"), "{}", text(&res.stderr));
    let res = app.cli(&["audit", "demo-triplets", "--stage", "later"]);
    assert!(text(&res.stderr).contains("unknown stage"), "{}", text(&res.stderr));
    let res = researcher.get(app.url("/api/v1/datasets/demo-triplets/audit?stage=later")).send().await.unwrap();
    assert_eq!(res.status(), 422);
}

#[tokio::test]
async fn swaps_tie_under_word_frequency_and_the_cli_audits_the_apis_stage_by_default() {
    let app = TestApp::spawn();
    // No --stage: the furthest stage reached (demo-triplets: candidates), as the API picks it.
    let res = app.cli(&["audit", "demo-triplets", "--json"]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    let cli: Vec<Value> = serde_json::from_slice(&res.stdout).unwrap();
    let researcher = app.login("researcher").await;
    let api: Vec<Value> = app.get(&researcher, "/api/v1/datasets/demo-triplets/audit").await;
    assert_eq!(cli, api, "the CLI and the API audit the same stage");
    assert_eq!(cli[0]["stage"], "candidates");
    let printed = text(&app.cli(&["audit", "demo-triplets"]).stdout);
    assert!(printed.contains("stage candidates (10 instances)"), "{printed}");
    // A swap is the same words in another order: the unigram baseline ties every one.
    let frequency = cli.iter().find(|a| a["scorer"] == "word-frequency").unwrap();
    let swap = frequency["rows"].as_array().unwrap().iter().find(|r| r["subset"] == "swap").unwrap();
    assert!(swap["instances"].as_u64().unwrap() > 0);
    assert_eq!((swap["ties"].clone(), swap["rate"].as_f64()), (swap["instances"].clone(), Some(0.5)), "{swap}");
}
