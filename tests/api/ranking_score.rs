//! `hardneg score` on a ranking dataset: the external scorer fixture with
//! embeddings that follow the demo's truth, and a tiny in-process CLIP,
//! each scoring every (prompt, image) of the demo prompts; the ranking
//! report then shows them beside the demo models.
use crate::helpers::{fixture, text, TestApp};
use crate::ranking::order;
use hardneg::demo::ranking_prompts::generate;
use hardneg::scoring::config::Activation;
use hardneg::scoring::testing::write_tiny_checkpoint;
use hardneg::store::images::sha256_hex;
use serde_json::{json, Value};

const STUDY: &str = "Demo: ranking generated images";

#[tokio::test]
async fn scored_models_join_the_ranking_report_beside_the_imported_ones() {
    let app = TestApp::spawn();
    let demo = generate(8, 2024);
    let researcher = app.login("researcher").await;
    let id = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).expect("the demo study").id;
    app.work_through("annotator1", id.get(), |t| order(t, &demo, false)).await;

    // The prompt at [1, 0]; an image with e details wrong at angle e·20°:
    // the fewer errors, the higher the similarity, as the people ordered.
    let (mut texts, mut images) = (serde_json::Map::new(), serde_json::Map::new());
    for p in &demo {
        texts.insert(p.prompt.clone(), json!([1.0, 0.0]));
        for (png, &e) in p.images.iter().zip(&p.errors) {
            let a = (e as f64 * 20.0).to_radians();
            images.insert(sha256_hex(png), json!([a.cos(), a.sin()]));
        }
    }
    let table = app.data_dir.join("table.json");
    std::fs::write(&table, json!({"texts": texts, "images": images}).to_string()).unwrap();
    let cmd = format!("python3 {} --table {}", fixture("stub_scorer.py").display(), table.display());
    let args = ["score", "--external", cmd.as_str(), "--name", "stub-truth", "--dataset", "demo-rankings"];
    let out = app.cli(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // 2 + 2 + 3 + 3 + 4 + 4 + 5 + 5 images.
    assert!(stdout.contains("scored 28 images of 8 prompts of dataset demo-rankings as stub-truth on cpu"), "{stdout}");
    assert!(stdout.contains("encoded 28 images and 8 texts"), "{stdout}");
    let again = text(&app.cli(&args).stdout);
    assert!(again.contains("replacing its earlier scores") && again.contains("encoded 0 images"), "{again}");

    let model = app.data_dir.join("tiny-clip");
    let prompts: Vec<&str> = demo.iter().map(|p| p.prompt.as_str()).collect();
    write_tiny_checkpoint(&model, Activation::QuickGelu, &prompts, 7).unwrap();
    let dir = model.to_str().unwrap();
    let out =
        app.cli(&["score", "--model-dir", dir, "--name", "tiny", "--dataset", "demo-rankings", "--device", "cpu"]);
    assert!(text(&out.stdout).contains("scored 28 images of 8 prompts"), "{}", text(&out.stderr));

    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    let models = r["models"].as_array().unwrap();
    let named = |name: &str| models.iter().find(|m| m["model"] == name).unwrap_or_else(|| panic!("{name}: {r}"));
    let truth = named("stub-truth");
    assert_eq!(truth["prompts"].as_i64(), Some(8), "one annotator: every prompt has the people's order");
    assert_eq!((truth["spearman"].as_f64(), truth["kendall_tau"].as_f64()), (Some(1.0), Some(1.0)), "{truth}");
    let tiny = named("tiny");
    assert!(tiny["spearman"].as_f64().unwrap().abs() <= 1.0, "{tiny}");
    named("demo-exact");
    let table = text(&app.cli(&["report", &id.to_string()]).stdout);
    assert!(table.contains("stub-truth") && table.contains("tiny"), "{table}");
}
