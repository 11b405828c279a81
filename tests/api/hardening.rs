//! Hardening against hostile clients (issue 10): the real binary on a
//! temporary data dir, attacked over real HTTP.
use crate::helpers::TestApp;
use crate::upload::form;
use reqwest::StatusCode;
use serde_json::json;
use std::time::Duration;

/// The server process serving `app` (found by its data dir, so the shared
/// harness need not expose it).
fn server_pid(app: &TestApp) -> u32 {
    let dir = app.data_dir.to_string_lossy().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmd.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).to_string()).collect();
        if args.iter().any(|a| a == "serve") && args.contains(&dir) {
            return pid;
        }
    }
    panic!("no server process for {dir}");
}

/// The peak resident memory of the server so far, in MB.
fn peak_mb(app: &TestApp) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server_pid(app))).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

fn spawn_fresh() -> (TestApp, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    (TestApp::spawn_on(tmp.path(), &[]), tmp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_login_flood_stays_small_and_the_right_password_works_after() {
    let (app, _tmp) = spawn_fresh();
    let url = app.url("/api/v1/session");
    let flood = (0..256).map(|i| {
        let url = url.clone();
        tokio::spawn(async move {
            let body = json!({"username": "admin", "password": format!("wrong guess {i}")});
            let res = TestApp::client().post(url).json(&body).send().await.unwrap();
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
            (res.status(), retry)
        })
    });
    let mut answers = Vec::new();
    for task in flood.collect::<Vec<_>>() {
        answers.push(task.await.unwrap());
    }
    let peak = peak_mb(&app);
    eprintln!("server peak after 256 parallel wrong logins: {peak} MB");
    assert!(peak < 300, "the server peaked at {peak} MB during the flood");
    assert!(answers.iter().all(|(s, _)| [401, 429, 503].contains(&s.as_u16())), "{answers:?}");
    let throttled = answers.iter().filter(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS).count();
    assert!(throttled > 200, "only {throttled} of 256 were throttled");
    assert!(answers.iter().filter(|(s, _)| *s != StatusCode::UNAUTHORIZED).all(|(_, r)| r.is_some()));

    // The backoff ends: the right password works once it has passed.
    let right = json!({"username": "admin", "password": app.password("admin")});
    let mut status = StatusCode::TOO_MANY_REQUESTS;
    for _ in 0..5 {
        let res = TestApp::client().post(&url).json(&right).send().await.unwrap();
        status = res.status();
        if status != StatusCode::TOO_MANY_REQUESTS {
            break;
        }
        let wait: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        let body: serde_json::Value = res.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("too many failed logins"), "{body}");
        assert!(wait <= 60, "a flood locks the account for at most a minute, not {wait} s");
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
    assert_eq!(status, 204, "the right password after the flood");
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A structurally complete PNG claiming `w` x `h` 1-bit grey pixels, with a
/// token IDAT: the header is all a size check may read.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let body: Vec<u8> = kind.iter().chain(data).copied().collect();
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    };
    let ihdr: Vec<u8> = [w.to_be_bytes(), h.to_be_bytes()].concat().into_iter().chain([1, 0, 0, 0, 0]).collect();
    chunk(b"IHDR", &ihdr);
    chunk(b"IDAT", &[0x78, 0x01, 0x01, 0x01, 0x00, 0xFE, 0xFF, 0x00, 0x00, 0x01, 0x00, 0x01]);
    chunk(b"IEND", &[]);
    out
}

/// A real image large enough to need a display copy.
fn big_png(shade: u8) -> Vec<u8> {
    let img = image::RgbImage::from_fn(1600, 800, |x, y| image::Rgb([shade, (x % 256) as u8, (y % 256) as u8]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// Uploads a one-instance candidate file whose positive image is `positive`.
async fn upload(client: &reqwest::Client, app: &TestApp, dataset: &str, positive: Vec<u8>) -> reqwest::Response {
    let csv = "filename,caption,negative_caption,type,subtype,index,hn_img_0,hn_img_1,hn_img_2,hn_img_3\n\
               p.png,A cat on a mat.,A cat under a mat.,replace,rel,0,n0.png,n1.png,n2.png,n3.png\n";
    let mut parts = vec![
        ("file", Some("one.csv"), csv.as_bytes().to_vec()),
        ("dataset", None, dataset.as_bytes().to_vec()),
        ("positive", Some("p.png"), positive),
    ];
    for k in 0..4u8 {
        parts.push(("negative", Some(["n0.png", "n1.png", "n2.png", "n3.png"][k as usize]), big_png(k + 10)));
    }
    let (content_type, body) = form(&parts);
    client
        .post(app.url("/api/v1/datasets/import"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn image_bombs_are_refused_by_their_header() {
    let (app, _tmp) = spawn_fresh();
    let researcher = app.login("researcher").await;
    for (w, h, limit) in [(100_000_000, 1, "sides are limited to 16384 pixels"), (400_000_000, 1, "16384 pixels")] {
        let res = upload(&researcher, &app, "bomb", png_claiming(w, h)).await;
        assert_eq!(res.status(), 422, "{w}x{h}");
        let body = res.text().await.unwrap();
        assert!(body.contains(&format!("{w}x{h} image: ")) && body.contains(limit), "{body}");
    }
    let res = upload(&researcher, &app, "bomb", png_claiming(9000, 9000)).await;
    assert!(res.text().await.unwrap().contains("limited to 40000000 pixels"));
    let res = upload(&researcher, &app, "bomb", png_claiming(10_000, 100)).await;
    assert!(res.text().await.unwrap().contains("at most 32 times"));
    assert_eq!(researcher.get(app.url("/api/v1/studies")).send().await.unwrap().status(), 200, "still up");
    let peak = peak_mb(&app);
    assert!(peak < 300, "the server peaked at {peak} MB");
}

#[tokio::test]
async fn a_refused_upload_leaves_nothing_half_stored() {
    let (app, _tmp) = spawn_fresh();
    let researcher = app.login("researcher").await;
    let bomb = png_claiming(30_000, 30_000);
    let bomb_hash = hardneg::store::images::sha256_hex(&bomb);
    let store = hardneg::store::images::ImageStore::new(app.data_dir.join("images"));
    for _ in 0..2 {
        // Refused every time, never "already imported" with a broken image.
        assert_eq!(upload(&researcher, &app, "half", bomb.clone()).await.status(), 422);
        assert!(!store.original_path(&bomb_hash).exists());
    }
    let good = big_png(1);
    let hash = hardneg::store::images::sha256_hex(&good);
    assert_eq!(upload(&researcher, &app, "half", good.clone()).await.status(), 200);
    assert_eq!(researcher.get(app.url(&format!("/img/{hash}"))).send().await.unwrap().status(), 200);

    // An original left without its display copy (a crash between the two)
    // is redone by the next import of the same content.
    std::fs::remove_file(store.display_path(&hash)).unwrap();
    let res = upload(&researcher, &app, "again", good).await;
    assert_eq!(res.status(), 200);
    let summary: serde_json::Value = res.json().await.unwrap();
    assert_eq!(summary["new_images"], 1, "{summary}");
    assert_eq!(researcher.get(app.url(&format!("/img/{hash}"))).send().await.unwrap().status(), 200);
}

/// The login page's form action: the login server function's URL.
pub(crate) async fn login_action(app: &TestApp) -> String {
    let page = TestApp::client().get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    let at = page.find("action=\"/sfn/login").expect("the login form") + "action=\"".len();
    page[at..].split('"').next().unwrap().to_string()
}

#[tokio::test]
async fn cross_site_state_changes_are_refused_and_same_site_ones_work() {
    let (app, _tmp) = spawn_fresh();
    let own = app.base.clone();
    let action = login_action(&app).await;
    let form = format!("username=admin&password={}", app.password("admin"));
    let sfn_login = |origin: Option<&str>, site: Option<&str>| {
        let mut req = TestApp::client()
            .post(app.url(&action))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form.clone());
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        if let Some(s) = site {
            req = req.header("sec-fetch-site", s);
        }
        req.send()
    };
    // Login CSRF: a cookieless form post from another site.
    let res = sfn_login(Some("http://evil.example"), None).await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("Origin http://evil.example is not this server's origin"));
    assert_eq!(sfn_login(None, Some("cross-site")).await.unwrap().status(), 403);
    assert_eq!(sfn_login(Some("null"), None).await.unwrap().status(), 403);
    for (origin, site) in [(None, None), (Some(own.as_str()), Some("same-origin"))] {
        let res = sfn_login(origin, site).await.unwrap();
        assert!(res.status().is_success() || res.status().is_redirection(), "{origin:?}: {}", res.status());
    }

    // A study spec as text/plain, a simple request a foreign page can send.
    let researcher = app.login("researcher").await;
    let spec = "name = \"x\"\n";
    let study = |origin: Option<&str>| {
        let mut req = researcher.post(app.url("/api/v1/studies")).header("content-type", "text/plain").body(spec);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        req.send()
    };
    assert_eq!(study(Some("http://evil.example")).await.unwrap().status(), 403);
    for origin in [None, Some(own.as_str())] {
        // Past the check: the spec itself is then judged (and found incomplete).
        assert_eq!(study(origin).await.unwrap().status(), 422, "{origin:?}");
    }
    // Reads stay open; every page says it may not be framed or sniffed.
    let page = researcher.get(app.url("/")).header("origin", "http://evil.example").send().await.unwrap();
    assert_ne!(page.status(), 403);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn leftovers_of_a_killed_upload_are_gone_after_restart_and_a_data_dir_has_one_server() {
    use tokio::io::AsyncWriteExt;
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &[]);
    let cookie = session_cookie(&app, "researcher").await;
    // An upload announcing 100 MB, of which one image part is half sent.
    let boundary = "cut-boundary";
    let head = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"positive\"; filename=\"p.png\"\r\n\r\n");
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /api/v1/datasets/import HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 100000000\r\n\r\n{head}"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp.write_all(&vec![7u8; 4 << 20]).await.unwrap();
    let uploads = tmp.path().join("images/uploads");
    let partial = || walk(&uploads).into_iter().any(|f| f.ends_with("p.png"));
    for _ in 0..100 {
        if partial() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(partial(), "the partial upload is on disk");
    app.kill();

    // A second server on a data dir in use is refused before touching it.
    let app = TestApp::spawn_on(tmp.path(), &[]);
    // Servers sharing PostgreSQL share the data dir: none sweeps it or
    // holds serve.lock (docs/deploy.md).
    if crate::helpers::on_postgres() {
        return;
    }
    assert!(walk(&uploads).is_empty(), "left after restart: {:?}", walk(&uploads));
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_hardneg"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("another hardneg server is using this data dir"), "{err}");
    drop(app);
}

/// `hardneg_session=…` of a fresh login as `user`, for raw HTTP requests.
pub async fn session_cookie(app: &TestApp, user: &str) -> String {
    let login = reqwest::Client::new()
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": user, "password": app.password(user)}))
        .send()
        .await
        .unwrap();
    login.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string()
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            out.extend(walk(&entry.path()));
        } else {
            out.push(entry.path().to_string_lossy().to_string());
        }
    }
    out
}

/// `import candidates --link` of a file set whose positive is a symbolic
/// link (here to a file outside both image dirs).
#[test]
fn a_symlinked_image_is_refused_by_link_imports_and_never_stored() {
    // A link to the file, and a link to a directory outside on the way to it.
    for (name, via_dir) in [("p.png", false), ("ldir/p.png", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let (pos, neg, out_dir) = (tmp.path().join("pos"), tmp.path().join("neg"), tmp.path().join("outside"));
        for d in [&pos, &neg, &out_dir] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(out_dir.join("p.png"), crate::placeholders::png(7)).unwrap();
        match via_dir {
            true => std::os::unix::fs::symlink(&out_dir, pos.join("ldir")).unwrap(),
            false => std::os::unix::fs::symlink(out_dir.join("p.png"), pos.join("p.png")).unwrap(),
        }
        for k in 0..4 {
            std::fs::write(neg.join(format!("n{k}.png")), crate::placeholders::png(100 + k)).unwrap();
        }
        let csv = tmp.path().join("linked.csv");
        let header = "filename,caption,negative_caption,type,subtype,index,hn_img_0,hn_img_1,hn_img_2,hn_img_3";
        let row = format!("{name},A cat on a mat.,A cat under a mat.,replace,rel,0,n0.png,n1.png,n2.png,n3.png");
        std::fs::write(&csv, format!("{header}\n{row}\n")).unwrap();
        let args = ["import", "candidates", csv.to_str().unwrap(), "--positives", pos.to_str().unwrap()];
        let out = crate::helpers::cli(&data, &[&args[..], &["--negatives", neg.to_str().unwrap(), "--link"]].concat());
        assert!(!out.status.success());
        let err = crate::helpers::text(&out.stderr);
        assert!(err.contains(name) && err.contains("is a symbolic link or reached through one"), "{err}");
        let stored: Vec<_> = walk_entries(&data.join("images")).into_iter().filter(|p| p.is_file()).collect();
        assert!(
            stored.iter().all(|p| !p.is_symlink()) && !stored.iter().any(|p| p.to_string_lossy().contains("link-"))
        );
        let outside = std::fs::metadata(out_dir.join("p.png")).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&outside), 1, "{name}: no store file shares its inode");
    }
}

fn walk_entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk_entries(&path));
        }
        out.push(path);
    }
    out
}

