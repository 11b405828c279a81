//! The client's files: content-hashed names cached for a year, precompressed
//! copies chosen by `Accept-Encoding`, pages revalidated and gzipped. The
//! site is written by the test, as scripts/build-site.sh lays it out.
use crate::helpers::TestApp;
use reqwest::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING};

const NAME: &str = "hardneg.0123456789abcdef";
const YEAR: &str = "public, max-age=31536000, immutable";

#[tokio::test]
async fn hashed_client_files_are_immutable_and_served_precompressed() {
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(site.path().join("output-name"), format!("{NAME}\n")).unwrap();
    for (suffix, body) in [("", "plain js"), (".br", "brotli js"), (".gz", "gzip js")] {
        std::fs::write(pkg.join(format!("{NAME}.js{suffix}")), body).unwrap();
    }
    std::fs::write(pkg.join("unhashed.js"), "old style").unwrap();
    let data = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(data.path(), &["--site-dir", site.path().to_str().unwrap()]);
    let client = reqwest::Client::new();
    let js = app.url(&format!("/pkg/{NAME}.js"));

    for (accept, encoding, body) in
        [("br, gzip", Some("br"), "brotli js"), ("gzip", Some("gzip"), "gzip js"), ("identity", None, "plain js")]
    {
        let res = client.get(&js).header(ACCEPT_ENCODING, accept).send().await.unwrap();
        assert_eq!(res.status(), 200, "{accept}");
        assert_eq!(res.headers()[CACHE_CONTROL], YEAR, "{accept}");
        assert_eq!(res.headers().get(CONTENT_ENCODING).map(|v| v.to_str().unwrap()), encoding, "{accept}");
        assert_eq!(res.text().await.unwrap(), body, "{accept}");
    }
    let res = client.get(app.url("/pkg/unhashed.js")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()[CACHE_CONTROL], "no-cache");
    let res = client.get(app.url("/pkg/hardneg.fedcba9876543210.js")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_ne!(res.headers().get(CACHE_CONTROL).map(|v| v.to_str().unwrap()), Some(YEAR), "a miss is not cached");
    // A name no build writes (300 characters: the file system's error was a 500 and an ERROR line).
    let res = client.get(app.url(&format!("/pkg/{}", "a".repeat(300)))).send().await.unwrap();
    assert_eq!(res.status(), 404);

    // The page names the hashed files, is revalidated, and is gzipped on request.
    let res = client.get(app.url("/login")).send().await.unwrap();
    assert_eq!(res.headers().get(CACHE_CONTROL).map(|v| v.to_str().unwrap()), Some("no-cache"));
    let html = res.text().await.unwrap();
    for file in [format!("/pkg/{NAME}.css"), format!("/pkg/{NAME}.js"), format!("/pkg/{NAME}_bg.wasm")] {
        assert!(html.contains(&file), "{file} not in the page: {html}");
    }
    let res = client.get(app.url("/login")).header(ACCEPT_ENCODING, "gzip").send().await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
    assert_eq!(res.bytes().await.unwrap()[..2], [0x1f, 0x8b], "a gzip stream");
}
