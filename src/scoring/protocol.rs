//! The external scorer protocol, version 1 (docs/scorer-protocol.md): JSON
//! lines over the scorer's stdin/stdout. Message types and checks only; the
//! process handling is in `external.rs`.
use super::rank::normalize;

/// Image and text embeddings of one request, in request order.
pub type Embeddings = (Vec<Vec<f32>>, Vec<Vec<f32>>);
use serde::{Deserialize, Serialize};

pub const PROTOCOL_VERSION: u32 = 1;

/// The scorer's first line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Hello {
    /// Protocol version the scorer speaks.
    pub hardneg_scorer: u32,
    pub model: String,
    /// Names the exact weights (e.g. their sha256); without it nothing is cached.
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// Names the image preprocessing; part of the cache key.
    #[serde(default)]
    pub preprocess: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ImageItem<'a> {
    pub hash: &'a str,
    pub path: String,
}

#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub id: u64,
    pub images: Vec<ImageItem<'a>>,
    pub texts: &'a [String],
    /// `"text_scores"` asks for one plausibility score per text instead of
    /// embeddings (the blind audit, docs/audit.md); absent: embeddings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub want: Option<&'static str>,
}

/// What a blind-audit request asks for.
pub const WANT_TEXT_SCORES: &str = "text_scores";

#[derive(Debug, Deserialize)]
struct Response {
    id: u64,
    #[serde(default)]
    image_embeddings: Vec<Vec<f32>>,
    #[serde(default)]
    text_embeddings: Vec<Vec<f32>>,
    #[serde(default)]
    text_scores: Vec<f64>,
    #[serde(default)]
    error: Option<String>,
}

fn read_response(line: &str, id: u64) -> anyhow::Result<Response> {
    let r: Response =
        serde_json::from_str(line.trim()).map_err(|e| anyhow::anyhow!("unreadable response {:?}: {e}", clip(line)))?;
    anyhow::ensure!(r.id == id, "response id {} does not answer request {id}", r.id);
    if let Some(e) = r.error {
        anyhow::bail!("the scorer failed request {id}: {e}");
    }
    Ok(r)
}

/// One finite score per text from the response to text-score request `id`.
pub fn parse_text_scores(line: &str, id: u64, texts: usize) -> anyhow::Result<Vec<f64>> {
    let r = read_response(line, id)?;
    anyhow::ensure!(
        r.text_scores.len() == texts,
        "request {id} asked for {texts} text scores, got {}",
        r.text_scores.len()
    );
    anyhow::ensure!(r.text_scores.iter().all(|s| s.is_finite()), "request {id}: a non-finite text score");
    Ok(r.text_scores)
}

pub fn parse_hello(line: &str) -> anyhow::Result<Hello> {
    let hello: Hello = serde_json::from_str(line.trim()).map_err(|e| {
        anyhow::anyhow!(
            "expected a hello line like {{\"hardneg_scorer\": 1, \"model\": \"…\"}}, got {:?}: {e}",
            clip(line)
        )
    })?;
    anyhow::ensure!(
        hello.hardneg_scorer == PROTOCOL_VERSION,
        "the scorer speaks protocol version {}, this hardneg speaks {PROTOCOL_VERSION}",
        hello.hardneg_scorer
    );
    anyhow::ensure!(!hello.model.trim().is_empty(), "the hello line names no model");
    Ok(hello)
}

