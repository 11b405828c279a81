//! The formats of what a link carries and a participant is shown: join
//! tokens, completion codes, participant numbers and the platform's ids.
//! Random bytes come from the shell; this only shapes and checks them.

/// Random bytes in a join token: 128 bits, beyond guessing.
pub const TOKEN_BYTES: usize = 16;
pub const CODE_LEN: usize = 8;
pub const MAX_PLATFORM_ID: usize = 64;

const CODE_ALPHABET: &[u8; 36] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A URL-safe token: lowercase hex of the random bytes.
pub fn token_from_bytes(bytes: &[u8; TOKEN_BYTES]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a token in a URL must look like before the database is asked.
pub fn is_token(s: &str) -> bool {
    s.len() == 2 * TOKEN_BYTES && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// An 8-character code of A–Z and 0–9 (what Prolific matches submissions by).
pub fn code_from_bytes(bytes: &[u8; CODE_LEN]) -> String {
    // 256 = 7 * 36 + 4: the first four letters are a little likelier, which a code does not mind.
    bytes.iter().map(|b| CODE_ALPHABET[*b as usize % CODE_ALPHABET.len()] as char).collect()
}

/// A code a researcher writes in the spec: 1–64 letters, digits, '-' or '_'.
pub fn check_code(code: &str) -> Result<(), String> {
    check_platform_id(code).map_err(|e| e.to_string())
}

/// The participant's opaque account name: study and arrival number, no personal data.
pub fn participant_username(study: i64, number: i64) -> String {
    format!("p{study}-{number}")
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("is missing")]
    Missing,
    #[error("is {0} bytes long; at most {MAX_PLATFORM_ID} characters are allowed")]
    TooLong(usize),
    #[error("may hold only letters A-Z, a-z, digits, '-' and '_' (found {0:?})")]
    BadChar(char),
    /// The link as written in Prolific's form, opened without Prolific.
    #[error("is still the placeholder {0}: open the study from Prolific, or put a test id in its place")]
    Placeholder(String),
}

/// A platform id (Prolific's PID, study and session ids, a panel's `pid`):
/// 1–64 characters of `[A-Za-z0-9_-]`. The length is checked before the
/// characters, so a 10 kB value is refused without being scanned or echoed.
pub fn check_platform_id(s: &str) -> Result<(), IdError> {
    if s.is_empty() {
        return Err(IdError::Missing);
    }
    if s.len() > MAX_PLATFORM_ID {
        return Err(IdError::TooLong(s.len()));
    }
    if s.starts_with("{{%") && s.ends_with("%}}") {
        return Err(IdError::Placeholder(s.to_string()));
    }
    match s.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        Some(c) => Err(IdError::BadChar(c)),
        None => Ok(()),
    }
}

/// The ids an arrival carries, as checked: the participant's and, optionally, the platform's study and session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformIds {
    pub pid: String,
    pub study: Option<String>,
    pub session: Option<String>,
}

impl PlatformIds {
    /// Checks each id, naming the one that is wrong (`PROLIFIC_PID is missing`).
    /// Empty optional ids count as absent.
    pub fn parse(pid: Option<&str>, study: Option<&str>, session: Option<&str>) -> Result<PlatformIds, String> {
        let pid = pid.unwrap_or("");
        check_platform_id(pid).map_err(|e| format!("PROLIFIC_PID (or pid) {e}"))?;
        let optional = |name: &str, v: Option<&str>| -> Result<Option<String>, String> {
            match v.filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(v) => check_platform_id(v).map(|_| Some(v.to_string())).map_err(|e| format!("{name} {e}")),
            }
        };
        Ok(PlatformIds {
            pid: canonical(pid),
            study: optional("STUDY_ID", study)?.map(|s| canonical(&s)),
            session: optional("SESSION_ID", session)?.map(|s| canonical(&s)),
        })
    }
}

/// A Prolific id (24 hexadecimal digits, which Prolific writes in lower
/// case) in lower case, so the same person arriving with their id in
/// capitals is the same participant; other panels' ids as given.
fn canonical(id: &str) -> String {
    match id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        true => id.to_ascii_lowercase(),
        false => id.to_string(),
    }
}

/// Prolific's completion URL for a code, or the spec's own with `{code}` filled in.
pub fn completion_url(template: &str, code: &str) -> String {
    template.replace("{code}", code)
}

pub const DEFAULT_COMPLETION_URL: &str = "https://app.prolific.com/submissions/complete?cc={code}";

