//! `hardneg score --dtype`: bf16 (emulated on the CPU, the graph CUDA runs)
//! is recorded with the run, keys the embedding cache apart from f32, and
//! its outcomes agree with f32's except on near-ties.
use crate::helpers::{cli, db_at};
use hardneg::api_types::CompareReport;
use hardneg::cli::demo_seed::seed_demo_dataset;
use hardneg::scoring::cache::from_blob;
use hardneg::scoring::config::Activation;
use hardneg::scoring::rank::similarities;
use hardneg::scoring::testing::write_tiny_checkpoint;
use hardneg::store::images::{sha256_hex, ImageStore};
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// "encoded X images and Y texts" from the command's output.
fn encoded(stdout: &str) -> (usize, usize) {
    let line = stdout.lines().find(|l| l.starts_with("encoded ")).expect("an encoded line");
    let n: Vec<usize> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    (n[0], n[1])
}

/// A run's cached vectors of one precision (`;dtype=bf16` in the key, or no
/// `;dtype=` for f32), by content hash.
async fn cached(pool: &sqlx::AnyPool, run: &str, dtype: Option<&str>) -> HashMap<String, Vec<f32>> {
    let rows: Vec<(String, String, Vec<u8>)> =
        sqlx::query_as("SELECT content_hash, preprocess, vector FROM embeddings WHERE model = $1")
            .bind(run)
            .fetch_all(pool)
            .await
            .unwrap();
    rows.into_iter()
        .filter(|(_, p, _)| match dtype {
            Some(d) => p.ends_with(&format!(";dtype={d}")),
            None => !p.contains(";dtype="),
        })
        .map(|(h, _, v)| (h, from_blob(&v).unwrap()))
        .collect()
}

/// (C0, C1, I0, I1, ipos2t, ineg2t, tpos2i, tneg2i) of a run's instances.
type OutcomeRow = (String, String, String, String, i64, i64, i64, i64);

/// Per instance: the four similarities and the stored outcome flags.
async fn scored(pool: &sqlx::AnyPool, run: &str, vecs: &HashMap<String, Vec<f32>>) -> Vec<([f64; 4], [bool; 4])> {
    let rows: Vec<OutcomeRow> = sqlx::query_as(
        "SELECT i.caption, i.negative_caption, i.positive_image, o.negative_image, o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i
         FROM model_outcomes o JOIN model_runs r ON r.id = o.run_id JOIN instances i ON i.id = o.instance_id
         WHERE r.name = $1 ORDER BY i.id",
    )
    .bind(run)
    .fetch_all(pool)
    .await
    .unwrap();
    let mut out = Vec::new();
    for (c0, c1, i0, i1, a, b, c, d) in rows {
        let v = |h: &str| &vecs[h];
        let s = similarities(v(&sha256_hex(c0.as_bytes())), v(&sha256_hex(c1.as_bytes())), v(&i0), v(&i1));
        out.push(([s.c0_i0, s.c1_i0, s.c0_i1, s.c1_i1], [a, b, c, d].map(|x| x != 0)));
    }
    out
}

/// Each flag's two compared similarities (`Outcome::from_scores`).
fn compared(s: &[f64; 4]) -> [(f64, f64); 4] {
    [(s[0], s[1]), (s[3], s[2]), (s[0], s[2]), (s[3], s[1])]
}

