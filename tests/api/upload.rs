//! Candidates uploaded over HTTP (multipart): researchers only, refused
//! whole with the line and field but no server path, uploads cleaned up.
use crate::helpers::TestApp;
use crate::import::{dump, shared};
use crate::placeholders;

/// A multipart/form-data body: (part name, file name, content).
pub fn form(parts: &[(&str, Option<&str>, Vec<u8>)]) -> (String, Vec<u8>) {
    let boundary = "hardneg-test-boundary-5d1f0c";
    let mut body = Vec::new();
    for (name, file, data) in parts {
        body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"").as_bytes());
        if let Some(file) = file {
            body.extend_from_slice(
                format!("; filename=\"{file}\"\r\nContent-Type: application/octet-stream").as_bytes(),
            );
        }
        body.extend_from_slice(b"\r\n\r\n");
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test]
async fn researchers_upload_candidates_over_http() {
    let app = TestApp::spawn();
    let original = std::fs::read_to_string(shared("candidates.csv")).unwrap();
    let csv: String = original.lines().take(4).map(|l| format!("{l}\n")).collect();
    let records: Vec<csv::StringRecord> =
        csv::Reader::from_reader(csv.as_bytes()).records().map(Result::unwrap).collect();
    let mut parts =
        vec![("file", Some("upload.csv"), csv.clone().into_bytes()), ("dataset", None, b"uploaded".to_vec())];
    for (i, rec) in records.iter().enumerate() {
        parts.push(("positive", Some(&rec[0]), placeholders::jpeg(i as u32)));
        for k in 0..4 {
            parts.push(("negative", Some(&rec[6 + k]), placeholders::png((i * 4 + k) as u32)));
        }
    }
    let url = app.url("/api/v1/datasets/import");
    let post = |client: reqwest::Client, parts: Vec<(&str, Option<&str>, Vec<u8>)>| {
        let (content_type, body) = form(&parts);
        let url = url.clone();
        async move { client.post(url).header("content-type", content_type).body(body).send().await.unwrap() }
    };
    assert_eq!(post(TestApp::client(), parts.clone()).await.status(), 401);
    assert_eq!(post(app.login("annotator1").await, parts.clone()).await.status(), 403);

    let researcher = app.login("researcher").await;
    let res = post(researcher.clone(), parts.clone()).await;
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(
        body,
        serde_json::json!({"dataset": "uploaded", "instances": 3, "images": 15, "new_images": 15, "already_imported": false})
    );
    let again: serde_json::Value = post(researcher.clone(), parts.clone()).await.json().await.unwrap();
    assert_eq!(again["already_imported"], true);

    // A missing image and a name escaping its directory are refused, naming
    // the line and field but no server path.
    let before = dump(&app).await;
    let mut missing = parts.clone();
    missing[1].2 = b"other".to_vec();
    missing.remove(3);
    let res = post(researcher.clone(), missing).await;
    assert_eq!(res.status(), 422);
    let err = res.json::<serde_json::Value>().await.unwrap()["error"].as_str().unwrap().to_string();
    assert!(
        err.contains(
            "upload.csv:2: field `hn_img_0`: image \"0_000000219578_0.jpg\" in the uploaded negative images: not found"
        ),
        "{err}"
    );
    assert!(!err.contains(app.data_dir.to_str().unwrap()), "{err}");
    let mut escaping = parts.clone();
    escaping.push(("negative", Some("../../evil.jpg"), b"x".to_vec()));
    let res = post(researcher.clone(), escaping).await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("not a file name inside the image directory"));
    assert_eq!(dump(&app).await, before);
    // The uploads are removed once each request is over.
    let uploads = app.data_dir.join("images/uploads");
    for _ in 0..50 {
        if std::fs::read_dir(&uploads).map_or(0, |d| d.count()) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(std::fs::read_dir(&uploads).unwrap().count(), 0);
}
