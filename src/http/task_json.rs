//! The answer round trip's bodies (a task view, an answer's acknowledgement)
//! written as JSON by hand. serde_json passes every key and value through
//! its escaper a byte at a time and its writer a piece at a time: about
//! 14k instructions per task view by callgrind, 5 % of a round trip. Here
//! the keys are constant bytes, and a string is checked eight bytes at a
//! time and copied whole when, as mostly, nothing in it needs an escape.
//! The bytes are serde_json's own: the tests compare them on random values
//! with every escape.
use crate::api_types::{AnswerAck, AnswerAckNext, OptionView, TaskView};
use crate::domain::ids::TaskId;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// A body this module writes.
pub trait WriteJson {
    fn write_json(&self, out: &mut Vec<u8>);
}

/// As a response: the value's JSON, written into one buffer sized for a task view.
pub struct FastJson<T>(pub T);

impl<T: WriteJson> IntoResponse for FastJson<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(2048);
        self.0.write_json(&mut body);
        ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
    }
}

impl WriteJson for TaskView {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"task_id\":");
        int(out, self.task_id.get());
        out.extend_from_slice(b",\"study_id\":");
        int(out, self.study_id.get());
        out.extend_from_slice(b",\"kind\":");
        string(out, self.kind.name());
        out.extend_from_slice(b",\"instructions\":");
        string(out, &self.instructions);
        out.extend_from_slice(if self.item_instructions {
            b",\"item_instructions\":true"
        } else {
            b",\"item_instructions\":false"
        });
        out.extend_from_slice(b",\"prompt\":{\"text\":");
        string(out, &self.prompt.text);
        if let Some(url) = &self.prompt.image_url {
            out.extend_from_slice(b",\"image_url\":");
            string(out, url);
        }
        out.extend_from_slice(b"},\"options\":");
        list(out, &self.options, option);
        out.extend_from_slice(b",\"progress\":{\"done\":");
        int(out, self.progress.done);
        out.extend_from_slice(b",\"total\":");
        int(out, self.progress.total);
        out.extend_from_slice(b"},\"prefetch\":");
        strings(out, &self.prefetch);
        out.push(b'}');
    }
}

fn option(out: &mut Vec<u8>, o: &OptionView) {
    out.extend_from_slice(b"{\"id\":");
    string(out, &o.id);
    out.extend_from_slice(b",\"label\":");
    string(out, &o.label);
    if let Some(url) = &o.image_url {
        out.extend_from_slice(b",\"image_url\":");
        string(out, url);
    }
    if let Some(text) = &o.text {
        out.extend_from_slice(b",\"text\":");
        string(out, text);
    }
    out.extend_from_slice(b",\"keys\":");
    strings(out, &o.keys);
    out.push(b'}');
}

impl WriteJson for AnswerAck {
    fn write_json(&self, out: &mut Vec<u8>) {
        ack(out, self.task_id, &self.option, self.duplicate);
        out.push(b'}');
    }
}

impl WriteJson for AnswerAckNext {
    fn write_json(&self, out: &mut Vec<u8>) {
        ack(out, self.task_id, &self.option, self.duplicate);
        out.extend_from_slice(b",\"next\":");
        match &self.next {
            Some(task) => task.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
    }
}

/// An acknowledgement's fields, without the closing brace.
fn ack(out: &mut Vec<u8>, task_id: TaskId, option: &str, duplicate: bool) {
    out.extend_from_slice(b"{\"task_id\":");
    int(out, task_id.get());
    out.extend_from_slice(b",\"option\":");
    string(out, option);
    out.extend_from_slice(if duplicate { b",\"duplicate\":true" } else { b",\"duplicate\":false" });
}

fn int(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn strings(out: &mut Vec<u8>, items: &[String]) {
    list(out, items, |out, s| string(out, s));
}

/// A JSON array of the items, each written by `item`.
fn list<T>(out: &mut Vec<u8>, items: &[T], item: impl Fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item(out, t);
    }
    out.push(b']');
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any of the word's bytes is zero (exact as to whether, not where).
fn has_zero(w: u64) -> bool {
    w.wrapping_sub(ONES) & !w & HIGHS != 0
}

/// Whether any of the eight bytes must be escaped: below 0x20, `"` or `\`.
fn word_needs_escape(w: u64) -> bool {
    // A byte below 0x20 borrows in the subtraction and had its top bit clear.
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0;
    control || has_zero(w ^ (ONES * u64::from(b'"'))) || has_zero(w ^ (ONES * u64::from(b'\\')))
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// `s` quoted, escaped as serde_json escapes it. Most strings need no
/// escape: those are checked eight bytes at a time and copied whole.
fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if clean(bytes) {
        out.extend_from_slice(bytes);
    } else {
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if needs_escape(b) {
                out.extend_from_slice(&bytes[run..i]);
                escape(out, b);
                run = i + 1;
            }
        }
        out.extend_from_slice(&bytes[run..]);
    }
    out.push(b'"');
}

/// Whether no byte needs an escape.
fn clean(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        if word_needs_escape(u64::from_le_bytes(w.try_into().expect("eight bytes"))) {
            return false;
        }
    }
    !words.remainder().iter().any(|&b| needs_escape(b))
}

fn escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        _ => {
            return out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ])
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
#[path = "task_json_tests.rs"]
mod tests;
