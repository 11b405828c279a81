//! Captions to token ids with the checkpoint's own `tokenizer.json`
//! (byte-level BPE for real CLIP checkpoints; any model type the tokenizers
//! crate reads, e.g. WordLevel in tests), and batching.
use anyhow::Context;
use std::path::Path;
use tokenizers::{Tokenizer, TruncationParams};

pub struct TextTokenizer {
    inner: Tokenizer,
}

impl TextTokenizer {
    /// `max_len` is the model's `max_position_embeddings`; truncation keeps
    /// the special tokens the post-processor adds (end-of-text survives).
    pub fn from_file(path: &Path, max_len: usize) -> anyhow::Result<TextTokenizer> {
        let mut inner = Tokenizer::from_file(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        // We pad ourselves, with 0 and only to the batch's longest caption.
        inner.with_padding(None);
        inner
            .with_truncation(Some(TruncationParams { max_length: max_len, ..Default::default() }))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(TextTokenizer { inner })
    }

    pub fn encode(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<u32>>> {
        texts
            .iter()
            .map(|t| {
                let enc = self
                    .inner
                    .encode(t.as_str(), true)
                    .map_err(|e| anyhow::anyhow!("{e}"))
                    .with_context(|| format!("tokenizing {t:?}"))?;
                Ok(enc.get_ids().to_vec())
            })
            .collect()
    }
}

/// A batch of token ids, row-major (rows × len), padded with 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaddedBatch {
    pub ids: Vec<u32>,
    pub rows: usize,
    pub len: usize,
    /// Per row, the position CLIP pools at: the first `eos` when given,
    /// else the first largest id (end-of-text has the highest id in CLIP's
    /// vocabulary).
    pub pool: Vec<usize>,
}

/// `eos`: see `TextConfig::eos_token_id` (2 means "not set", as in transformers).
pub fn pad_batch(seqs: &[Vec<u32>], eos: Option<u32>) -> PaddedBatch {
    let len = seqs.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut ids = vec![0u32; seqs.len() * len];
    let mut pool = Vec::with_capacity(seqs.len());
    for (r, s) in seqs.iter().enumerate() {
        ids[r * len..r * len + s.len()].copy_from_slice(s);
        let mut best = 0;
        for (i, &v) in s.iter().enumerate() {
            if v > s[best] {
                best = i;
            }
        }
        let first_eos = eos.filter(|&e| e != 2).and_then(|e| s.iter().position(|&v| v == e));
        pool.push(first_eos.unwrap_or(best));
    }
    PaddedBatch { ids, rows: seqs.len(), len, pool }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_to_the_longest_with_zero_and_pools_at_the_first_max() {
        let seqs = [vec![5, 1, 9], vec![5, 9, 2, 9, 3]];
        let b = pad_batch(&seqs, None);
        assert_eq!((b.rows, b.len), (2, 5));
        assert_eq!(b.ids, vec![5, 1, 9, 0, 0, 5, 9, 2, 9, 3]);
        assert_eq!(b.pool, vec![2, 1]);
        // A named end-of-text wins; the legacy 2 means argmax.
        assert_eq!(pad_batch(&seqs, Some(3)).pool, vec![2, 4]);
        assert_eq!(pad_batch(&seqs, Some(2)).pool, vec![2, 1]);
    }

    /// A miniature of a real CLIP `tokenizer.json` (same normalizer,
    /// pre-tokenizer regex, byte-level BPE with `</w>`, RoBERTa-style
    /// post-processor) reads and tokenizes without the onig regex engine.
    #[test]
    fn clip_style_bpe_tokenizer_json_works() {
        let vocab = [
            "a",
            "h",
            "o",
            "p",
            "t",
            "a</w>",
            "o</w>",
            "ph",
            "pho",
            "to</w>",
            "photo</w>",
            "<|startoftext|>",
            "<|endoftext|>",
        ];
        let vocab: serde_json::Map<String, serde_json::Value> =
            vocab.iter().enumerate().map(|(i, t)| (t.to_string(), i.into())).collect();
        let special = |id: usize, s: &str| serde_json::json!({"id": id, "content": s, "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": true});
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [special(11, "<|startoftext|>"), special(12, "<|endoftext|>")],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Lowercase"}]},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+"}, "behavior": "Removed", "invert": true},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
            "post_processor": {"type": "RobertaProcessing", "sep": ["<|endoftext|>", 12], "cls": ["<|startoftext|>", 11], "trim_offsets": false, "add_prefix_space": false},
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": "<|endoftext|>", "continuing_subword_prefix": "", "end_of_word_suffix": "</w>",
                      "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": ["p h", "ph o", "t o</w>", "pho to</w>"]}
        });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, json.to_string()).unwrap();
        let tok = TextTokenizer::from_file(&path, 77).unwrap();
        assert_eq!(tok.encode(&["A   Photo".to_string()]).unwrap(), vec![vec![11, 5, 10, 12]]);
        // Truncation keeps end-of-text.
        let short = TextTokenizer::from_file(&path, 3).unwrap();
        assert_eq!(short.encode(&["a photo a".to_string()]).unwrap(), vec![vec![11, 5, 12]]);
    }
}
