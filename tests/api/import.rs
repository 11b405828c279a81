//! `hardneg import candidates` on the real BiVLC Step 2 file with generated
//! placeholder images, against a running server's data dir: the released
//! results match the imported instances, a re-import changes nothing, and
//! every corrupted copy is refused whole, naming line and field.
use crate::helpers::{fixture, text, TestApp};
use crate::placeholders;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

pub(crate) fn shared(file: &str) -> PathBuf {
    fixture(&format!("bivlc/{file}"))
}

/// Placeholder images for every name in candidates.csv, in `dir`.
fn images(dir: &Path) -> (PathBuf, PathBuf) {
    let (pos, neg) = (dir.join("positives"), dir.join("negatives"));
    let (p, n) = placeholders::image_names(&shared("candidates.csv"));
    assert_eq!(placeholders::write_all(&p, &n, &pos, &neg), (1561, 30048));
    (pos, neg)
}

fn import(app: &TestApp, file: &Path, pos: &Path, neg: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "import",
        "candidates",
        file.to_str().unwrap(),
        "--positives",
        pos.to_str().unwrap(),
        "--negatives",
        neg.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    app.cli(&args)
}

async fn pool(app: &TestApp) -> sqlx::AnyPool {
    app.db().await
}

/// Every row of every table, as text: equal dumps mean equal content.
pub(crate) async fn dump(app: &TestApp) -> Vec<String> {
    let db = pool(app).await;
    if crate::helpers::on_postgres() {
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
        )
        .fetch_all(&db)
        .await
        .unwrap();
        let mut out = Vec::new();
        for t in tables {
            let rows: Vec<String> =
                sqlx::query_scalar(&format!("SELECT row_to_json(x)::text AS r FROM \"{t}\" x ORDER BY r"))
                    .fetch_all(&db)
                    .await
                    .unwrap();
            out.extend(rows.into_iter().map(|r| format!("{t}: {r}")));
        }
        db.close().await;
        return out;
    }
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let mut out = Vec::new();
    for t in tables {
        let cols: Vec<String> =
            sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{t}')")).fetch_all(&db).await.unwrap();
        let row = cols.iter().map(|c| format!("quote(\"{c}\")")).collect::<Vec<_>>().join(" || '|' || ");
        let rows: Vec<String> =
            sqlx::query_scalar(&format!("SELECT {row} AS r FROM \"{t}\" ORDER BY r")).fetch_all(&db).await.unwrap();
        out.extend(rows.into_iter().map(|r| format!("{t}: {r}")));
    }
    db.close().await;
    out
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    let db = pool(app).await;
    let n = sqlx::query_scalar(sql).fetch_one(&db).await.unwrap();
    db.close().await;
    n
}

/// Files in the image store, its lock file aside (the first import makes it
/// where no starting server's sweep did: servers on PostgreSQL sweep nothing).
fn store_files(app: &TestApp) -> usize {
    fn walk(p: &Path) -> usize {
        std::fs::read_dir(p).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name() != "import.lock")
                .map(|e| if e.path().is_dir() { walk(&e.path()) } else { 1 })
                .sum()
        })
    }
    walk(&app.data_dir.join("images"))
}

