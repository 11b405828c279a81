//! The pages' Content-Security-Policy. Scripts run only from the app's own
//! origin or with this response's nonce (Leptos puts it on its hydration
//! script and streaming scripts), never inline otherwise; the wasm client
//! needs `'wasm-unsafe-eval'` to be compiled. Nothing may frame the pages,
//! and forms post only to the app.
use axum::http::{header, HeaderValue};

pub fn policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; img-src 'self' data:; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
    )
}

/// Sets the policy on the page being rendered, with the nonce Leptos made
/// for it. Called by the shell, before its first chunk is sent.
pub fn set_on_page() {
    let (Some(nonce), Some(res)) =
        (leptos::nonce::use_nonce(), leptos::prelude::use_context::<leptos_axum::ResponseOptions>())
    else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&policy(&nonce)) {
        res.insert_header(header::CONTENT_SECURITY_POLICY, value);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scripts_need_the_nonce_and_nothing_inline_runs_without_it() {
        let p = super::policy("abc");
        let script = p.split(';').find(|d| d.trim().starts_with("script-src")).unwrap();
        assert!(script.contains("'nonce-abc'") && script.contains("'wasm-unsafe-eval'"), "{p}");
        assert!(!p.contains("unsafe-inline") && !p.contains("'unsafe-eval'"), "{p}");
        assert!(p.contains("frame-ancestors 'none'") && p.contains("base-uri 'none'"), "{p}");
        let plain = crate::ui_kit::page::WITHOUT_INLINE_SCRIPTS;
        assert_eq!(plain, p.replace(" 'nonce-abc'", ""), "the same policy, no nonce");
    }
}
