//! Webhook deliveries: each event POSTed to its subscription's `target_url`
//! with Prolific's signature headers, over a minimal HTTP/1.1 client (plain
//! http only: the fake serves tests and demos on one machine).
//!
//! Signature: `X-Prolific-Request-Timestamp` is the Unix time in seconds;
//! `X-Prolific-Request-Signature` is base64(HMAC-SHA256(workspace secret,
//! timestamp + raw body)).
use super::hooks::Attempt;
use super::Fake;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::seq::SliceRandom;
use rand::Rng;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const SIGNATURE_HEADER: &str = "X-Prolific-Request-Signature";
pub const TIMESTAMP_HEADER: &str = "X-Prolific-Request-Timestamp";

/// The signature of `body` sent at `timestamp` (Unix seconds, as sent in the header).
pub fn sign(secret: &str, timestamp: &str, body: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(timestamp.as_bytes());
    mac.update(body.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Sends every due event (all pending ones when `all`), each at least once:
/// in a random order when asked, a second time with the set probability.
/// Returns how many deliveries were attempted.
pub async fn deliver_due(fake: &Fake, all: bool) -> usize {
    let (mut due, behaviour) = {
        let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.hooks.due(all), state.hooks.behaviour)
    };
    if behaviour.reorder {
        due.shuffle(&mut rand::thread_rng());
    }
    let mut sent = 0;
    for attempt in &due {
        let result = post(attempt).await;
        let twice = matches!(result, Ok(s) if (200..300).contains(&s))
            && rand::thread_rng().gen_bool(behaviour.duplicate.clamp(0.0, 1.0));
        // The duplicate goes out before the event is marked done, so a tick that waits for it sees both.
        let again = if twice { Some(post(attempt).await) } else { None };
        let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
        state.hooks.record(attempt, false, result);
        sent += 1;
        if let Some(again) = again {
            state.hooks.record(attempt, true, again);
            sent += 1;
        }
    }
    sent
}

/// Waits (up to 15 s) until no delivery is in flight, e.g. one the timer started before a tick.
pub async fn settle(fake: &Fake) {
    for _ in 0..1500 {
        if !fake.state.lock().unwrap_or_else(|e| e.into_inner()).hooks.events.iter().any(|e| e.in_flight) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One signed POST; Ok(status) when an answer came, Err when none did.
async fn post(a: &Attempt) -> Result<u16, String> {
    let rest = a.url.strip_prefix("http://").ok_or("only http:// targets are delivered by the fake")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let timestamp = time::OffsetDateTime::now_utc().unix_timestamp().to_string();
    let signature = sign(&a.secret, &timestamp, &a.body);
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         {SIGNATURE_HEADER}: {signature}\r\n{TIMESTAMP_HEADER}: {timestamp}\r\nConnection: close\r\n\r\n{}",
        a.body.len(),
        a.body
    );
    let answer = tokio::time::timeout(Duration::from_secs(10), exchange(authority, &request)).await;
    answer.map_err(|_| "timed out".to_string())?
}

/// Sends the request and reads the status line of the answer.
async fn exchange(authority: &str, request: &str) -> Result<u16, String> {
    let mut stream = tokio::net::TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    stream.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut head = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 4096 {
        let n = stream.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    line.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).ok_or_else(|| "no HTTP status line".to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_signature_is_base64_hmac_sha256_of_timestamp_and_body() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let sig = super::sign("Jefe", "what do ya want ", "for nothing?");
        assert_eq!(sig, "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
    }
}
