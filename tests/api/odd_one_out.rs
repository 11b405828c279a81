//! SugarCrepe++'s odd-one-out over the real binary: the demo triplets
//! answered in both settings (ITT, TOT), the report per subset, the export's
//! answers and statistics, and `import triplets` refusing a bad file whole.
use crate::helpers::{text, Spec, TestApp};
use crate::placeholders;
use hardneg::api_types::TaskView;
use hardneg::demo::triplets::{generate, DemoTriplet};
use serde_json::Value;
use std::collections::HashMap;

const ITT: &str = "Demo: SugarCrepe++ odd one out (image)";
const TOT: &str = "Demo: SugarCrepe++ odd one out (text only)";

async fn study_id(app: &TestApp, name: &str) -> i64 {
    let client = app.login("researcher").await;
    app.studies(&client)
        .await
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no study {name}"))
        .id
        .get()
}

/// The demo triplet a task shows, found by its P1.
fn triplet_of<'a>(task: &TaskView, demo: &'a HashMap<String, DemoTriplet>) -> &'a DemoTriplet {
    task.options.iter().find_map(|o| demo.get(o.text.as_deref()?)).expect("a demo triplet's P1 among the options")
}

pub(crate) fn option_with<'a>(task: &'a TaskView, text: &str) -> &'a str {
    &task.options.iter().find(|o| o.text.as_deref() == Some(text)).expect("the caption is an option").id
}

/// `hardneg export DATASET --stage candidates --format csv`; the export directory.
pub(crate) fn export_candidates(app: &TestApp, dataset: &str) -> std::path::PathBuf {
    let out = app.data_dir.join(format!("export-{dataset}"));
    let args = ["export", dataset, "--stage", "candidates", "--format", "csv", "--out", out.to_str().unwrap()];
    let res = app.cli(&args);
    assert!(res.status.success(), "{}", text(&res.stderr));
    out
}

#[tokio::test]
async fn demo_triplets_answered_in_both_settings_reported_per_subset_and_exported() {
    let app = TestApp::spawn();
    let demo: HashMap<String, DemoTriplet> = generate(10, 2024).into_iter().map(|t| (t.p1.clone(), t)).collect();
    let (itt, tot) = (study_id(&app, ITT).await, study_id(&app, TOT).await);
    // annotator1 finds the negative except on swap/att, where they pick P2; annotator2 always finds it.
    for who in ["annotator1", "annotator2"] {
        let tasks = app
            .work_through(who, itt, |task| {
                assert!(task.prompt.image_url.is_some(), "ITT shows the image");
                assert_eq!(task.options.len(), 3);
                assert!(task.options.iter().all(|o| o.image_url.is_none() && o.text.is_some()));
                let t = triplet_of(task, &demo);
                let mut texts: Vec<&str> = task.options.iter().filter_map(|o| o.text.as_deref()).collect();
                texts.sort();
                let mut want = [t.p1.as_str(), t.p2.as_str(), t.negative.as_str()];
                want.sort();
                assert_eq!(texts, want);
                let wrong = who == "annotator1" && t.category.to_string() == "swap/att";
                option_with(task, if wrong { &t.p2 } else { &t.negative }).to_string()
            })
            .await;
        assert_eq!(tasks.len(), 10);
    }
    app.work_through("annotator1", tot, |task| {
        assert!(task.prompt.image_url.is_none(), "TOT shows no image");
        assert!(task.instructions.contains("meaning is different"), "{}", task.instructions);
        option_with(task, &triplet_of(task, &demo).negative).to_string()
    })
    .await;

    let researcher = app.login("researcher").await;
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{itt}/report")).await;
    assert_eq!(
        (r["statistic"].as_str(), r["setting"].as_str(), r["answers"].as_i64()),
        (Some("accuracy"), Some("ITT"), Some(20))
    );
    let rows = r["rows"].as_array().unwrap();
    let subsets: Vec<String> = rows.iter().map(|row| row["subset"].to_string()).collect();
    assert_eq!(rows.len(), 6, "five subsets and overall: {subsets:?}");
    let swap_att =
        rows.iter().find(|row| row["subset"] == serde_json::json!({"neg_type": "swap", "subtype": "att"})).unwrap();
    assert_eq!((swap_att["answers"].as_i64(), swap_att["correct"].as_i64()), (Some(4), Some(2)));
    assert_eq!(swap_att["accuracy"].as_f64(), Some(0.5), "annotator1 0 of 2, annotator2 2 of 2");
    let all = rows.last().unwrap();
    assert!(all["subset"].is_null());
    assert!((all["accuracy"].as_f64().unwrap() - 0.9).abs() < 1e-9, "(8/10 + 10/10) / 2: {all}");
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{tot}/report")).await;
    assert_eq!(
        (r["setting"].as_str(), r["rows"].as_array().unwrap().last().unwrap()["accuracy"].as_f64()),
        (Some("TOT"), Some(1.0))
    );
    // A curation study reports no statistics: a clear 422.
    let step3 = study_id(&app, "Demo: BiVLC Step 3 (four images)").await;
    let res = researcher.get(app.url(&format!("/api/v1/studies/{step3}/report"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("reports no statistics"));
    let cli = app.cli(&["report", &itt.to_string()]);
    assert!(text(&cli.stdout).contains("swap/att") && text(&cli.stdout).contains("50.0%"), "{}", text(&cli.stdout));

    // The export carries each reporting study's answers and statistics.
    let out = export_candidates(&app, "demo-triplets");
    let mut reader = csv::Reader::from_path(out.join(format!("study-{itt}-answers.csv"))).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 20);
    for row in &rows {
        let t = &demo[&row[col("caption")]];
        assert_eq!((&row[col("paraphrase")], &row[col("negative_caption")]), (t.p2.as_str(), t.negative.as_str()));
        let wrong = &row[col("annotator")] == "annotator1" && t.category.to_string() == "swap/att";
        assert_eq!(&row[col("value")], if wrong { "p2" } else { "negative" });
    }
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join(format!("study-{tot}-report.json"))).unwrap()).unwrap();
    assert_eq!(report["setting"], "TOT");
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("## Protocol studies") && card.contains(ITT), "{card}");
    // An odd-one-out study settles no item: its card says so, not a resolve rule (audit AW).
    for kind in ["odd_one_out", "odd_one_out_text"] {
        let line = card.lines().find(|l| l.contains(&format!("kind `{kind}`"))).unwrap();
        assert!(line.contains("every answer counted (no item is settled)"), "{line}");
    }
    let triplets = card.lines().find(|l| l.contains("kind `triplet_check`")).unwrap();
    assert!(triplets.contains("disagreements resolved by `adjudication`"), "{triplets}");
    // A dataset with protocol studies only: the curation section does not say no study ran,
    // and each protocol study names its settings.
    assert!(card.contains("No curation study (Step 3 or Step 4) has run") && !card.contains("No study has run"));
    let spec_hash: String = sqlx::query_scalar("SELECT spec_hash FROM studies WHERE id = $1")
        .bind(itt)
        .fetch_one(&app.db().await)
        .await
        .unwrap();
    let settings = format!("`study-{itt}-report.json`: kind `odd_one_out`, seed ");
    assert!(card.contains(&settings) && card.contains(&format!("spec SHA-256 `{spec_hash}`")), "{card}");
}

