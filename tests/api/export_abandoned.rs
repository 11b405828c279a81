//! An export download whose client leaves before the first byte (issue 10):
//! the export stops and its scratch directory goes, without a restart.
use crate::helpers::TestApp;
use crate::placeholders::{jpeg, png};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// `big.csv`: `rows` rows sharing one positive (`jpeg(1)`) and four negatives.
pub fn big_dataset(dir: &Path, rows: usize) -> [std::path::PathBuf; 3] {
    let (csv, pos, neg) = (dir.join("big.csv"), dir.join("pos"), dir.join("neg"));
    std::fs::create_dir_all(&pos).unwrap();
    std::fs::create_dir_all(&neg).unwrap();
    std::fs::write(pos.join("p.jpg"), jpeg(1)).unwrap();
    for k in 0..4 {
        std::fs::write(neg.join(format!("n{k}.png")), png(k)).unwrap();
    }
    let mut text = hardneg::domain::candidates::COLUMNS.join(",") + "\n";
    for i in 0..rows {
        text += &format!("p.jpg,A cat on mat {i}.,A mat on cat {i}.,swap,obj,{i},n0.png,n1.png,n2.png,n3.png\n");
    }
    std::fs::write(&csv, text).unwrap();
    [csv, pos, neg]
}

fn scratch_dirs(data: &Path) -> usize {
    std::fs::read_dir(data.join("images/.export-tmp")).map(|d| d.count()).unwrap_or(0)
}

#[tokio::test]
async fn an_export_download_abandoned_before_its_first_byte_stops_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(&tmp.path().join("data"), &[]);
    let [csv, pos, neg] = big_dataset(tmp.path(), 60_000);
    let p = |p: &Path| p.to_str().unwrap().to_string();
    let out = app.cli(&["import", "candidates", &p(&csv), "--positives", &p(&pos), "--negatives", &p(&neg)]);
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));

    let cookie = crate::hardening::session_cookie(&app, "researcher").await;
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "GET /api/v1/datasets/big/export?format=jsonl&stage=candidates HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while scratch_dirs(&app.data_dir) == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(scratch_dirs(&app.data_dir), 1, "the export started writing its scratch directory");
    let mut byte = [0u8; 1];
    assert!(
        matches!(tcp.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the export is still being written: nothing has been answered yet"
    );
    drop(tcp);

    let started = Instant::now();
    while scratch_dirs(&app.data_dir) > 0 && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("scratch directory gone {:?} after the client left", started.elapsed());
    assert_eq!(scratch_dirs(&app.data_dir), 0, "the abandoned export's scratch directory is still there");

    // The server still serves, downloads included.
    let researcher = app.login("researcher").await;
    let res = researcher.get(app.url("/api/v1/datasets/demo/export?format=csv&stage=candidates")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(!crate::helpers::untar(&res.bytes().await.unwrap()).is_empty());
    assert_eq!(scratch_dirs(&app.data_dir), 0);
}
