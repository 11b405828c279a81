//! The browser client's files under `/pkg`: their content-hashed names, the
//! cache policy, precompressed copies, and on-the-fly compression of pages
//! and API answers.
use axum::body::Body;
use axum::http::{header, Extensions, HeaderMap, HeaderValue, Response, StatusCode, Version};
use axum::response::IntoResponse;
use axum::Router;
use std::path::Path;
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;

/// The client's file name stem: `hardneg.<hash>` as written by
/// scripts/build-site.sh into `<site>/output-name`, else plain `hardneg`
/// (a site built before hashing, or by hand).
pub fn output_name(site_dir: &Path) -> String {
    let written = std::fs::read_to_string(site_dir.join("output-name")).unwrap_or_default();
    let name = written.trim();
    let plausible = name.starts_with("hardneg") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    if plausible {
        name.to_string()
    } else {
        "hardneg".to_string()
    }
}

/// A file name carrying a content hash (`name.<16+ hex digits>…`) never
/// changes content, so it may be cached for a year; anything else is
/// revalidated on every use.
pub fn cache_control(path: &str) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let hashed = file.split(['.', '_']).any(|part| part.len() >= 16 && part.chars().all(|c| c.is_ascii_hexdigit()));
    if hashed {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// `/pkg`: files as built, or their `.br` / `.gz` copies when the browser
/// accepts them, with [`cache_control`] on every successful answer.
pub fn pkg_service(pkg_dir: &Path) -> Router {
    let files = ServeDir::new(pkg_dir).precompressed_br().precompressed_gzip();
    Router::new()
        .fallback_service(files)
        // A name no build writes is a 404 before the file system is asked: a
        // 300-character name was a 500 and an ERROR line per request.
        .layer(axum::middleware::from_fn(|req: axum::extract::Request, next: axum::middleware::Next| async move {
            match site_file_name(req.uri().path()) {
                true => next.run(req).await,
                false => StatusCode::NOT_FOUND.into_response(),
            }
        }))
        .layer(axum::middleware::map_response(|uri: axum::http::Uri, mut res: Response<Body>| async move {
            let policy = if res.status() == StatusCode::OK || res.status() == StatusCode::NOT_MODIFIED {
                cache_control(uri.path())
            } else {
                "no-cache"
            };
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
            res
        }))
}

/// Whether `path` (under `/pkg`) can name a file the build writes: one
/// short segment of letters, digits, `.`, `_` and `-`.
fn site_file_name(path: &str) -> bool {
    let name = path.strip_prefix('/').unwrap_or(path);
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Gzip for pages and JSON answers only: the client files come precompressed,
/// and images and exports gain little or are streamed with a length.
pub fn compression() -> CompressionLayer<impl Predicate> {
    let textual = |_: StatusCode, _: Version, headers: &HeaderMap, _: &Extensions| {
        headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/json"))
    };
    CompressionLayer::new().compress_when(DefaultPredicate::new().and(textual))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_content_hashed_names_are_immutable() {
        let year = "public, max-age=31536000, immutable";
        assert_eq!(cache_control("/hardneg.0123456789abcdef.js"), year);
        assert_eq!(cache_control("/hardneg.0123456789abcdef_bg.wasm"), year);
        assert_eq!(cache_control("/pkg/hardneg.0123456789abcdef.css"), year);
        assert_eq!(cache_control("/hardneg.js"), "no-cache");
        assert_eq!(cache_control("/hardneg_bg.wasm"), "no-cache");
        assert_eq!(cache_control("/hardneg.0123abc.js"), "no-cache", "too short to be a hash");
        assert_eq!(cache_control("/hardneg.0123456789abcdeg.js"), "no-cache", "not hex");
    }

    #[test]
    fn only_names_a_build_can_write_reach_the_file_system() {
        assert!(site_file_name("/hardneg.0123456789abcdef_bg.wasm"));
        assert!(site_file_name("/hardneg.0123456789abcdef.css.br"));
        for bad in ["/", "", "/.hidden", "/a/b.js", "/..%2Fx", "/x%00", &format!("/{}", "a".repeat(300))] {
            assert!(!site_file_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_output_name_comes_from_the_build_or_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(output_name(dir.path()), "hardneg");
        std::fs::write(dir.path().join("output-name"), "hardneg.0123456789abcdef\n").unwrap();
        assert_eq!(output_name(dir.path()), "hardneg.0123456789abcdef");
        std::fs::write(dir.path().join("output-name"), "../../etc/passwd").unwrap();
        assert_eq!(output_name(dir.path()), "hardneg");
    }
}
