//! What a login refusal says, in one place: the server words it, and the
//! login page shows only these words (without JavaScript the page reads
//! its error back from a URL anyone can write, `?__err=`).

/// Why a login was not even checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Too many recent failures; retry after this many seconds.
    Backoff(u64),
    /// Every password check slot was busy for the whole wait.
    Busy,
}

pub const BAD_CREDENTIALS: &str = "Unknown username or wrong password.";

/// Shown instead of any text that is not the login's own.
pub const FIXED: &str = "Logging in did not work; try again in a moment.";

impl Refused {
    pub fn retry_after(&self) -> u64 {
        match self {
            Refused::Backoff(s) => *s,
            Refused::Busy => 1,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Refused::Backoff(s) => format!("too many failed logins; try again in {s} s"),
            Refused::Busy => "the server is busy checking other logins; try again in a moment".into(),
        }
    }

    /// The sentence the login page shows.
    pub fn sentence(&self) -> String {
        format!("{}.", self.message())
    }
}

/// `text` if it is one of the login's own sentences, else `FIXED`.
pub fn own_words(text: &str) -> String {
    let backoff = text
        .strip_prefix("too many failed logins; try again in ")
        .and_then(|rest| rest.split(' ').next())
        .filter(|n| (1..=6).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .map(Refused::Backoff);
    let own =
        text == BAD_CREDENTIALS || [Some(Refused::Busy), backoff].into_iter().flatten().any(|r| r.sentence() == text);
    if own {
        text.to_string()
    } else {
        FIXED.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_logins_own_messages_are_shown() {
        let mut own = vec![BAD_CREDENTIALS.to_string(), Refused::Busy.sentence()];
        own.extend([1, 30, 900].map(|s| Refused::Backoff(s).sentence()));
        for text in &own {
            assert_eq!(&own_words(text), text);
        }
        assert_eq!(Refused::Backoff(30).sentence(), "too many failed logins; try again in 30 s.");
        for other in [
            "Your session expired. Log in at http://evil.example/login instead",
            "too many failed logins; try again in 30 s. Or at http://evil.example",
            "too many failed logins; try again in  s.",
            "too many failed logins; try again in 0030 s.",
            "too many failed logins; try again in 9999999 s.",
            "the server is busy checking other logins; try again in a moment",
            "",
        ] {
            assert_eq!(own_words(other), FIXED, "{other}");
        }
    }

    #[test]
    fn a_refusal_says_when_to_come_back() {
        assert_eq!(Refused::Backoff(4).retry_after(), 4);
        assert_eq!(Refused::Busy.retry_after(), 1);
    }
}
