//! One JSON Lines row as an object whose keys are each given once. A plain
//! map keeps the last of two equal keys without a word, so a row that says
//! two different captions would import whichever came second.
use serde::de::{DeserializeSeed, Error as _, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// Why a line is not one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectError {
    /// Not JSON at all (the parser's words: truncated, malformed).
    NotJson(String),
    /// JSON, but not an object.
    NotObject,
    /// A top-level key given twice.
    Duplicate(String),
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectError::NotJson(e) => write!(f, "not valid JSON: {e}"),
            ObjectError::NotObject => f.write_str("expected a JSON object"),
            ObjectError::Duplicate(k) => write!(f, "the key {k:?} is given twice"),
        }
    }
}

/// The line's object; keys inside nested values are not checked (rows hold strings).
pub fn parse_object(line: &[u8]) -> Result<Map<String, Value>, ObjectError> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(line);
    let parsed = UniqueKeys(&duplicate).deserialize(&mut de).and_then(|m| de.end().map(|()| m));
    parsed.map_err(|e| match duplicate.into_inner() {
        Some(k) => ObjectError::Duplicate(k),
        None if e.is_data() => ObjectError::NotObject,
        None => ObjectError::NotJson(e.to_string()),
    })
}

struct UniqueKeys<'a>(&'a RefCell<Option<String>>);

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = Map<String, Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                *self.0.borrow_mut() = Some(key);
                return Err(A::Error::custom("a duplicate key"));
            }
            let value: Value = access.next_value()?;
            map.insert(key, value);
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_with_distinct_keys_is_read_whole() {
        let m = parse_object(br#"{"a": "1", "b": {"c": 2, "c": 3}}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m["a"], "1");
    }

    #[test]
    fn a_key_given_twice_is_named() {
        let e = parse_object(br#"{"caption": "a dog", "x": 1, "caption": "a cat"}"#).unwrap_err();
        assert_eq!(e, ObjectError::Duplicate("caption".into()));
        assert_eq!(e.to_string(), r#"the key "caption" is given twice"#);
    }

    #[test]
    fn what_is_not_an_object_says_which_way() {
        for not_object in [&b"[1, 2]"[..], b"\"text\"", b"3", b"null", b"true"] {
            assert_eq!(parse_object(not_object), Err(ObjectError::NotObject), "{not_object:?}");
        }
        for broken in [&b"{\"a\": "[..], b"{\"a\" 1}", b"{} {}", b"", b"{\"a\": \"\xff\"}"] {
            assert!(matches!(parse_object(broken), Err(ObjectError::NotJson(_))), "{broken:?}");
        }
        assert!(parse_object(b"  {\"a\": 1}  \r").is_ok(), "whitespace around it");
    }
}