/// Unit-length (image, text) embeddings from the response to request `id`,
/// which asked for `images` images and `texts` texts.
pub fn parse_response(line: &str, id: u64, images: usize, texts: usize) -> anyhow::Result<Embeddings> {
    let r = read_response(line, id)?;
    anyhow::ensure!(
        r.image_embeddings.len() == images && r.text_embeddings.len() == texts,
        "request {id} asked for {images} image and {texts} text embeddings, got {} and {}",
        r.image_embeddings.len(),
        r.text_embeddings.len()
    );
    let dims: Vec<usize> = r.image_embeddings.iter().chain(&r.text_embeddings).map(Vec::len).collect();
    anyhow::ensure!(dims.windows(2).all(|w| w[0] == w[1]), "request {id}: embeddings of different lengths");
    let unit = |v: Vec<Vec<f32>>| -> anyhow::Result<Vec<Vec<f32>>> {
        v.into_iter()
            .map(|e| {
                normalize(e).ok_or_else(|| anyhow::anyhow!("request {id}: an empty, zero or non-finite embedding"))
            })
            .collect()
    };
    Ok((unit(r.image_embeddings)?, unit(r.text_embeddings)?))
}

fn clip(s: &str) -> String {
    s.trim().chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_is_versioned() {
        let h = parse_hello(r#"{"hardneg_scorer": 1, "model": "ViT-B-32", "fingerprint": "abc"}"#).unwrap();
        assert_eq!((h.model.as_str(), h.fingerprint.as_deref(), h.device), ("ViT-B-32", Some("abc"), None));
        assert!(parse_hello(r#"{"hardneg_scorer": 2, "model": "m"}"#).unwrap_err().to_string().contains("version 2"));
        assert!(parse_hello("Loading model...").is_err());
    }

    #[test]
    fn responses_are_checked_and_normalised() {
        let (img, txt) =
            parse_response(r#"{"id": 3, "image_embeddings": [[3, 4]], "text_embeddings": [[0, 2], [1, 0]]}"#, 3, 1, 2)
                .unwrap();
        assert_eq!((img, txt), (vec![vec![0.6, 0.8]], vec![vec![0.0, 1.0], vec![1.0, 0.0]]));
        assert!(parse_response(r#"{"id": 4, "text_embeddings": [[1, 0]]}"#, 3, 0, 1)
            .unwrap_err()
            .to_string()
            .contains("does not answer"));
        assert!(parse_response(r#"{"id": 3, "text_embeddings": [[1, 0]]}"#, 3, 0, 2).is_err());
        assert!(parse_response(r#"{"id": 3, "text_embeddings": [[1, 0], [1]]}"#, 3, 0, 2)
            .unwrap_err()
            .to_string()
            .contains("different lengths"));
        assert!(parse_response(r#"{"id": 3, "text_embeddings": [[0, 0]]}"#, 3, 0, 1).is_err());
        assert!(parse_response(r#"{"id": 3, "error": "CUDA out of memory"}"#, 3, 0, 1)
            .unwrap_err()
            .to_string()
            .contains("out of memory"));
    }

    #[test]
    fn requests_serialise_as_documented() {
        let texts = vec!["a dog".to_string()];
        let r =
            Request { id: 1, images: vec![ImageItem { hash: "ab", path: "/x/ab".into() }], texts: &texts, want: None };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"id":1,"images":[{"hash":"ab","path":"/x/ab"}],"texts":["a dog"]}"#
        );
        let r = Request { id: 2, images: vec![], texts: &texts, want: Some(WANT_TEXT_SCORES) };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"id":2,"images":[],"texts":["a dog"],"want":"text_scores"}"#
        );
    }

    #[test]
    fn text_scores_are_counted_and_finite() {
        assert_eq!(parse_text_scores(r#"{"id": 2, "text_scores": [-1.5, 0]}"#, 2, 2).unwrap(), [-1.5, 0.0]);
        let short = parse_text_scores(r#"{"id": 2, "text_scores": [1]}"#, 2, 2).unwrap_err().to_string();
        assert!(short.contains("2 text scores, got 1"), "{short}");
        assert!(parse_text_scores(r#"{"id": 2, "text_embeddings": [[1, 0]]}"#, 2, 1).is_err());
        assert!(parse_text_scores(r#"{"id": 3, "text_scores": [1]}"#, 2, 1).is_err());
        assert!(parse_text_scores(r#"{"id": 2, "error": "no LM"}"#, 2, 1).unwrap_err().to_string().contains("no LM"));
    }
}
