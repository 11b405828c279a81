//! `hardneg score` end to end on small data: a tiny CLIP written by the test
//! and loaded like a real checkpoint, and the external scorer protocol with
//! a stdlib-only Python stub whose embeddings the test controls.
use crate::helpers::{cli, command_on, fixture};
use hardneg::api_types::CompareReport;
use hardneg::cli::demo_seed::{insert_image, seed_demo_dataset};
use hardneg::domain::category::Category;
use hardneg::scoring::clip::{ClipEncoder, DeviceChoice};
use hardneg::scoring::config::Activation;
use hardneg::scoring::encoder::{Encoder, ImageRef};
use hardneg::scoring::rank::dot;
use hardneg::scoring::testing::write_tiny_checkpoint;
use hardneg::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use hardneg::store::images::ImageStore;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output, Stdio};

struct Data {
    dir: tempfile::TempDir,
}

impl Data {
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn store(&self) -> ImageStore {
        ImageStore::new(self.path().join("images"))
    }
    async fn pool(&self) -> sqlx::AnyPool {
        crate::helpers::db_at(self.path()).await
    }
}

/// A data dir holding the demo dataset ("demo") with `n` instances.
async fn demo(n: usize) -> Data {
    let data = Data { dir: tempfile::tempdir().unwrap() };
    let pool = data.pool().await;
    seed_demo_dataset(&pool, &data.store(), n).await.unwrap();
    pool.close().await;
    data
}