#[tokio::test]
async fn an_oversized_text_field_is_refused_by_its_limit() {
    let (app, _tmp) = spawn_fresh();
    let researcher = app.login("researcher").await;
    // Just over the limit and the whole body small: the server answers
    // before reading the rest, and an unread remainder would reset the
    // connection under the client (a real client sees the 422 or a reset).
    let (content_type, body) =
        form(&[("file", Some("one.csv"), b"filename\n".to_vec()), ("dataset", None, vec![b'd'; 5000])]);
    let res = researcher
        .post(app.url("/api/v1/datasets/import"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("`dataset`") && body.contains("4096 bytes"), "{body}");
    assert_eq!(upload(&researcher, &app, "fine", big_png(3)).await.status(), 200, "the server still imports");
}

#[tokio::test]
async fn dataset_names_outside_the_documented_charset_are_refused() {
    let (app, _tmp) = spawn_fresh();
    let researcher = app.login("researcher").await;
    let res = upload(&researcher, &app, "x\n<script>alert(1)</script>", big_png(4)).await;
    assert_eq!(res.status(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("letters a-z A-Z, digits, '-', '_' and '.'"), "{body}");
    // The results import creates datasets too.
    let results = crate::import::shared("results_ViT-B-32.csv");
    let out = app.cli(&["results", "import", "--model", "m", "--dataset", "a b", results.to_str().unwrap()]);
    let err = crate::helpers::text(&out.stderr);
    assert!(!out.status.success() && err.contains("dataset name \"a b\" is not allowed"), "{err}");
}