#[tokio::test]
async fn real_candidates_import_and_match_the_released_results() {
    let app = TestApp::spawn();
    let tmp = tempfile::tempdir().unwrap();
    let (pos, neg) = images(tmp.path());
    let out = import(&app, &shared("candidates.csv"), &pos, &neg, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .contains("imported 7512 instances into dataset \"candidates\" (normalize bivlc): 31609 images, 31609 new"),
        "{stdout}"
    );
    let per_dataset = "FROM instances i JOIN datasets d ON d.id = i.dataset_id WHERE d.name = 'candidates'";
    assert_eq!(count(&app, &format!("SELECT count(*) {per_dataset}")).await, 7512);
    assert_eq!(count(&app, "SELECT count(*) FROM candidates c JOIN instances i ON i.id = c.instance_id JOIN datasets d ON d.id = i.dataset_id WHERE d.name = 'candidates'").await, 30048);

    // Every released result row is one of the normalised instances...
    let db = pool(&app).await;
    let instances: HashSet<(String, String, String, String)> =
        sqlx::query_as(&format!("SELECT caption, negative_caption, neg_type, subtype {per_dataset}"))
            .fetch_all(&db)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let (orig, norm): (String, String) =
        sqlx::query_as(&format!("SELECT caption_orig, caption {per_dataset} AND key = '0'"))
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(
        (orig.as_str(), norm.as_str()),
        ("A cat and dog napping together on the couch.", "A cat and dog napping together on the couch.")
    );
    db.close().await;
    let mut results = csv::Reader::from_path(shared("results_ViT-B-32.csv")).unwrap();
    let mut n = 0;
    for rec in results.records() {
        let r = rec.unwrap();
        let key = (r[1].to_string(), r[2].to_string(), r[4].to_string(), r[5].to_string());
        assert!(instances.contains(&key), "result row {} is not an imported instance: {key:?}", n + 2);
        n += 1;
    }
    assert_eq!(n, 2933);
    // ...so the results import matches every row to an instance.
    let out = app.cli(&[
        "results",
        "import",
        "--model",
        "CLIP",
        "--dataset",
        "candidates",
        shared("results_ViT-B-32.csv").to_str().unwrap(),
    ]);
    assert!(text(&out.stdout).contains("imported 2933 results"), "{}", text(&out.stderr));

    // The same file again is a no-op.
    let before = dump(&app).await;
    let files = store_files(&app);
    let again = import(&app, &shared("candidates.csv"), &pos, &neg, &[]);
    assert!(again.status.success() && text(&again.stdout).contains("already imported"), "{}", text(&again.stderr));
    assert_eq!(dump(&app).await, before);
    assert_eq!(store_files(&app), files);

    // Another mode or another file under the same name is refused; another
    // name works and adds no image files (same content).
    let out = import(&app, &shared("candidates.csv"), &pos, &neg, &["--normalize", "preserve-entities"]);
    assert!(
        text(&out.stderr).contains("dataset \"candidates\" already exists with normalisation bivlc"),
        "{}",
        text(&out.stderr)
    );
    let out =
        import(&app, &shared("candidates.csv"), &pos, &neg, &["--normalize", "preserve-entities", "--dataset", "pe"]);
    assert!(
        text(&out.stdout).contains("into dataset \"pe\" (normalize preserve-entities): 31609 images, 0 new"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(store_files(&app), files);
    let out =
        app.cli(&["import", "candidates", "x.csv", "--positives", ".", "--negatives", ".", "--normalize", "lower"]);
    assert!(text(&out.stderr).contains("unknown normalisation mode \"lower\""), "{}", text(&out.stderr));
}

#[tokio::test]
async fn corrupted_copies_are_refused_whole_naming_line_and_field() {
    let app = TestApp::spawn();
    let tmp = tempfile::tempdir().unwrap();
    let (pos, neg) = images(tmp.path());
    let original = std::fs::read(shared("candidates.csv")).unwrap();
    let lines: Vec<&[u8]> = original.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 7513);
    let corrupt = |f: &dyn Fn(&mut Vec<Vec<u8>>)| {
        let mut v: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
        f(&mut v);
        v.join(&b'\n')
    };
    let replace = |line: &[u8], from: &str, to: &[u8]| {
        let s = line.windows(from.len()).position(|w| w == from.as_bytes()).expect("text to corrupt");
        [&line[..s], to, &line[s + from.len()..]].concat()
    };
    let (mut p, _) = placeholders::image_names(&shared("candidates.csv"));
    p.truncate(1);
    let first_positive = pos.join(&p[0]); // named on line 2 and on later lines
    let missing = neg.join("41_000000274687_2.jpg"); // hn_img_2 of line 43

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "no-column",
            corrupt(&|v| v[0] = replace(&v[0], "\"negative_caption\"", b"\"neg\"")),
            ":1: missing column(s): negative_caption",
        ),
        (
            "bad-subtype",
            corrupt(&|v| v[2] = replace(&v[2], "\"obj\"", b"\"thing\"")),
            ":3: field `subtype`: unknown subtype \"thing\"",
        ),
        ("truncated", corrupt(&|v| v[7512] = v[7512][..30].to_vec()), ":7513: field `negative_caption`: missing"),
        (
            "non-utf8",
            corrupt(&|v| v[99] = replace(&v[99], "\"A ", b"\"A \xff")),
            ":100: field `caption`: not valid UTF-8 (byte 0xff",
        ),
        (
            "duplicate",
            corrupt(&|v| v[9] = replace(&v[9], "\"8\"", b"\"3\"")),
            ":10: field `index`: duplicate index \"3\" (first on line 5)",
        ),
        ("missing-image", original.clone(), ":43: field `hn_img_2`: image "),
        ("unreadable-image", original.clone(), ":2: field `filename`: image "),
    ];
    let before = dump(&app).await;
    let files = store_files(&app);
    for (name, body, expected) in cases {
        let path = tmp.path().join(format!("{name}.csv"));
        std::fs::write(&path, &body).unwrap();
        let saved = std::fs::read(&first_positive).unwrap();
        if name == "missing-image" {
            std::fs::remove_file(&missing).unwrap();
        }
        if name == "unreadable-image" {
            std::fs::write(&first_positive, &saved[..saved.len() - 10]).unwrap();
        }
        let out = import(&app, &path, &pos, &neg, &[]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{name} was accepted");
        assert!(err.contains("1 problem(s), nothing imported:"), "{name}: {err}");
        assert!(err.contains(&format!("{name}.csv{expected}")), "{name}: {err}");
        match name {
            "missing-image" => {
                assert!(
                    err.contains(&format!("image \"41_000000274687_2.jpg\" in {}: not found", neg.display())),
                    "{err}"
                );
                std::fs::write(&missing, placeholders::png(9_999_999)).unwrap();
            }
            "unreadable-image" => {
                assert!(err.contains("JPEG truncated") && err.contains("also named on"), "{err}");
                std::fs::write(&first_positive, &saved).unwrap();
            }
            _ => {}
        }
        assert_eq!(dump(&app).await, before, "{name} changed the database");
        assert_eq!(store_files(&app), files, "{name} left files in the image store");
    }

    // Many problems: the first 20 are shown, the rest counted.
    let many = corrupt(&|v| {
        for l in v.iter_mut().skip(1).take(30) {
            *l = replace(l, "\"obj\"", b"\"thing\"");
        }
    });
    let path = tmp.path().join("many.csv");
    std::fs::write(&path, many).unwrap();
    let err = text(&import(&app, &path, &pos, &neg, &[]).stderr);
    assert!(
        err.contains("30 problem(s), nothing imported:")
            && err.contains("many.csv:21: field `subtype`")
            && err.contains("\nand 10 more"),
        "{err}"
    );
    assert!(!err.contains("many.csv:22:"), "{err}");
    assert_eq!(dump(&app).await, before);
}

