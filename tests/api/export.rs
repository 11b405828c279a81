//! Export over the real binary: the demo goes through Step 3 (a pair with an
//! overlap, `resolve = "first"`) and Step 4 over HTTP, then `hardneg export`
//! and the download are checked against what the answers decided. Parquet
//! is read back with Python's `datasets` (scripts/setup.sh installs it).
use crate::helpers::{text, untar, Spec, TestApp};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

fn step3() -> Spec {
    Spec::new("S3").seed(11).resolve("first").pairs(&[["annotator1", "annotator2"]], 10)
}

fn step4() -> Spec {
    Spec::new("S4").kind("ambiguity").source("S3").seed(5).resolve("first").pairs(&[["annotator1", "annotator2"]], 4)
}

fn hash_of(url: &str) -> String {
    url.trim_start_matches("/img/").trim_end_matches("/original").to_string()
}

/// What the answers decided: Step 3 by negative caption (the chosen image or
/// None, with its answer count), Step 4 by (real, generated) image.
#[derive(Default)]
struct Decided {
    step3: HashMap<String, (Option<String>, usize)>,
    step4: HashMap<(String, String), String>,
}

async fn curate(app: &TestApp) -> Decided {
    let researcher = app.login("researcher").await;
    let s3 = app.create_study_ok(&researcher, &step3()).await;
    let mut d = Decided::default();
    // annotator1 answers first, so "first" settles each shared item their way.
    for who in ["annotator1", "annotator2"] {
        let mut answers = Vec::new();
        app.work_through(who, s3, |task| {
            let n = answers.len();
            let pick = if who == "annotator1" { ["A", "B", "none", "C"][n % 4] } else { ["A", "none"][n % 2] };
            let image = task.options.iter().find(|o| o.id == pick).unwrap().image_url.as_deref().map(hash_of);
            answers.push((task.prompt.text.clone(), image));
            pick.to_string()
        })
        .await;
        for (caption, image) in answers {
            d.step3.entry(caption).and_modify(|e| e.1 += 1).or_insert((image, 1));
        }
    }
    let s4 = app.create_study_ok(&researcher, &step4()).await;
    // The generated side of a Step 4 task is the image Step 3 chose.
    let chosen: BTreeSet<String> = d.step3.values().filter_map(|(i, _)| i.clone()).collect();
    for who in ["annotator1", "annotator2"] {
        let mut answers = Vec::new();
        app.work_through(who, s4, |task| {
            let n = answers.len();
            let images: Vec<String> = task.options.iter().filter_map(|o| o.image_url.as_deref().map(hash_of)).collect();
            assert_eq!(images.len(), 2);
            let (real, generated) = if chosen.contains(&images[0]) {
                (images[1].clone(), images[0].clone())
            } else {
                (images[0].clone(), images[1].clone())
            };
            let id_of = |hash: &str| {
                task.options
                    .iter()
                    .find(|o| o.image_url.as_deref().map(hash_of).as_deref() == Some(hash))
                    .unwrap()
                    .id
                    .clone()
            };
            let (option, value) = match (who, n % 3, n % 2) {
                ("annotator2", _, 0) => ("both".to_string(), "both"),
                ("annotator1", 2, _) => (id_of(&generated), "generated"),
                _ => (id_of(&real), "real"),
            };
            answers.push(((real, generated), value.to_string()));
            option
        })
        .await;
        for (pair, value) in answers {
            d.step4.entry(pair).or_insert(value);
        }
    }
    d
}

fn export(app: &TestApp, out: &Path, args: &[&str]) -> String {
    let res = app.cli(&[&["export", "demo", "--out", out.to_str().unwrap()], args].concat());
    let text = text(&res.stdout) + &text(&res.stderr);
    assert!(res.status.success(), "export {args:?}: {text}");
    text
}

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| headers.iter().zip(rec.unwrap().iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect())
        .collect()
}

fn stem(path: &str) -> String {
    path.trim_start_matches("images/").split('.').next().unwrap().to_string()
}

