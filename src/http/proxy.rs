//! Who the client is and whether it came over HTTPS. Directly, that is the
//! TCP peer and never HTTPS; behind a reverse proxy, with `--trust-proxy`,
//! the proxy's `X-Forwarded-For` and `X-Forwarded-Proto` say. Without the
//! flag both headers are ignored: anyone can send them, and honouring
//! X-Forwarded-For would let an attacker pick a fresh address for the login
//! backoff on every try.
use crate::login_limits::ClientAddr;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use std::net::{IpAddr, SocketAddr};

/// Whether `X-Forwarded-*` come from a proxy in front of the server.
#[derive(Clone, Copy)]
pub struct TrustProxy(pub bool);

/// Inserts [`ClientAddr`]; behind a trusted proxy that said HTTPS, marks the
/// response's cookies `Secure` (as `--secure-cookies` does for every one).
pub async fn forwarded(State(trust): State<TrustProxy>, mut req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let peer = peer.unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let (client, https) = match trust.0 {
        true => (forwarded_for(req.headers()).unwrap_or(peer), forwarded_https(req.headers())),
        false => (peer, false),
    };
    req.extensions_mut().insert(ClientAddr(client));
    let mut res = next.run(req).await;
    if https {
        secure_cookies(res.headers_mut());
    }
    res
}

/// The right-most entry of header `name` (all its headers in order): the
/// one the proxy itself added. Earlier ones are the client's claims.
fn last_entry<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let last = headers.get_all(name).iter().next_back()?.to_str().ok()?;
    Some(last.rsplit(',').next()?.trim())
}

/// The right-most `X-Forwarded-For` address; an optional port
/// (`1.2.3.4:5`, `[::1]:5`) is dropped.
fn forwarded_for(headers: &HeaderMap) -> Option<IpAddr> {
    let hop = last_entry(headers, "x-forwarded-for")?;
    hop.parse::<IpAddr>().ok().or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// `X-Forwarded-Proto: https`, right-most as above.
fn forwarded_https(headers: &HeaderMap) -> bool {
    last_entry(headers, "x-forwarded-proto").is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

fn secure_cookies(headers: &mut HeaderMap) {
    let cookies: Vec<HeaderValue> = headers.get_all(header::SET_COOKIE).iter().cloned().collect();
    if cookies.is_empty() {
        return;
    }
    headers.remove(header::SET_COOKIE);
    for cookie in cookies {
        let secure = cookie.to_str().is_ok_and(|c| c.split(';').any(|a| a.trim().eq_ignore_ascii_case("secure")));
        let cookie = match secure {
            true => cookie,
            false => {
                let mut bytes = cookie.as_bytes().to_vec();
                bytes.extend_from_slice(b"; Secure");
                HeaderValue::from_bytes(&bytes).unwrap_or(cookie)
            }
        };
        headers.append(header::SET_COOKIE, cookie);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_proxy_added_address_is_the_right_most() {
        let h = headers(&[("x-forwarded-for", "6.6.6.6, 10.0.0.1"), ("x-forwarded-for", "1.2.3.4")]);
        assert_eq!(forwarded_for(&h), Some("1.2.3.4".parse().unwrap()));
        assert_eq!(
            forwarded_for(&headers(&[("x-forwarded-for", "9.9.9.9,[2001:db8::1]:443")])),
            "2001:db8::1".parse().ok()
        );
        assert_eq!(forwarded_for(&headers(&[("x-forwarded-for", "1.2.3.4, garbage")])), None);
        assert_eq!(forwarded_for(&HeaderMap::new()), None);
    }

    #[test]
    fn https_is_the_last_forwarded_proto() {
        assert!(forwarded_https(&headers(&[("x-forwarded-proto", "HTTPS")])));
        assert!(!forwarded_https(&headers(&[("x-forwarded-proto", "https, http")])));
        assert!(!forwarded_https(&HeaderMap::new()));
    }

    #[test]
    fn cookies_get_secure_once() {
        let mut h = headers(&[("set-cookie", "a=1; HttpOnly"), ("set-cookie", "b=2; Secure")]);
        secure_cookies(&mut h);
        let all: Vec<_> = h.get_all("set-cookie").iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(all, ["a=1; HttpOnly; Secure", "b=2; Secure"]);
    }
}
