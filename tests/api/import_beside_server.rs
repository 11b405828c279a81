//! `hardneg import candidates` on the data dir of a running server
//! (docs/import.md): allowed and safe, and a server starting meanwhile
//! leaves the files the import is staging in the store.
use crate::export_abandoned::big_dataset;
use crate::helpers::TestApp;
use crate::placeholders::jpeg;
use sha2::Digest;

#[tokio::test]
async fn a_cli_import_beside_a_server_is_served_and_a_starting_server_spares_its_staged_files() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let app = TestApp::spawn_on(&data, &[]);
    let [csv, pos, neg] = big_dataset(tmp.path(), 40);
    let p = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let out = app.cli(&["import", "candidates", &p(&csv), "--positives", &p(&pos), "--negatives", &p(&neg)]);
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));

    // The running server sees the dataset and serves its images at once.
    let researcher = app.login("researcher").await;
    let datasets: serde_json::Value = app.get(&researcher, "/api/v1/datasets").await;
    assert!(datasets.to_string().contains("\"big\""), "{datasets}");
    let hash = hex::encode(sha2::Sha256::digest(jpeg(1)));
    let original = researcher.get(app.url(&format!("/img/{hash}/original"))).send().await.unwrap();
    assert_eq!(original.status(), 200);
    assert_eq!(original.bytes().await.unwrap().to_vec(), jpeg(1));
    let display = researcher.get(app.url(&format!("/img/{hash}"))).send().await.unwrap();
    assert_eq!(display.status(), 200);
    drop(app);

    // An import staging a file (it holds the import lock) while a server starts.
    let staged = data.join("images/originals/ab").join(format!("{}.staging-7-7", "ab".repeat(32)));
    std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
    std::fs::write(&staged, b"half an image").unwrap();
    let import = hardneg::store::leftovers::lock_for_import(&data.join("images")).unwrap();
    let app = TestApp::spawn_on(&data, &[]);
    assert!(staged.exists(), "the starting server swept a running import's staged file");
    drop(app);
    drop(import);
    let _app = TestApp::spawn_on(&data, &[]);
    // Servers sharing PostgreSQL never sweep the shared data dir (docs/deploy.md).
    if !crate::helpers::on_postgres() {
        assert!(!staged.exists(), "a leftover with no import running is swept");
    }
}