/// Runs `import` on `bad` (images from `images`), which must be refused
/// whole for the two `(line, field)` problems, the second about `9.png`,
/// leaving no dataset `bad` for a study of `kind`; a researcher's client.
pub(crate) async fn refused_whole(
    app: &TestApp,
    import: &[&str],
    bad: &std::path::Path,
    images: &std::path::Path,
    problems: [(u32, &str); 2],
    kind: &str,
) -> reqwest::Client {
    let mut args = import.to_vec();
    args.extend([bad.to_str().unwrap(), "--images", images.to_str().unwrap()]);
    let out = app.cli(&args);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("2 problem(s), nothing imported"), "{err}");
    for (line, field) in problems {
        assert!(err.contains(&format!("{}:{line}: field `{field}`", bad.display())), "{err}");
    }
    assert!(err.contains("9.png"), "{err}");
    let researcher = app.login("researcher").await;
    let res = app.create_study(&researcher, &Spec::new("Nope").kind(kind).dataset("bad")).await;
    assert_eq!(res.status(), 422, "no dataset was created");
    researcher
}

#[tokio::test]
async fn triplet_import_refuses_a_bad_file_whole_and_takes_a_good_one() {
    let app = TestApp::spawn();
    let dir = app.data_dir.join("in");
    let images = placeholders::png_dir(&dir, 3);
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "image,p1,p2,negative,type,subtype\n\
         0.png,A cat on a mat.,A mat under a cat.,A mat on a cat.,swap,obj\n\
         1.png,A red ball.,A ball that is red.,A blue ball.,shuffle,att\n\
         9.png,A dog.,A canine.,A cat.,replace,obj\n",
    )
    .unwrap();
    let researcher =
        refused_whole(&app, &["import", "triplets"], &bad, &images, [(3, "type"), (4, "image")], "odd_one_out").await;

    let good = dir.join("pp.jsonl");
    let line = |i: u32, p1: &str, p2: &str, n: &str, t: &str, s: &str| {
        serde_json::json!({"image": format!("{i}.png"), "p1": p1, "p2": p2, "negative": n, "type": t, "subtype": s})
            .to_string()
    };
    let rows = [
        line(0, "A cat on a mat.", "A mat under a cat.", "A mat on a cat.", "swap", "obj"),
        line(1, "A red ball.", "A ball that is red.", "A blue ball.", "replace", "att"),
        line(2, "A dog near a tree.", "A tree near a dog.", "A dog far from a tree.", "replace", "rel"),
    ];
    std::fs::write(&good, rows.join("\n")).unwrap();
    let out = app.cli(&["import", "triplets", good.to_str().unwrap(), "--images", images.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 3 triplets into dataset \"pp\""));
    let id = app.create_study_ok(&researcher, &Spec::new("PP").kind("odd_one_out_text").dataset("pp")).await;
    let tasks = app.work_through("annotator1", id, |t| t.options[0].id.clone()).await;
    let mut seen: Vec<&str> = tasks.iter().flat_map(|t| t.options.iter().filter_map(|o| o.text.as_deref())).collect();
    seen.sort();
    assert!(seen.contains(&"A ball that is red.") && seen.contains(&"A mat on a cat.") && seen.len() == 9);
}