#[tokio::test]
async fn bf16_is_recorded_keys_the_cache_and_agrees_with_f32_but_on_near_ties() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let pool = db_at(data).await;
    seed_demo_dataset(&pool, &ImageStore::new(data.join("images")), 28).await.unwrap();
    let texts: Vec<(String, String)> =
        sqlx::query_as("SELECT caption, negative_caption FROM instances").fetch_all(&pool).await.unwrap();
    let words: Vec<&str> = texts.iter().flat_map(|(a, b)| [a.as_str(), b.as_str()]).collect();
    let model = data.join("tiny-clip");
    write_tiny_checkpoint(&model, Activation::QuickGelu, &words, 5).unwrap();
    let score = |name: &str, dtype: &str| {
        let args =
            ["score", "--model-dir", model.to_str().unwrap(), "--name", name, "--dataset", "demo", "--device", "cpu"];
        cli(data, &[&args[..], &["--dtype", dtype, "--batch", "8"]].concat())
    };
    let emulated = |out: &Output| String::from_utf8_lossy(&out.stderr).contains("emulated on the CPU");
    let f32_out = score("tiny", "f32");
    let f32_first = ok(&f32_out);
    let all = encoded(&f32_first);
    assert_eq!(all.0, 56);
    // Same name and weights in bf16: nothing of f32's is reused, and the other way round.
    let bf16_out = score("tiny", "bf16");
    assert!(emulated(&bf16_out) && !emulated(&f32_out), "a half type on the CPU is said to be emulated");
    let bf16_first = ok(&bf16_out);
    assert!(bf16_first.contains("as tiny on cpu bf16"), "{bf16_first}");
    assert_eq!(encoded(&bf16_first), all);
    assert_eq!(encoded(&ok(&score("tiny", "bf16"))), (0, 0), "bf16 reads its own cache");
    assert_eq!(encoded(&ok(&score("tiny", "f32"))), (0, 0), "f32's entries were left alone");
    let (f32_vecs, bf16_vecs) = (cached(&pool, "tiny", None).await, cached(&pool, "tiny", Some("bf16")).await);
    assert_eq!((f32_vecs.len(), bf16_vecs.len()), (all.0 + all.1, all.0 + all.1), "both under one run name");

    // The device column records the precision; two names to compare outcomes.
    ok(&score("tiny-bf16", "bf16"));
    let report: CompareReport =
        serde_json::from_str(&ok(&cli(data, &["compare", "--dataset", "demo", "--json"]))).unwrap();
    let device = |name: &str| report.models.iter().find(|m| m.name == name).unwrap().device.clone();
    assert_eq!((device("tiny").as_deref(), device("tiny-bf16").as_deref()), (Some("cpu"), Some("cpu bf16")));
    ok(&score("tiny", "f32"));
    let f32_scored = scored(&pool, "tiny", &f32_vecs).await;
    let bf16_scored = scored(&pool, "tiny-bf16", &cached(&pool, "tiny-bf16", Some("bf16")).await).await;
    assert_eq!(f32_scored.len(), 28);
    // bf16 really ran: its similarities move by more than f32's noise
    // (1e-6), by no more than bf16's (8 significant bits).
    let mut drift = 0f64;
    for ((a, _), (b, _)) in f32_scored.iter().zip(&bf16_scored) {
        drift = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(drift, f64::max);
    }
    assert!(drift > 1e-4 && drift < 2e-2, "bf16 similarities moved by {drift}");
    // An outcome may flip only where f32's two compared similarities are
    // within the drift of both: a near-tie.
    let (mut flips, mut flags) = (0, 0);
    for ((s32, o32), (_, o16)) in f32_scored.iter().zip(&bf16_scored) {
        for (k, (x, y)) in compared(s32).into_iter().enumerate() {
            flags += 1;
            if o32[k] != o16[k] {
                flips += 1;
                assert!((x - y).abs() <= 2.0 * drift, "flag {k} flipped at margin {} (drift {drift})", (x - y).abs());
            }
        }
    }
    eprintln!("bf16 vs f32 on 28 demo instances, tiny model: {flips} of {flags} flags differ, drift {drift:.2e}");
    assert!(flips * 4 <= flags, "{flips} of {flags} flags flipped");
}

#[tokio::test]
async fn unknown_dtypes_and_dtypes_for_external_scorers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data: &Path = dir.path();
    let out = cli(data, &["score", "--model-dir", "/nonexistent", "--name", "x", "--dataset", "d", "--dtype", "fp8"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown --dtype \"fp8\" (f32, bf16 or f16)"));
    let out = cli(data, &["score", "--external", "true", "--name", "x", "--dataset", "d", "--dtype", "bf16"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dtype bf16 applies to --model-dir"));
}