fn hardneg(data: &Data, args: &[&str]) -> Output {
    cli(data.path(), args)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn compare(data: &Data, dataset: &str) -> CompareReport {
    serde_json::from_str(&ok(&hardneg(data, &["compare", "--dataset", dataset, "--json"]))).unwrap()
}

fn stub(extra: &str) -> String {
    let script = fixture("stub_scorer.py");
    format!("python3 {} {extra}", script.display())
}

async fn captions(data: &Data) -> Vec<String> {
    let pool = data.pool().await;
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT caption, negative_caption FROM instances").fetch_all(&pool).await.unwrap();
    rows.into_iter().flat_map(|(a, b)| [a, b]).collect()
}

/// "encoded X images and Y texts" from the command's output.
fn encoded(stdout: &str) -> (usize, usize) {
    let line = stdout.lines().find(|l| l.starts_with("encoded ")).expect("an encoded line");
    let n: Vec<usize> = line.split_whitespace().filter_map(|w| w.trim_start_matches('(').parse().ok()).collect();
    (n[0], n[1])
}

#[tokio::test]
async fn tiny_clip_scores_the_demo_and_a_rerun_encodes_nothing() {
    let data = demo(7).await;
    let texts = captions(&data).await;
    let model = data.path().join("tiny-clip");
    write_tiny_checkpoint(&model, Activation::QuickGelu, &texts.iter().map(String::as_str).collect::<Vec<_>>(), 7)
        .unwrap();
    let args = [
        "score",
        "--model-dir",
        model.to_str().unwrap(),
        "--name",
        "tiny",
        "--dataset",
        "demo",
        "--device",
        "cpu",
        "--batch",
        "4",
    ];
    let out = hardneg(&data, &args);
    let first = ok(&out);
    assert!(first.contains("scored 7 instances of dataset demo as tiny on cpu"), "{first}");
    let (images, texts_encoded) = encoded(&first);
    assert_eq!(images, 14, "a positive and a negative image per instance");
    assert!(texts_encoded > 7 && texts_encoded <= 14, "{first}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("images: 14/14 done"));
    let report = compare(&data, "demo");
    let tiny = &report.models[0];
    assert_eq!((tiny.name.as_str(), tiny.n, tiny.device.as_deref()), ("tiny", 7, Some("cpu")));

    let again = ok(&hardneg(&data, &args));
    assert_eq!(encoded(&again), (0, 0), "{again}");
    assert!(again.contains(&format!("({images} images and {texts_encoded} texts from the cache)")), "{again}");
    assert!(again.contains("replacing the earlier run"));
    let rerun = compare(&data, "demo");
    assert_eq!(rerun.models.len(), 1);
    assert_eq!(rerun.models[0].report.overall, tiny.report.overall, "cached embeddings give the same outcomes");

    // Same weights, edited config (another activation): nothing stale is reused.
    let config = std::fs::read_to_string(model.join("config.json")).unwrap().replace("quick_gelu", "gelu");
    std::fs::write(model.join("config.json"), config).unwrap();
    assert_eq!(encoded(&ok(&hardneg(&data, &args))), (images, texts_encoded));
    if !cfg!(feature = "cuda") {
        let out = hardneg(
            &data,
            &["score", "--model-dir", "/nonexistent", "--name", "x", "--dataset", "demo", "--device", "cuda"],
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("built without the `cuda` feature"));
    }
}

#[tokio::test]
async fn gelu_and_quick_gelu_checkpoints_load_through_the_real_path() {
    let data = demo(7).await;
    let texts = captions(&data).await;
    let words: Vec<&str> = texts.iter().map(String::as_str).collect();
    let pool = data.pool().await;
    let hashes: Vec<String> =
        sqlx::query_scalar("SELECT positive_image FROM instances ORDER BY id LIMIT 3").fetch_all(&pool).await.unwrap();
    let images: Vec<ImageRef> =
        hashes.iter().map(|h| ImageRef { hash: h.clone(), path: data.store().original_path(h) }).collect();
    let mut embeddings = Vec::new();
    for act in [Activation::QuickGelu, Activation::Gelu] {
        let dir = data.path().join(format!("{act:?}"));
        write_tiny_checkpoint(&dir, act, &words, 11).unwrap();
        let mut enc = ClipEncoder::load(&dir, DeviceChoice::Auto).unwrap();
        assert_eq!(enc.device(), "cpu");
        assert_eq!(enc.config().text_config.hidden_act, act);
        let img = enc.encode_images(&images).unwrap();
        // A caption's embedding does not depend on the padding of its batch
        // (causal mask, pooling at end-of-text), nor an image's on its batch.
        let long = format!("{} {} {}", texts[0], texts[1], texts[2]);
        let batch = enc.encode_texts(&[texts[0].clone(), long]).unwrap();
        let alone = enc.encode_texts(&[texts[0].clone()]).unwrap();
        assert!(dot(&batch[0], &alone[0]) > 0.99999, "padding changed the embedding");
        let single = enc.encode_images(&images[1..2]).unwrap();
        assert!(dot(&single[0], &img[1]) > 0.99999);
        for v in img.iter().chain(&batch) {
            assert_eq!(v.len(), 16);
            assert!((dot(v, v) - 1.0).abs() < 1e-5, "unit length");
        }
        assert!(dot(&img[0], &img[1]) < 0.99999, "different images, different embeddings");
        embeddings.push((img, alone));
    }
    // Same weights, other activation: other embeddings (by far more than float noise, ~1e-7).
    let max_diff = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
    let (image_diff, text_diff) =
        (max_diff(&embeddings[0].0[0], &embeddings[1].0[0]), max_diff(&embeddings[0].1[0], &embeddings[1].1[0]));
    eprintln!("QuickGELU vs GELU: max |difference| {image_diff} (image), {text_diff} (text)");
    assert!(image_diff > 1e-4 && text_diff > 1e-4);
}

fn png(rgb: [u8; 3]) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(3, 2, image::Rgb(rgb));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// Dataset "ctl": instances A, B, C with candidates, D without any. Returns
/// the stub's embedding table: A all right, B right but for Ineg2T, C every
/// choice wrong. In A the matching candidate is in slot 1 and slot 0 would
/// make A fail: the negative-image rule is exercised too.
async fn controlled_dataset(data: &Data) -> Value {
    let (x, y, tilted) = (json!([1.0, 0.0]), json!([0.0, 1.0]), json!([0.8, 0.6]));
    let pool = data.pool().await;
    let store = data.store();
    let mut tx = pool.begin().await.unwrap();
    let dataset = insert_dataset(&mut tx, "ctl", "none").await.unwrap();
    let (mut texts, mut images) = (serde_json::Map::new(), serde_json::Map::new());
    let mut color = 0u8;
    let mut image = |v: &Value, images: &mut serde_json::Map<String, Value>| {
        color += 1;
        let s = store.put(&png([color, 0, 0])).unwrap();
        images.insert(s.hash.clone(), v.clone());
        s
    };
    // (key, I0, candidates as (embedding, known_match), C0, C1)
    let plan = [
        ("A", &x, vec![(&x, Some(0)), (&y, Some(1))]),
        ("B", &x, vec![(&tilted, None), (&y, None)]),
        ("C", &y, vec![(&x, Some(0))]),
        ("D", &x, vec![]),
    ];
    for (key, i0, cands) in plan {
        let positive = image(i0, &mut images);
        insert_image(&mut tx, &positive).await.unwrap();
        let (c0, c1) = (format!("caption {key}"), format!("negative {key}"));
        texts.insert(c0.clone(), x.clone());
        texts.insert(c1.clone(), y.clone());
        let new = NewInstance {
            key,
            caption: &c0,
            negative_caption: &c1,
            caption_orig: &c0,
            negative_caption_orig: &c1,
            category: Category::ALL[0],
            positive_image: Some(&positive.hash),
        };
        let id = insert_instance(&mut tx, dataset, &new).await.unwrap();
        for (slot, (v, known)) in cands.into_iter().enumerate() {
            let img = image(v, &mut images);
            insert_image(&mut tx, &img).await.unwrap();
            sqlx::query("INSERT INTO candidates (instance_id, slot, image, known_match) VALUES ($1, $2, $3, $4)")
                .bind(id)
                .bind(slot as i64)
                .bind(&img.hash)
                .bind(known)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
    }
    tx.commit().await.unwrap();
    json!({"texts": texts, "images": images})
}

#[tokio::test]
async fn controlled_embeddings_give_known_outcomes_and_reruns_use_the_cache() {
    let data = Data { dir: tempfile::tempdir().unwrap() };
    let table = controlled_dataset(&data).await;
    let (table_path, log) = (data.path().join("table.json"), data.path().join("stub.log"));
    std::fs::write(&table_path, table.to_string()).unwrap();
    let cmd = stub(&format!("--table {} --log {}", table_path.display(), log.display()));
    let args = ["score", "--external", cmd.as_str(), "--name", "ctl-model", "--dataset", "ctl", "--batch", "2"];
    let out = ok(&hardneg(&data, &args));
    assert!(out.contains("scored 3 instances of dataset ctl as ctl-model on cpu"), "{out}");
    assert!(out.contains("skipped 1 instances without a positive or a negative image"));
    assert_eq!(encoded(&out), (6, 6));
    let report = compare(&data, "ctl");
    let m = &report.models[0];
    assert_eq!((m.name.as_str(), m.n, m.device.as_deref()), ("ctl-model", 3, Some("cpu")));
    let o = &m.report.overall;
    let got = vec![o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i, o.i2t, o.t2i, o.group];
    assert_eq!(got, vec![66.67, 33.33, 66.67, 66.67, 33.33, 66.67, 33.33]);
    assert_eq!(m.left_out, 0);

    // The stub's own log: 6 images and 6 texts in batches of 2, then nothing new.
    let before = std::fs::read_to_string(&log).unwrap();
    assert_eq!(before.lines().count(), 6);
    assert_eq!(encoded(&ok(&hardneg(&data, &args))), (0, 0));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before, "the re-run sent the scorer nothing");

    // Another fingerprint is another model: everything is encoded again.
    let other = stub(&format!("--table {} --fingerprint v2", table_path.display()));
    assert_eq!(
        encoded(&ok(&hardneg(&data, &["score", "--external", &other, "--name", "ctl-model", "--dataset", "ctl"]))),
        (6, 6)
    );
    // Without a fingerprint nothing is cached.
    let unnamed = stub(&format!("--table {} --no-fingerprint", table_path.display()));
    for _ in 0..2 {
        assert_eq!(
            encoded(&ok(&hardneg(&data, &["score", "--external", &unnamed, "--name", "anon", "--dataset", "ctl"]))),
            (6, 6)
        );
    }

    // A's negative changes after scoring (as when Step 3 picks another
    // candidate): its outcome, computed on the old one, is left out and the
    // comparison says so, until the model is scored again.
    let pool = data.pool().await;
    sqlx::query(
        "UPDATE candidates SET known_match = CASE WHEN slot = 0 THEN 1 ELSE NULL END
         WHERE instance_id = (SELECT id FROM instances WHERE key = 'A')",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let m = compare(&data, "ctl").models.into_iter().find(|m| m.name == "ctl-model").unwrap();
    assert_eq!((m.n, m.left_out), (2, 1), "{m:?}");
    let text = ok(&hardneg(&data, &["compare", "--dataset", "ctl"]));
    assert!(text.contains("ctl-model: 1 outcome(s) left out"), "{text}");
    ok(&hardneg(&data, &args));
    let m = compare(&data, "ctl").models.into_iter().find(|m| m.name == "ctl-model").unwrap();
    assert_eq!((m.n, m.left_out), (3, 0), "scored again on the new negative: {m:?}");
    let o = &m.report.overall;
    assert_eq!((o.i2t, o.group), (0.0, 0.0), "A fails on slot 0, B on Ineg2T, C on everything");
}

#[tokio::test]
async fn protocol_mismatch_and_scorer_errors_write_nothing() {
    let data = demo(7).await;
    let out = hardneg(&data, &["score", "--external", &stub("--protocol 2"), "--name", "x", "--dataset", "demo"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("protocol version 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = hardneg(&data, &["score", "--external", "echo not json", "--name", "x", "--dataset", "demo"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a hello line"));
    let out = hardneg(&data, &["score", "--external", &stub(""), "--name", "x", "--dataset", "nope"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no dataset named \"nope\""));
    // A missing image file: the scorer reports it, the run is refused whole.
    let pool = data.pool().await;
    let hash: String =
        sqlx::query_scalar("SELECT positive_image FROM instances LIMIT 1").fetch_one(&pool).await.unwrap();
    std::fs::remove_file(data.store().original_path(&hash)).unwrap();
    let out = hardneg(&data, &["score", "--external", &stub(""), "--name", "x", "--dataset", "demo"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(compare(&data, "demo").models.len(), 0);
}

#[tokio::test]
async fn ctrl_c_cancels_without_a_partial_run_and_keeps_the_cache() {
    let data = demo(7).await;
    let slow = stub("--delay 0.3");
    let child = crate::helpers::command_on(data.path())
        .args(["score", "--external", &slow, "--name", "slow", "--dataset", "demo", "--batch", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Some batches complete (0.3 s each), then SIGINT, as Ctrl-C sends.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("cancelled: no run written"), "{err}");
    assert_eq!(compare(&data, "demo").models.len(), 0);
    let pool = data.pool().await;
    let cached: i64 = sqlx::query_scalar("SELECT count(*) FROM embeddings").fetch_one(&pool).await.unwrap();
    assert!(cached > 0, "embeddings computed before the cancel stay");
    let (images, texts) =
        encoded(&ok(&hardneg(&data, &["score", "--external", &stub(""), "--name", "slow", "--dataset", "demo"])));
    assert_eq!(
        (images + texts) as i64 + cached,
        14 + captions(&data).await.iter().collect::<std::collections::HashSet<_>>().len() as i64
    );
}

/// A scorer is often someone else's model code: it gets the environment,
/// but not the Prolific token, the webhook secret, the files holding them,
/// or the database URL (which may hold a password).
#[tokio::test]
async fn a_scorer_gets_none_of_hardnegs_secrets() {
    let data = Data { dir: tempfile::tempdir().unwrap() };
    let table = controlled_dataset(&data).await;
    let (table_path, seen) = (data.path().join("table.json"), data.path().join("scorer.env"));
    std::fs::write(&table_path, table.to_string()).unwrap();
    let cmd = format!("env > {}; exec {}", seen.display(), stub(&format!("--table {}", table_path.display())));
    let out = command_on(data.path())
        .args(["score", "--external", cmd.as_str(), "--name", "m", "--dataset", "ctl"])
        .env("HARDNEG_PROLIFIC_TOKEN", "tok-SECRET-1")
        .env("HARDNEG_PROLIFIC_TOKEN_FILE", "/nowhere/token")
        .env("HARDNEG_PROLIFIC_WEBHOOK_SECRET", "whsec-SECRET-2")
        .env("HARDNEG_PROLIFIC_WEBHOOK_SECRET_FILE", "/nowhere/secret")
        .env("HARDNEG_SCORER_TEST_MARK", "passed-on")
        .output()
        .unwrap();
    assert!(ok(&out).contains("scored 3 instances"));
    let env = std::fs::read_to_string(&seen).unwrap();
    assert!(env.contains("HARDNEG_SCORER_TEST_MARK=passed-on"), "the rest of the environment is passed on");
    for secret in ["SECRET", "HARDNEG_PROLIFIC_", "HARDNEG_DATABASE", "/nowhere/"] {
        assert!(!env.contains(secret), "the scorer saw {secret}: {env}");
    }
}
