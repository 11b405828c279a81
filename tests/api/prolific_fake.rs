//! The fake Prolific (`hardneg prolific fake`, src/prolific/fake) through
//! real HTTP: `FakeProlific`, the helper other tests use to run it. Its
//! checks and status machines are tested in prolific_fake_checks.rs;
//! webhooks, faults and money in prolific_fake_more.rs.
#![allow(dead_code)]
use reqwest::{Client, Method};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running fake Prolific (the real binary), killed when dropped.
pub struct FakeProlific {
    pub base: String,
    pub token: String,
    pub client: Client,
    child: Child,
}

/// A simulated participant's place.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub participant_id: String,
    pub submission_id: String,
    pub study_url: String,
}

impl FakeProlific {
    pub async fn start() -> FakeProlific {
        FakeProlific::start_with(&[]).await
    }

    /// With extra arguments, e.g. `["--async-delay-ms", "600000"]` or `["--webhook-secret", "s"]`.
    pub async fn start_with(extra: &[&str]) -> FakeProlific {
        let token = "test-token-0123456789".to_string();
        let mut child = Command::new(env!("CARGO_BIN_EXE_hardneg"))
            .args(["prolific", "fake", "--bind", "127.0.0.1:0", "--token", &token])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting hardneg prolific fake");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let line = rx.recv_timeout(Duration::from_secs(60)).expect("the fake did not start in time");
        let base =
            line.strip_prefix("fake prolific listening on ").unwrap_or_else(|| panic!("odd first line {line:?}"));
        FakeProlific { base: base.to_string(), token, client: Client::new(), child }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A call with the token; (status, JSON body or Null).
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req =
            self.client.request(method, self.url(path)).header("Authorization", format!("Token {}", self.token));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(Method::PATCH, path, Some(body)).await
    }

    async fn control(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.post(path, body).await;
        assert_eq!(status, 200, "{path}: {v}");
        v
    }

    /// A participant (a new one when None) reserves a place and starts.
    pub async fn arrive(&self, study_id: &str, participant: Option<&str>) -> Arrival {
        let v =
            self.control(&format!("/_fake/studies/{study_id}/arrivals"), json!({"participant_id": participant})).await;
        Arrival {
            participant_id: v["participant_id"].as_str().unwrap().into(),
            submission_id: v["submission_id"].as_str().unwrap().into(),
            study_url: v["study_url"].as_str().unwrap().into(),
        }
    }

    /// An arrival that may be refused: (status, body).
    pub async fn try_arrive(&self, study_id: &str, participant: Option<&str>) -> (u16, Value) {
        self.post(&format!("/_fake/studies/{study_id}/arrivals"), json!({"participant_id": participant})).await
    }

    /// Submits with a completion code, or without one (None).
    pub async fn submit(&self, submission_id: &str, code: Option<&str>) -> Value {
        self.control(&format!("/_fake/submissions/{submission_id}/submit"), json!({"completion_code": code})).await
    }

    pub async fn return_(&self, submission_id: &str) -> Value {
        self.control(&format!("/_fake/submissions/{submission_id}/return"), json!({})).await
    }

    pub async fn timeout(&self, submission_id: &str) -> Value {
        self.control(&format!("/_fake/submissions/{submission_id}/timeout"), json!({})).await
    }

    /// The next `times` calls of `method` to paths starting with `path` (`*` for one segment) get `fault`.
    pub async fn fault(&self, method: &str, path: &str, fault: &str, times: u32) {
        self.control("/_fake/faults", json!({"method": method, "path": path, "fault": fault, "times": times})).await;
    }

    /// A fault rule as the control API takes it (e.g. with `delay_ms` for a timeout).
    pub async fn fault_with(&self, rule: Value) {
        self.control("/_fake/faults", rule).await;
    }

    pub async fn clear_faults(&self) {
        let (status, _) = self.call(Method::DELETE, "/_fake/faults", None).await;
        assert_eq!(status, 204);
    }

    /// Runs pending asynchronous work (bulk approvals, payments, webhook deliveries) now.
    pub async fn tick(&self) -> Value {
        self.control("/_fake/tick", json!({})).await
    }

    /// Ticks until the fake's first submission is approved (30 s at most),
    /// running `between` (a sync, say) before each look.
    pub async fn until_first_approved<F: std::future::Future<Output = ()>>(&self, mut between: impl FnMut() -> F) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            between().await;
            self.tick().await;
            let st = self.state().await;
            if st["submissions"][0]["status"] == "APPROVED" {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "not approved: {}", st["submissions"][0]);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    pub async fn state(&self) -> Value {
        let (status, v) = self.get("/_fake/state").await;
        assert_eq!(status, 200);
        v
    }

    pub async fn webhooks(&self, behaviour: Value) -> Value {
        self.control("/_fake/webhooks", behaviour).await
    }

    /// A draft as hardneg would make it: the three placeholders, a code per outcome.
    pub fn draft(places: u32) -> Value {
        json!({
            "name": "Which caption fits?", "internal_name": "hardneg study 7",
            "description": "Pick the caption that fits each image.",
            "external_study_url": "http://127.0.0.1:9/join/t?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {"code": "DONE1", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]},
                {"code": "AUTO1", "code_type": "OTHER", "actions": [{"action": "AUTOMATICALLY_APPROVE"}]},
                {"code": "SCREEN1", "code_type": "SCREENED_OUT",
                 "actions": [{"action": "REQUEST_RETURN", "return_reason": "did not pass the comprehension check"}]}
            ],
            "total_available_places": places, "estimated_completion_time": 10, "maximum_allowed_time": 40,
            "reward": 150, "device_compatibility": ["desktop", "mobile"], "metadata": "{\"hardneg_study\": 7}"
        })
    }

    /// A published study with `places` places; its id.
    pub async fn published_study(&self, places: u32) -> String {
        let (status, study) = self.post("/api/v1/studies/", FakeProlific::draft(places)).await;
        assert_eq!(status, 201, "{study}");
        let id = study["id"].as_str().unwrap().to_string();
        let (status, v) = self.post(&format!("/api/v1/studies/{id}/transition/"), json!({"action": "PUBLISH"})).await;
        assert_eq!(status, 200, "{v}");
        id
    }
}

impl Drop for FakeProlific {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields a 400 names, from the reference's envelope or, where the
/// reference gives the operation a bare `ErrorDetail`, from that.
pub fn refused_fields(body: &Value) -> Vec<String> {
    let detail = body.get("error").unwrap_or(body);
    detail["detail"].as_object().map(|d| d.keys().cloned().collect()).unwrap_or_default()
}
