//! Headless Chromium driven over WebDriver (chromedriver from Debian's
//! packages; nothing is downloaded). Processes run in their own group and
//! the whole group is killed on drop, so a failing test leaves no orphans.
#![allow(dead_code)]
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder, Locator};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Browser {
    pub client: Client,
    /// chromedriver's port, for commands fantoccini has no call for.
    pub port: u16,
    driver: Child,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Browser {
    pub async fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let port = free_port();
        let driver = Command::new(std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into()))
            .arg(format!("--port={port}"))
            .env("HOME", profile.path())
            .env("XDG_CONFIG_HOME", profile.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromedriver must be installed (apt-get install chromium chromium-driver)");
        let caps = serde_json::json!({
            "goog:chromeOptions": {
                "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1366,768",
                    format!("--user-data-dir={}", profile.path().join("chrome").display()),
                ]
            }
        });
        let caps = caps.as_object().unwrap().clone();
        let mut last = None;
        for _ in 0..100 {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => return Browser { client, port, driver, _profile: profile },
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("could not start a browser session: {last:?}");
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
        self.wait_hydrated().await;
    }

    /// The client flips `data-hydrated` on <main> once hydration ran; without
    /// working wasm this never happens and the test fails here.
    pub async fn wait_hydrated(&self) {
        self.wait_css(r#"main[data-hydrated="true"]"#).await;
    }

    pub async fn wait_css(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("waiting for {css}: {e}"))
    }

    /// Retried while a form post replaces the page under the element found.
    pub async fn text(&self, css: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            match self.wait_css(css).await.text().await {
                Ok(text) => return text,
                Err(e) => assert!(std::time::Instant::now() < deadline, "reading {css}: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    pub async fn press(&self, key: char) {
        let keys =
            KeyActions::new("keyboard".into()).then(KeyAction::Down { value: key }).then(KeyAction::Up { value: key });
        self.client.perform_actions(keys).await.unwrap();
    }

    pub async fn login(&self, base: &str, user: &str, password: &str) {
        self.goto(&format!("{base}/login")).await;
        self.wait_css("input[name=username]").await.send_keys(user).await.unwrap();
        self.wait_css("input[name=password]").await.send_keys(password).await.unwrap();
        self.wait_css("form button[type=submit]").await.click().await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while self.client.current_url().await.unwrap().path() == "/login" {
            assert!(std::time::Instant::now() < deadline, "login as {user} did not leave /login");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.wait_hydrated().await;
    }

    /// A Chrome DevTools Protocol command through chromedriver.
    pub async fn cdp(&self, cmd: &str, params: serde_json::Value) -> serde_json::Value {
        let session = self.client.session_id().await.unwrap().expect("a session");
        let url = format!("http://127.0.0.1:{}/session/{session}/goog/cdp/execute", self.port);
        let body = serde_json::json!({ "cmd": cmd, "params": params });
        let res = reqwest::Client::new().post(url).json(&body).send().await.unwrap();
        assert!(res.status().is_success(), "{cmd}: {}", res.text().await.unwrap());
        res.json().await.unwrap()
    }

    /// Ends the WebDriver session; a dropped client would keep its task alive.
    pub async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.clone().close()).await;
    }

    /// Saves a screenshot under the crate's target/, wherever the tests run from.
    pub async fn screenshot(&self, name: &str) {
        if let Ok(png) = self.client.screenshot().await {
            let _ = std::fs::write(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join(name), png);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.driver.id())]).status();
        let _ = self.driver.wait();
    }
}
