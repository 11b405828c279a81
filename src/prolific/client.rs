//! One call to Prolific's API, journaled: method, path, status, time (and
//! the outbox row it served), never the token or a body. Retrying is the
//! caller's: the outbox decides what may be sent again.
use super::config::Config;
use crate::error::ServiceError;
use serde_json::Value;
use sqlx::AnyPool;
use std::time::{Duration, Instant};

/// The longest hardneg waits for one answer.
pub fn call_timeout() -> Duration {
    let ms = std::env::var("HARDNEG_PROLIFIC_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    Duration::from_millis(ms)
}

#[derive(Clone)]
pub struct Client {
    config: Config,
    http: reqwest::Client,
    journal: AnyPool,
}

/// What came back from one call.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    /// `Retry-After`, in ms, when Prolific sent one.
    pub retry_after_ms: Option<u64>,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
    /// Prolific's error message (its ErrorDetail's title and detail, field
    /// errors as "field: why"), or the body in words: a page a gateway sent
    /// instead is named, not shown (audit AS: HTML on the research page).
    pub fn message(&self) -> String {
        let e = self.body.get("error").unwrap_or(&self.body);
        let part = |k: &str| match e.get(k) {
            Some(Value::Null) | None => None,
            Some(v) => Some(plain(v)),
        };
        let said = match (part("title"), part("detail")) {
            (Some(t), Some(d)) => format!("{t}: {d}"),
            (Some(t), None) => t,
            (None, Some(d)) => d,
            (None, None) => match &self.body {
                Value::String(s) if s.trim_start().starts_with('<') => {
                    format!("HTTP {}: a web page, not Prolific's answer (a gateway or proxy on the way)", self.status)
                }
                Value::Null => format!("HTTP {} with no body", self.status),
                body => plain(body),
            },
        };
        said.chars().take(300).collect()
    }
}

/// A JSON value as words: strings as they are, lists joined, objects as "key: value".
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        Value::Object(fields) => {
            fields.iter().map(|(k, v)| format!("{k}: {}", plain(v))).collect::<Vec<_>>().join("; ")
        }
        other => other.to_string(),
    }
}

/// The most of one answer read (Prolific's largest page, 500 submissions,
/// is well under a MiB).
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// A call that got no answer: a network error, a time-out, an answer past
/// [`MAX_ANSWER_BYTES`]. The request may have been applied.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no answer from Prolific to {method} {path}: {reason}")]
pub struct NoAnswer {
    pub method: String,
    pub path: String,
    pub reason: String,
}

