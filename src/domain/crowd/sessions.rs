//! Which of a participant's link sessions stay (`crate::crowd::sessions`).

/// `held` (space-separated ids, oldest first) with `new` added last and
/// at most `kept` in all: the list to store, and the ids to end.
pub fn newest(held: &str, new: &str, kept: usize) -> (String, Vec<String>) {
    let mut ids: Vec<&str> = held.split_whitespace().filter(|id| *id != new).collect();
    ids.push(new);
    let cut = ids.len().saturating_sub(kept);
    let ended = ids[..cut].iter().map(|s| s.to_string()).collect();
    (ids[cut..].join(" "), ended)
}

#[cfg(test)]
mod tests {
    use super::newest;

    #[test]
    fn the_oldest_past_the_cap_are_ended() {
        assert_eq!(newest("", "a", 3), ("a".to_string(), vec![]));
        assert_eq!(newest("a b", "c", 3), ("a b c".to_string(), vec![]));
        assert_eq!(newest("a b c", "d", 3), ("b c d".to_string(), vec!["a".to_string()]));
        // A list stored under a larger cap shrinks at once.
        assert_eq!(newest("a b c d", "e", 2), ("d e".to_string(), vec!["a".into(), "b".into(), "c".into()]));
    }

    #[test]
    fn the_same_session_again_moves_to_the_end_and_is_never_ended() {
        assert_eq!(newest("a b c", "a", 3), ("b c a".to_string(), vec![]));
        assert_eq!(newest(" a  b ", "b", 1), ("b".to_string(), vec!["a".to_string()]));
    }
}