const PY_CHECK: &str = r#"
import hashlib, json, sys
import pyarrow.parquet as pq
from datasets import load_dataset
path = sys.argv[1]
meta = json.loads(pq.read_schema(path).metadata[b"huggingface"])
ds = load_dataset("parquet", data_files={"test": path}, split="test")
first = ds[0] if len(ds) else None
raw = pq.read_table(path).to_pylist()
print(json.dumps({
    "rows": len(ds),
    "features": {k: type(v).__name__ for k, v in ds.features.items()},
    "meta_image": meta["info"]["features"]["image"]["_type"],
    "first_size": list(first["negative_image"].size) if first else None,
    "rows_raw": [{"id": r["instance_id"], "path": r["negative_image"]["path"],
                  "sha": hashlib.sha256(r["negative_image"]["bytes"]).hexdigest()} for r in raw],
}))
"#;

fn python_check(parquet: &Path) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .args(["-c", PY_CHECK])
        .arg(parquet)
        .env("HF_HOME", tmp.path())
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("python3 is needed to check parquet (scripts/setup.sh installs pyarrow, datasets, pillow)");
    assert!(
        out.status.success(),
        "python check failed (scripts/setup.sh installs pyarrow, datasets and pillow):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(out.stdout.split(|&b| b == b'\n').rfind(|l| l.starts_with(b"{")).unwrap()).unwrap()
}

#[tokio::test]
async fn exports_match_what_the_answers_decided() {
    let app = TestApp::spawn();
    let d = curate(&app).await;
    let researcher = app.login("researcher").await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name);

    // Final stage: exactly the instances Step 4 kept, with the chosen image.
    let kept: BTreeSet<(String, String)> =
        d.step4.iter().filter(|(_, v)| *v == "real").map(|(k, _)| k.clone()).collect();
    assert!(!kept.is_empty() && kept.len() < d.step4.len(), "some kept, some dropped");
    let msg = export(&app, &dir("final-csv"), &["--format", "csv"]);
    assert!(msg.contains(&format!("exported {} rows", kept.len())), "{msg}");
    let rows = csv_rows(&dir("final-csv").join("data.csv"));
    let got: BTreeSet<(String, String)> =
        rows.iter().map(|r| (stem(&r["image"]), stem(&r["negative_image"]))).collect();
    assert_eq!(got, kept);
    for r in &rows {
        let (chosen, answers) = &d.step3[&r["negative_caption"]];
        assert_eq!(chosen.as_deref(), Some(stem(&r["negative_image"]).as_str()));
        assert_eq!(r["step3_votes"].split(';').count(), *answers);
        assert!(r["step3_votes"].starts_with("annotator1:") || r["step3_votes"].starts_with("annotator2:"), "{r:?}");
        let expect_by = match (answers, r["step3_agreement"].as_str()) {
            (1, "single") => "single",
            (2, "agreed") => "unanimous",
            (2, "disagreed") => "first",
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(r["step3_resolved_by"], expect_by);
        assert!(["single", "unanimous", "first"].contains(&r["step4_resolved_by"].as_str()));
        let bytes = std::fs::read(dir("final-csv").join(&r["negative_image"])).unwrap();
        let served = researcher
            .get(app.url(&format!("/img/{}/original", stem(&r["negative_image"]))))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(bytes, served.to_vec(), "negative image bytes are the chosen candidate's");
    }
    // Every counted Step 3 answer, also on the items the rows leave out: the model's input.
    let answers = csv_rows(&dir("final-csv").join("step3-answers.csv"));
    assert_eq!(answers.len(), d.step3.values().map(|(_, n)| n).sum::<usize>());
    let exported: BTreeSet<&str> = rows.iter().map(|r| r["instance_id"].as_str()).collect();
    assert!(answers.iter().any(|a| !exported.contains(a["instance_id"].as_str())), "dropped items' answers too");
    assert!(answers.iter().all(|a| ["annotator1", "annotator2"].contains(&a["annotator"].as_str())));
    let step4 = csv_rows(&dir("final-csv").join("step4-answers.csv"));
    let items: BTreeSet<&str> = step4.iter().map(|a| a["instance_id"].as_str()).collect();
    assert_eq!(items.len(), d.step4.len(), "every Step 4 item, kept or dropped");
    let card = std::fs::read_to_string(dir("final-csv").join("README.md")).unwrap();
    for needle in [
        "Rows per type and subtype",
        "Curation funnel",
        "### Step 3: S3",
        "### Step 4: S4",
        "| annotator1 | annotator2 |",
        "caption normalisation | `none`",
        "--format csv --stage final",
    ] {
        assert!(card.contains(needle), "card lacks {needle:?}:\n{card}");
    }
    // Each study's kappa table is the agreement report's, pair by pair.
    for section in card.split("### Step ").skip(1) {
        let study = section.split("(study ").nth(1).and_then(|s| s.split(')').next()).unwrap();
        let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/agreement")).await;
        let pairs = r["pairs"].as_array().unwrap();
        assert!(!pairs.is_empty(), "study {study} has annotator pairs");
        for p in pairs {
            let kappa = p["kappa"].as_f64().map_or("undefined".to_string(), |k| format!("{k:.3}"));
            let row = format!(
                "| {} | {} | {} | {:.3} | {:.3} | {kappa}",
                p["a"].as_str().unwrap(),
                p["b"].as_str().unwrap(),
                p["n"],
                p["observed"].as_f64().unwrap(),
                p["expected"].as_f64().unwrap()
            );
            assert!(section.contains(&row), "study {study}'s card lacks {row:?}:\n{section}");
        }
    }

    // Step 3 stage: every survivor; candidates stage: all 63 instances.
    export(&app, &dir("s3"), &["--format", "csv", "--stage", "step3"]);
    let s3_rows = csv_rows(&dir("s3").join("data.csv"));
    assert_eq!(s3_rows.len(), d.step3.values().filter(|(i, _)| i.is_some()).count());
    assert!(s3_rows.iter().all(|r| !r.contains_key("step4_votes")));
    export(&app, &dir("cand"), &["--format", "jsonl", "--stage", "candidates"]);
    let lines: Vec<Value> = std::fs::read_to_string(dir("cand").join("data.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 63);
    assert!(lines.iter().all(|l| l["negative_image"].is_null() && l["candidate_3"].is_string()));

    // JSONL of the final stage: votes as arrays.
    export(&app, &dir("final-jsonl"), &["--format", "jsonl"]);
    let lines: Vec<Value> = std::fs::read_to_string(dir("final-jsonl").join("data.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), kept.len());
    assert!(lines.iter().all(|l| l["step4_votes"][0]["annotator"].is_string()));
    // Spreadsheet-safe JSON Lines: the side CSV files are made safe, the rows stay exact.
    export(&app, &dir("final-jsonl-safe"), &["--format", "jsonl", "--spreadsheet-safe"]);
    let rows = |d: &str| std::fs::read(dir(d).join("data.jsonl")).unwrap();
    assert_eq!(rows("final-jsonl-safe"), rows("final-jsonl"));
    let card = std::fs::read_to_string(dir("final-jsonl-safe").join("README.md")).unwrap();
    assert!(card.contains("--format jsonl") && card.contains("--spreadsheet-safe"), "{card}");

    // Splits: a deterministic partition per seed.
    let split = |name: &str, seed: &str| {
        export(
            &app,
            &dir(name),
            &["--format", "csv", "--stage", "candidates", "--split", "train=0.8,val=0.2", "--seed", seed],
        );
        let ids = |f: &str| {
            csv_rows(&dir(name).join(f))
                .iter()
                .map(|r| r["instance_id"].parse::<i64>().unwrap())
                .collect::<BTreeSet<_>>()
        };
        (ids("train.csv"), ids("val.csv"))
    };
    let (a, b, c) = (split("sa", "3"), split("sb", "3"), split("sc", "4"));
    assert_eq!(a, b, "same seed, same split");
    assert_ne!(a, c, "another seed, another split");
    assert!(a.0.is_disjoint(&a.1));
    assert_eq!(a.0.len() + a.1.len(), 63);
    assert!((10..=15).contains(&a.1.len()), "about 20% in val: {}", a.1.len());

    // Parquet, read back by `datasets` with the image columns as images.
    export(&app, &dir("pq"), &["--format", "parquet", "--split", "test"]);
    let py = python_check(&dir("pq").join("test.parquet"));
    assert_eq!(py["rows"], kept.len());
    assert_eq!(
        (py["features"]["image"].as_str(), py["features"]["negative_image"].as_str(), py["meta_image"].as_str()),
        (Some("Image"), Some("Image"), Some("Image"))
    );
    assert_eq!(py["features"]["caption"], "Value");
    assert!(py["first_size"][0].as_u64().unwrap() > 0);
    for r in py["rows_raw"].as_array().unwrap() {
        assert_eq!(stem(r["path"].as_str().unwrap()), r["sha"].as_str().unwrap(), "embedded bytes are the named image");
    }

    // The download: the same rows in a tar, for researchers only.
    let url = |q: &str| app.url(&format!("/api/v1/datasets/demo/export{q}"));
    let annotator = app.login("annotator1").await;
    assert_eq!(annotator.get(url("?format=csv")).send().await.unwrap().status(), 403);
    assert_eq!(TestApp::client().get(url("?format=csv")).send().await.unwrap().status(), 401);
    for (q, status, needle) in [
        ("?format=xlsx", 422, "unknown format"),
        ("?format=csv&stage=step9", 422, "unknown stage"),
        ("", 422, "`format` is required"),
    ] {
        let res = researcher.get(url(q)).send().await.unwrap();
        assert_eq!(res.status(), status, "{q}");
        assert!(res.text().await.unwrap().contains(needle), "{q}");
    }
    assert_eq!(researcher.get(app.url("/api/v1/datasets/nope/export?format=csv")).send().await.unwrap().status(), 404);
    let res = researcher.get(url("?format=csv&stage=final")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-disposition"], "attachment; filename=\"demo-final-csv.tar\"");
    let length: usize = res.headers()["content-length"].to_str().unwrap().parse().unwrap();
    let body = res.bytes().await.unwrap();
    assert_eq!(body.len(), length);
    let files = untar(&body);
    assert_eq!(
        files["demo-final/data.csv"],
        std::fs::read(dir("final-csv").join("data.csv")).unwrap(),
        "same rows as the CLI"
    );
    assert!(String::from_utf8_lossy(&files["demo-final/README.md"]).contains("downloaded"));
    let images: Vec<&String> = files.keys().filter(|k| k.starts_with("demo-final/images/")).collect();
    assert_eq!(images.len(), std::fs::read_dir(dir("final-csv").join("images")).unwrap().count());
    for k in images {
        assert_eq!(stem(k.trim_start_matches("demo-final/")), hardneg::store::images::sha256_hex(&files[k]));
    }
    let res = researcher.get(url("?format=parquet&split=test")).send().await.unwrap();
    let files = untar(&res.bytes().await.unwrap());
    assert_eq!(files["demo-final/test.parquet"], std::fs::read(dir("pq").join("test.parquet")).unwrap());
    let scratch = app.data_dir.join("images/.export-tmp");
    assert_eq!(std::fs::read_dir(&scratch).map(|d| d.count()).unwrap_or(0), 0, "scratch directories are removed");

    // A server killed mid-download leaves its scratch behind: the next start
    // removes all of it. No process ids are trusted (in a container every
    // start has the same one); the data dir's lock means no other server
    // can be writing there.
    let old = scratch.join("1-1-0");
    let same_pid = scratch.join(format!("{}-1-0", std::process::id()));
    for d in [&old, &same_pid] {
        std::fs::create_dir_all(d.join("images")).unwrap();
        std::fs::write(d.join("data.csv"), "x").unwrap();
    }
    let mut app = app;
    app.kill();
    let _restarted = TestApp::spawn_on(&app.data_dir, &[]);
    // Servers sharing PostgreSQL never sweep the shared data dir (docs/deploy.md).
    if !crate::helpers::on_postgres() {
        assert!(!old.exists() && !same_pid.exists(), "every leftover scratch directory is swept at start");
    }
}
