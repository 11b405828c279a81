//! Prolific's webhooks (docs/prolific.md, "Webhooks"): the signature
//! (HMAC-SHA256 with the subscription's secret over the timestamp and the
//! raw body) checked in constant time, stale timestamps refused, event ids
//! kept so a duplicate triggers nothing, and the payload used only to wake
//! the sync: never trusted as state.
use super::config::Secret;
use crate::error::ServiceError;
use sha2::{Digest, Sha256};
use sqlx::AnyPool;

/// The most a webhook body may be.
pub const MAX_BODY: usize = 64 * 1024;
/// A timestamp further than this from the server's clock is refused.
pub const MAX_SKEW_SECS: i64 = 300;
pub const SIGNATURE_HEADER: &str = "x-prolific-request-signature";
pub const TIMESTAMP_HEADER: &str = "x-prolific-request-timestamp";

/// HMAC-SHA256 (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[&[u8]]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    for m in message {
        inner.update(m);
    }
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Equal in constant time (for equal lengths; lengths are not secret).
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Checks a delivery: the timestamp is fresh and the signature (base64 or
/// hex of the HMAC over timestamp + body) is right.
pub fn verify(secret: &Secret, timestamp: &str, signature: &str, body: &[u8], now: i64) -> Result<(), &'static str> {
    let ts: i64 = timestamp.trim().parse().map_err(|_| "the timestamp is not a number of seconds")?;
    if (now - ts).abs() > MAX_SKEW_SECS {
        return Err("the timestamp is stale");
    }
    let mac = hmac_sha256(secret.expose().as_bytes(), &[timestamp.trim().as_bytes(), body]);
    let given = signature.trim().trim_start_matches("sha256=");
    let ok = same(given.as_bytes(), base64(&mac).as_bytes()) || same(given.as_bytes(), hex::encode(mac).as_bytes());
    if ok {
        Ok(())
    } else {
        Err("the signature does not match")
    }
}

/// The delivery's event id (its `id` or `event_id`, else the body's hash),
/// recorded; false when it was seen before (a duplicate).
pub async fn first_delivery(db: &AnyPool, body: &[u8]) -> Result<bool, ServiceError> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let id = ["event_id", "id"]
        .iter()
        .find_map(|k| v.get(k).and_then(|x| x.as_str()).map(str::to_string))
        .unwrap_or_else(|| crate::store::images::sha256_hex(body));
    let new = sqlx::query(
        "INSERT INTO prolific_webhook_events (event_id, received_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING",
    )
    .bind(id)
    .bind(crate::store::db::now_secs())
    .execute(db)
    .await?;
    Ok(new.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let mac = hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(hex::encode(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        // Test case 6: a key longer than the block.
        let mac = hmac_sha256(&[0xaa; 131], &[b"Test Using Larger Than Block-Size Key - Hash Key First"]);
        assert_eq!(hex::encode(mac), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }

    #[test]
    fn base64_and_constant_time_equality() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }

    #[test]
    fn deliveries_are_checked() {
        let secret = Secret::new("whsec");
        let body = br#"{"event_type":"submission.status.change"}"#;
        let mac = hmac_sha256(b"whsec", &[b"1700000000", body]);
        assert_eq!(verify(&secret, "1700000000", &base64(&mac), body, 1_700_000_010), Ok(()));
        assert_eq!(verify(&secret, "1700000000", &hex::encode(mac), body, 1_700_000_010), Ok(()));
        assert_eq!(verify(&secret, "1700000000", &base64(&mac), body, 1_700_000_301), Err("the timestamp is stale"));
        assert_eq!(verify(&secret, "1700000000", &base64(&mac), body, 1_699_999_600), Err("the timestamp is stale"));
        assert!(verify(&secret, "1700000000", &base64(&mac), b"{}", 1_700_000_000).is_err(), "another body");
        assert!(verify(&secret, "1700000001", &base64(&mac), body, 1_700_000_000).is_err(), "another timestamp");
        assert!(verify(&Secret::new("other"), "1700000000", &base64(&mac), body, 1_700_000_000).is_err());
        assert!(verify(&secret, "soon", &base64(&mac), body, 0).is_err());
    }
}