#[tokio::test]
async fn json_lines_import_with_numeric_or_string_indexes_and_links() {
    let app = TestApp::spawn();
    let tmp = tempfile::tempdir().unwrap();
    let (pos, neg) = images(tmp.path());
    let mut reader = csv::Reader::from_path(shared("candidates.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let mut body = String::new();
    for (i, rec) in reader.records().take(50).enumerate() {
        let rec = rec.unwrap();
        let mut obj = serde_json::Map::new();
        for (h, v) in headers.iter().zip(rec.iter()) {
            let value = if h == "index" && i % 2 == 0 {
                serde_json::json!(v.parse::<u64>().unwrap())
            } else {
                serde_json::json!(v)
            };
            obj.insert(h.to_string(), value);
        }
        body.push_str(&serde_json::Value::Object(obj).to_string());
        body.push('\n');
    }
    let path = tmp.path().join("first50.jsonl");
    std::fs::write(&path, &body).unwrap();
    let out = import(&app, &path, &pos, &neg, &["--link"]);
    assert!(text(&out.stdout).contains("imported 50 instances into dataset \"first50\""), "{}", text(&out.stderr));
    // --link: the store shares the source file instead of holding a copy.
    let source = pos.join("000000219578.jpg");
    let hash = hardneg::store::images::sha256_hex(&std::fs::read(&source).unwrap());
    let stored = hardneg::store::images::ImageStore::new(app.data_dir.join("images")).original_path(&hash);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&stored).unwrap().ino(), std::fs::metadata(&source).unwrap().ino());
    let keys: Vec<String> = {
        let db = pool(&app).await;
        sqlx::query_scalar(
            "SELECT key FROM instances i JOIN datasets d ON d.id = i.dataset_id WHERE d.name = 'first50' ORDER BY i.id",
        )
        .fetch_all(&db)
        .await
        .unwrap()
    };
    assert_eq!(keys, (0..50).map(|k| k.to_string()).collect::<Vec<_>>());

    let before = dump(&app).await;
    let cut = tmp.path().join("cut.jsonl");
    std::fs::write(&cut, &body[..body.len() - 30]).unwrap();
    let err = text(&import(&app, &cut, &pos, &neg, &[]).stderr);
    assert!(err.contains("cut.jsonl:50: not valid JSON") && err.contains("truncated"), "{err}");
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        body.replacen("\"type\":\"add\"", "\"type\":7", 1).replacen("\"index\":2,", "\"index\":\"1\",", 1),
    )
    .unwrap();
    let err = text(&import(&app, &bad, &pos, &neg, &[]).stderr);
    assert!(err.contains("bad.jsonl:1: field `type`: expected a string, got 7"), "{err}");
    assert!(err.contains("bad.jsonl:3: field `index`: duplicate index \"1\" (first on line 2)"), "{err}");
    assert_eq!(dump(&app).await, before);
}
