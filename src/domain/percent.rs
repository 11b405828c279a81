//! Percent-encoding of a URL query value (all but RFC 3986's unreserved
//! bytes): the pages' links, the fake Prolific's page links and the
//! practice feedback's address build their queries with it, on the server
//! and in the wasm client alike.

pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::query_value;

    /// A run named `clip+ft`, `a&b` or `x#1` read back as `clip ft`, `a`,
    /// `x` in a link that did not encode it (audit AP).
    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(query_value("CLIP-B_32.v~1"), "CLIP-B_32.v~1");
        assert_eq!(query_value("clip+ft"), "clip%2Bft");
        assert_eq!(query_value("a&b=c"), "a%26b%3Dc");
        assert_eq!(query_value("x#1 2%"), "x%231%202%25");
        assert_eq!(query_value("é/?"), "%C3%A9%2F%3F");
    }
}
