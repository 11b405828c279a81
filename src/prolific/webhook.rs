//! Prolific's webhooks (docs/prolific.md, "Webhooks"): the signature
//! (HMAC-SHA256 with the subscription's secret over the timestamp and the
//! raw body) checked in constant time, stale timestamps refused, event ids
//! kept so a duplicate triggers nothing, and the payload used only to wake
//! the sync: never trusted as state.
use super::config::Secret;
use crate::error::ServiceError;
use base64::Engine;
use hmac::Mac;
use sqlx::AnyPool;

/// The most a webhook body may be.
pub const MAX_BODY: usize = 64 * 1024;
/// A timestamp further than this from the server's clock is refused.
pub const MAX_SKEW_SECS: i64 = 300;
pub const SIGNATURE_HEADER: &str = "x-prolific-request-signature";
pub const TIMESTAMP_HEADER: &str = "x-prolific-request-timestamp";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn mac_of(key: &[u8], message: &[&[u8]]) -> HmacSha256 {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    for m in message {
        mac.update(m);
    }
    mac
}

/// HMAC-SHA256 (RFC 2104) of the message's parts, one after another.
pub fn hmac_sha256(key: &[u8], message: &[&[u8]]) -> [u8; 32] {
    mac_of(key, message).finalize().into_bytes().into()
}

/// Standard base64, with padding (how Prolific sends the signature).
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Checks a delivery: the timestamp is fresh and the signature (base64 or
/// hex of the HMAC over timestamp + body) is right, compared in constant time.
pub fn verify(secret: &Secret, timestamp: &str, signature: &str, body: &[u8], now: i64) -> Result<(), &'static str> {
    let ts: i64 = timestamp.trim().parse().map_err(|_| "the timestamp is not a number of seconds")?;
    // Checked: any i64 may come from the open internet (i64::MIN overflowed).
    if now.checked_sub(ts).and_then(i64::checked_abs).is_none_or(|skew| skew > MAX_SKEW_SECS) {
        return Err("the timestamp is stale");
    }
    let given = signature.trim().trim_start_matches("sha256=");
    let given = base64::engine::general_purpose::STANDARD
        .decode(given)
        .ok()
        .filter(|g| g.len() == 32)
        .or_else(|| hex::decode(given).ok())
        .ok_or("the signature is neither base64 nor hex")?;
    mac_of(secret.expose().as_bytes(), &[timestamp.trim().as_bytes(), body])
        .verify_slice(&given)
        .map_err(|_| "the signature does not match")
}

/// An event id longer than this is stored as its hash (Prolific's are ids of 24 to 36 characters).
pub const MAX_EVENT_ID: usize = 64;

/// What a delivery is recorded as: its `event_id` or `id`, else the body's
/// SHA-256; an id over [`MAX_EVENT_ID`] bytes as its own SHA-256. A body that
/// is not a JSON object is refused (422), signed or not.
pub fn event_key(body: &[u8]) -> Result<String, ServiceError> {
    let v = crate::domain::json_object::parse_object(body)
        .map_err(|e| ServiceError::Invalid(format!("a webhook body must be a JSON object: {e}")))?;
    let id = ["event_id", "id"].iter().find_map(|k| v.get(*k).and_then(|x| x.as_str()));
    Ok(match id {
        Some(id) if id.len() <= MAX_EVENT_ID => id.to_string(),
        Some(long) => format!("sha256:{}", crate::store::images::sha256_hex(long.as_bytes())),
        None => crate::store::images::sha256_hex(body),
    })
}

/// The delivery's key ([`event_key`]) recorded; false when it was seen before (a duplicate).
pub async fn first_delivery(db: &AnyPool, body: &[u8]) -> Result<bool, ServiceError> {
    let id = event_key(body)?;
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
    fn base64_is_standard_and_padded() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn a_delivery_is_keyed_by_a_short_event_id() {
        assert_eq!(event_key(br#"{"event_id": "65f1a2", "id": "x"}"#).unwrap(), "65f1a2");
        assert_eq!(event_key(br#"{"id": "sub-1"}"#).unwrap(), "sub-1");
        let body = br#"{"event_type": "study.status.change"}"#;
        assert_eq!(event_key(body).unwrap(), crate::store::images::sha256_hex(body));
        let long = format!(r#"{{"event_id": "{}"}}"#, "e".repeat(60_000));
        let key = event_key(long.as_bytes()).unwrap();
        assert!(key.starts_with("sha256:") && key.len() == 71, "{key}");
        for not_object in [&b"not json"[..], b"[1]", b"", br#"{"id": "a", "id": "b"}"#] {
            let e = event_key(not_object).unwrap_err();
            assert!(matches!(&e, ServiceError::Invalid(m) if m.starts_with("a webhook body must be a JSON object")));
        }
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
        // Any number a stranger sends: stale, never an overflow.
        for ts in [i64::MIN.to_string(), i64::MAX.to_string(), "-1".into()] {
            assert_eq!(verify(&secret, &ts, &base64(&mac), body, 1_700_000_000), Err("the timestamp is stale"), "{ts}");
        }
        assert_eq!(verify(&secret, &i64::MIN.to_string(), "x", body, -5), Err("the timestamp is stale"));
        assert!(verify(&secret, "1700000000", &base64(&mac), b"{}", 1_700_000_000).is_err(), "another body");
        assert!(verify(&secret, "1700000001", &base64(&mac), body, 1_700_000_000).is_err(), "another timestamp");
        assert!(verify(&Secret::new("other"), "1700000000", &base64(&mac), body, 1_700_000_000).is_err());
        assert!(verify(&secret, "soon", &base64(&mac), body, 0).is_err());
        assert_eq!(
            verify(&secret, "1700000000", "not a signature!", body, 1_700_000_000),
            Err("the signature is neither base64 nor hex")
        );
        assert!(verify(&secret, "1700000000", &base64(&mac[..31]), body, 1_700_000_000).is_err(), "a short one");
    }
}
