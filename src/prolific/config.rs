//! Where hardneg reaches Prolific and with what token: the token only from
//! `HARDNEG_PROLIFIC_TOKEN` or a file only its owner can read
//! (`HARDNEG_PROLIFIC_TOKEN_FILE`); never stored, logged, shown or put in an
//! error ([`Token`] redacts itself). `HARDNEG_PROLIFIC_URL` overrides the API base.
use std::path::Path;

pub const DEFAULT_BASE: &str = "https://api.prolific.com";
pub const TOKEN_ENV: &str = "HARDNEG_PROLIFIC_TOKEN";
pub const TOKEN_FILE_ENV: &str = "HARDNEG_PROLIFIC_TOKEN_FILE";
pub const URL_ENV: &str = "HARDNEG_PROLIFIC_URL";
pub const WEBHOOK_SECRET_ENV: &str = "HARDNEG_PROLIFIC_WEBHOOK_SECRET";
pub const WEBHOOK_SECRET_FILE_ENV: &str = "HARDNEG_PROLIFIC_WEBHOOK_SECRET_FILE";

/// A secret (the API token, the webhook secret): its Debug and Display
/// never show it; only [`Secret::expose`] does, where a header is built.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    /// The secret itself: for the Authorization header or the HMAC key only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(redacted)")
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The API's origin, without a trailing slash.
    pub base: String,
    pub token: Secret,
}

/// Reads the configuration from the environment; None when no token is given.
pub fn from_env() -> Result<Option<Config>, String> {
    let token = secret(TOKEN_ENV, TOKEN_FILE_ENV)?;
    let base = std::env::var(URL_ENV).ok().filter(|u| !u.trim().is_empty());
    let base = base.unwrap_or_else(|| DEFAULT_BASE.to_string()).trim_end_matches('/').to_string();
    check_base(&base)?;
    Ok(token.map(|token| Config { base, token }))
}

/// An https:// URL, or http:// to this machine only (the fake, a tunnel):
/// the token has full rights and must not cross a network in the clear.
fn check_base(base: &str) -> Result<(), String> {
    if base.starts_with("https://") {
        return Ok(());
    }
    let Some(rest) = base.strip_prefix("http://") else {
        return Err(format!("{URL_ENV} must be an https:// URL (or http:// to this machine), not {base:?}"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    let loopback =
        host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match loopback {
        true => Ok(()),
        false => Err(format!(
            "{URL_ENV} is {base:?}: plain http:// is allowed only to this machine (localhost, 127.0.0.1, [::1]), \
             as the token would travel in the clear; use https://"
        )),
    }
}

/// The configuration, or an error that says how to give the token.
pub fn required() -> Result<Config, String> {
    from_env()?.ok_or_else(|| {
        format!("no Prolific token: set {TOKEN_ENV}, or {TOKEN_FILE_ENV} to a file only you can read (chmod 600)")
    })
}

/// The webhook secret, if one is configured.
pub fn webhook_secret() -> Result<Option<Secret>, String> {
    secret(WEBHOOK_SECRET_ENV, WEBHOOK_SECRET_FILE_ENV)
}

fn secret(env: &str, file_env: &str) -> Result<Option<Secret>, String> {
    if let Some(t) = std::env::var(env).ok().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
        return Ok(Some(Secret(t)));
    }
    match std::env::var_os(file_env) {
        Some(path) => read_secret_file(Path::new(&path)).map(Some),
        None => Ok(None),
    }
}

/// A secret from a file readable by its owner alone: a group- or
/// world-readable (or -writable) file is refused, and its content never
/// appears in the error.
pub fn read_secret_file(path: &Path) -> Result<Secret, String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("reading the token file {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("the token file {} is not a file", path.display()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "the token file {} can be read or written by others (mode {mode:o}): make it readable by its owner only \
             (chmod 600 {})",
            path.display(),
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading the token file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", path.display()));
    }
    Ok(Secret(token.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_secret_never_shows_itself() {
        let s = Secret::new("tok-3f9c-very-secret");
        assert!(!format!("{s:?}").contains("3f9c"));
        assert!(!format!("{s}").contains("3f9c"));
        let c = Config { base: DEFAULT_BASE.into(), token: s.clone() };
        assert!(!format!("{c:?}").contains("3f9c"), "{c:?}");
        assert_eq!(s.expose(), "tok-3f9c-very-secret");
    }

    #[test]
    fn plain_http_only_to_this_machine() {
        for ok in [
            "https://api.prolific.com",
            "https://10.0.0.5:8443",
            "http://127.0.0.1:8085",
            "http://127.9.9.9",
            "http://localhost:1/api",
            "http://[::1]:8085",
        ] {
            assert_eq!(check_base(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://api.prolific.com",
            "http://10.0.0.5:8085",
            "http://127.0.0.1.evil.com",
            "http://127.0.0.1@evil.com",
            "http://localhost.evil.com",
            "http://[::2]:80",
            "ftp://127.0.0.1",
            "api.prolific.com",
        ] {
            let e = check_base(bad).unwrap_err();
            assert!(e.contains(URL_ENV) && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn token_files_readable_by_others_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  tok-secret-1\n").unwrap();
        for mode in [0o644, 0o640, 0o604, 0o620, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = read_secret_file(&path).unwrap_err();
            assert!(e.contains("owner only") && e.contains(&format!("{mode:o}")), "{e}");
            assert!(!e.contains("tok-secret-1"));
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_secret_file(&path).unwrap().expose(), "tok-secret-1");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert!(read_secret_file(&path).is_ok());
        std::fs::write(dir.path().join("empty"), "\n").unwrap();
        std::fs::set_permissions(dir.path().join("empty"), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_secret_file(&dir.path().join("empty")).unwrap_err().contains("empty"));
        assert!(read_secret_file(&dir.path().join("missing")).is_err());
        assert!(read_secret_file(dir.path()).unwrap_err().contains("not a file"));
    }
}