impl Client {
    pub fn new(config: Config, journal: AnyPool) -> Result<Client, String> {
        let http = reqwest::Client::builder()
            .timeout(call_timeout())
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("hardneg/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("building the HTTP client: {e}"))?;
        Ok(Client { config, http, journal })
    }

    pub fn base(&self) -> &str {
        &self.config.base
    }

    pub fn db(&self) -> &AnyPool {
        &self.journal
    }

    /// Sends one request (JSON body or none) and journals it.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        outbox: Option<i64>,
    ) -> Result<Reply, NoAnswer> {
        let url = format!("{}{}", self.config.base, path);
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut req = self
            .http
            .request(m, &url)
            .header("Authorization", format!("Token {}", self.config.token.expose()))
            .header("Accept", "application/json");
        match body {
            Some(b) => req = req.json(b),
            // A POST without a body (the bonus pay) says so: some front ends
            // answer 411 to one without Content-Length (RFC 9110 §8.6), and
            // hyper sends none for an empty body.
            None if matches!(method, "POST" | "PUT" | "PATCH") => {
                req = req.header(reqwest::header::CONTENT_LENGTH, "0")
            }
            None => {}
        }
        let started = Instant::now();
        let result = async {
            let mut res = req.send().await.map_err(|e| without_url(&e))?;
            let status = res.status().as_u16();
            let retry_after_ms =
                res.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(retry_after_ms);
            // Read up to a bound: an answer past it (no page of Prolific's
            // comes near) is taken as lost, to be read back, never held whole.
            let mut bytes = Vec::new();
            while let Some(chunk) = res.chunk().await.map_err(|e| without_url(&e))? {
                if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(format!("the answer was longer than {} MiB", MAX_ANSWER_BYTES >> 20));
                }
                bytes.extend_from_slice(&chunk);
            }
            let body = if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
            };
            Ok::<_, String>(Reply { status, body, retry_after_ms })
        }
        .await;
        let millis = started.elapsed().as_millis() as i64;
        // The journal names the path only: reqwest's errors carry the URL, never a header.
        let (status, error) = match &result {
            Ok(r) => (Some(r.status as i64), (!r.ok()).then(|| r.message())),
            Err(reason) => (None, Some(reason.clone())),
        };
        let journaled = sqlx::query(
            "INSERT INTO prolific_calls (at, method, path, status, millis, outbox_id, error)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(now_ms())
        .bind(method)
        .bind(path)
        .bind(status)
        .bind(millis)
        .bind(outbox)
        .bind(error)
        .execute(&self.journal)
        .await;
        if let Err(e) = journaled {
            tracing::warn!(error = %e, method, path, "journaling a Prolific call");
        }
        result.map_err(|reason| NoAnswer { method: method.into(), path: path.into(), reason })
    }

    /// A read (or a call safe to repeat). 429, 5xx and lost answers are
    /// tried again after a back-off with jitter; any other 4xx is not, and
    /// comes back as `Invalid` with Prolific's message; no answer after the
    /// last try is `Unavailable` (try again later).
    pub async fn expect(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, ServiceError> {
        self.expect_found(method, path, body)
            .await?
            .ok_or_else(|| ServiceError::Invalid(format!("Prolific answered {method} {path} with 404: not found")))
    }

    /// As `expect`, with a 404 read as None (a page past the last one).
    pub async fn expect_found(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Option<Value>, ServiceError> {
        const TRIES: u32 = 5;
        for attempt in 1..=TRIES {
            let retry_after = match self.call(method, path, body, None).await {
                Ok(reply) if reply.ok() => return Ok(Some(reply.body)),
                Ok(reply) if reply.status == 404 => return Ok(None),
                Ok(reply) if reply.status != 429 && reply.status < 500 => {
                    return Err(ServiceError::Invalid(format!(
                        "Prolific answered {method} {path} with {}: {}",
                        reply.status,
                        reply.message()
                    )))
                }
                Ok(reply) if attempt == TRIES => {
                    return Err(ServiceError::Unavailable(format!(
                        "Prolific answered {method} {path} with {} {TRIES} times: {}; try again later",
                        reply.status,
                        reply.message()
                    )))
                }
                Ok(reply) => reply.retry_after_ms,
                Err(e) if attempt == TRIES => {
                    // The socket's own words (an os error number) go to the log, not the page.
                    tracing::warn!(method, path, error = %e, "Prolific could not be reached");
                    return Err(ServiceError::Unavailable(format!(
                        "Prolific did not answer ({TRIES} tries; the server's log names the request): try again in a minute"
                    )));
                }
                Err(_) => None,
            };
            let delay = backoff().delay_ms(attempt, rand::random::<f64>(), retry_after);
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        unreachable!("the last try returns")
    }
}

fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the answer broke off"
    } else {
        "the connection failed"
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {cause}")
    }
}

/// Milliseconds since the epoch (the outbox's and the journal's clock).
pub fn now_ms() -> i64 {
    crate::store::db::now_millis()
}

/// The back-off between tries (`HARDNEG_PROLIFIC_BACKOFF_MS` sets its base).
pub fn backoff() -> crate::domain::prolific::backoff::Backoff {
    let base_ms = std::env::var("HARDNEG_PROLIFIC_BACKOFF_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    crate::domain::prolific::backoff::Backoff { base_ms, cap_ms: (base_ms * 120).max(1) }
}

/// `Retry-After` in either form HTTP allows: seconds, or an HTTP-date.
fn retry_after_ms(v: &str) -> Option<u64> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs.saturating_mul(1000));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).map_or(0, |d| d.as_millis() as u64))
}

#[cfg(test)]
mod tests {
    use super::{retry_after_ms, Reply};
    use serde_json::json;

    #[test]
    fn an_answer_reads_as_words() {
        let reply = |status, body| Reply { status, body, retry_after_ms: None };
        let refused = json!({"error": {"title": "Bad Request", "detail": {"action": ["START is not available"]}}});
        assert_eq!(reply(400, refused).message(), "Bad Request: action: START is not available");
        let page = json!("<html><body><h1>502 Bad Gateway</h1></body></html>");
        assert_eq!(
            reply(502, page).message(),
            "HTTP 502: a web page, not Prolific's answer (a gateway or proxy on the way)"
        );
        assert_eq!(
            reply(400, json!({"name": ["required"], "reward": ["too low"]})).message(),
            "name: required; reward: too low"
        );
        assert_eq!(reply(404, json!({"error": {"title": "Not found"}})).message(), "Not found");
        assert_eq!(reply(500, json!("x".repeat(400))).message().len(), 300);
    }
    use std::time::{Duration, SystemTime};

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(retry_after_ms(" 5 "), Some(5000));
        let ahead = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let ms = retry_after_ms(&ahead).unwrap();
        assert!((28_000..=30_000).contains(&ms), "{ms}");
        assert_eq!(retry_after_ms(&httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30))), Some(0));
        assert_eq!(retry_after_ms("soon"), None);
    }
}