/// What `study link` prints: Prolific fills the placeholders for each participant.
pub const PROLIFIC_PARAMS: &str = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_hex_chars_of_128_bits() {
        let t = token_from_bytes(&[0xab; TOKEN_BYTES]);
        assert_eq!(t, "ab".repeat(16));
        assert!(is_token(&t));
        assert!(!is_token(&t[..31]), "too short");
        assert!(!is_token(&format!("{t}0")), "too long");
        assert!(!is_token(&"AB".repeat(16)), "upper case is not what we make");
        assert!(!is_token(&"zz".repeat(16)));
        assert!(!is_token("../../etc/passwd"));
        assert_ne!(token_from_bytes(&[1; 16]), token_from_bytes(&[2; 16]));
    }

    #[test]
    fn codes_are_eight_of_a_to_z_and_digits() {
        for bytes in [[0u8; 8], [255; 8], [35, 36, 0, 9, 26, 200, 100, 7]] {
            let c = code_from_bytes(&bytes);
            assert_eq!(c.len(), CODE_LEN);
            assert!(c.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()), "{c}");
        }
        assert_eq!(code_from_bytes(&[0, 1, 25, 26, 35, 36, 37, 71]), "ABZ09AB9");
        assert!(check_code("C1A2B3").is_ok());
        assert!(check_code("").is_err());
        assert!(check_code("has space").is_err());
    }

    #[test]
    fn platform_ids_are_1_to_64_safe_chars() {
        assert_eq!(check_platform_id("5f1a2b3c4d5e6f7a8b9c0d1e"), Ok(()));
        assert_eq!(check_platform_id("a-b_C"), Ok(()));
        assert_eq!(check_platform_id(&"x".repeat(64)), Ok(()));
        assert_eq!(check_platform_id(""), Err(IdError::Missing));
        assert_eq!(check_platform_id(&"x".repeat(65)), Err(IdError::TooLong(65)));
        assert_eq!(check_platform_id(&"x".repeat(10_240)), Err(IdError::TooLong(10_240)));
        assert_eq!(check_platform_id("a b"), Err(IdError::BadChar(' ')));
        assert_eq!(check_platform_id("<script>"), Err(IdError::BadChar('<')));
        assert_eq!(check_platform_id("é"), Err(IdError::BadChar('é')));
        // The link opened as written in Prolific's form: said as such.
        let e = check_platform_id("{{%PROLIFIC_PID%}}").unwrap_err();
        assert_eq!(e, IdError::Placeholder("{{%PROLIFIC_PID%}}".into()));
        assert!(e.to_string().contains("open the study from Prolific"), "{e}");
        // A long value's message gives its length, never the value.
        let msg = check_platform_id(&"y".repeat(10_240)).unwrap_err().to_string();
        assert!(msg.len() < 100 && msg.contains("10240"), "{msg}");
    }

    #[test]
    fn arrival_ids_name_the_field_in_error() {
        let ok = PlatformIds::parse(Some("P1"), Some("S1"), Some("")).unwrap();
        assert_eq!(ok, PlatformIds { pid: "P1".into(), study: Some("S1".into()), session: None });
        assert_eq!(PlatformIds::parse(None, None, None).unwrap_err(), "PROLIFIC_PID (or pid) is missing");
        // Prolific's ids in one case; other panels' as given.
        let upper =
            PlatformIds::parse(Some("5F00000000000000000000A1"), Some("65AB00000000000000000001"), None).unwrap();
        assert_eq!(
            (upper.pid.as_str(), upper.study.as_deref()),
            ("5f00000000000000000000a1", Some("65ab00000000000000000001"))
        );
        assert_eq!(PlatformIds::parse(Some("A2BC3DEF4GHIJK"), None, None).unwrap().pid, "A2BC3DEF4GHIJK");
        assert_eq!(
            PlatformIds::parse(Some("5F00000000000000000000A"), None, None).unwrap().pid,
            "5F00000000000000000000A"
        );
        assert!(PlatformIds::parse(Some("P1"), Some("bad id"), None).unwrap_err().starts_with("STUDY_ID "));
        assert!(PlatformIds::parse(Some("P1"), None, Some(&"s".repeat(65))).unwrap_err().starts_with("SESSION_ID "));
    }

    #[test]
    fn names_and_urls() {
        assert_eq!(participant_username(3, 17), "p3-17");
        assert_eq!(
            completion_url(DEFAULT_COMPLETION_URL, "ABC12345"),
            "https://app.prolific.com/submissions/complete?cc=ABC12345"
        );
        assert_eq!(completion_url("http://x/done", "C"), "http://x/done");
    }
}
