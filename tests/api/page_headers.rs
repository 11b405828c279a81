//! The pages' Content-Security-Policy (issue 10): scripts need this
//! response's nonce, and the page's own hydration script carries it.
use crate::helpers::TestApp;

/// The CSP of a page and the page, as an anonymous visitor.
async fn page(app: &TestApp, path: &str) -> (String, String) {
    let res = TestApp::client().get(app.url(path)).send().await.unwrap();
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let csp = res.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_string());
    (csp.unwrap_or_else(|| panic!("no Content-Security-Policy on {path}")), res.text().await.unwrap())
}

fn directive<'a>(csp: &'a str, name: &str) -> &'a str {
    csp.split(';').map(str::trim).find(|d| d.starts_with(name)).unwrap_or_else(|| panic!("no {name} in {csp}"))
}

#[tokio::test]
async fn pages_carry_a_nonce_based_content_security_policy() {
    let app = TestApp::spawn();
    let (csp, html) = page(&app, "/login").await;
    let script = directive(&csp, "script-src");
    assert!(!script.contains("unsafe-inline"), "{csp}");
    assert!(script.contains("'wasm-unsafe-eval'"), "{csp}");
    for d in [
        "default-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ] {
        assert_eq!(directive(&csp, d.split(' ').next().unwrap()), d, "{csp}");
    }
    let nonce = script.split("'nonce-").nth(1).and_then(|n| n.split('\'').next()).expect("a nonce source");
    assert!(nonce.len() >= 16, "{nonce}");
    // Every inline script of the page carries this response's nonce.
    let scripts: Vec<&str> = html.split("<script").skip(1).map(|s| s.split('>').next().unwrap()).collect();
    assert!(!scripts.is_empty(), "the hydration script");
    for attrs in &scripts {
        assert!(attrs.contains(&format!("nonce=\"{nonce}\"")), "a script without the nonce: <script{attrs}>");
    }
    // A fresh nonce per response; an unknown page (the fallback) has one too.
    let (again, _) = page(&app, "/login").await;
    assert_ne!(again, csp);
    let (missing, _) = page(&app, "/no-such-page").await;
    assert!(directive(&missing, "script-src").contains("'nonce-"), "{missing}");
    // Pages rendered outside Leptos (a join link's page, here an unknown
    // one) carry the policy too, without a nonce: they run no inline script.
    let (join, html) = page(&app, "/join/0123456789abcdef0123456789abcdef?PROLIFIC_PID=x").await;
    assert_eq!(directive(&join, "script-src"), "script-src 'self' 'wasm-unsafe-eval'", "{join}");
    assert_eq!(directive(&join, "frame-ancestors"), "frame-ancestors 'none'", "{join}");
    assert!(!html.contains("<script>"), "no inline script: {html}");
}
