//! Constructed CLIP checkpoints for tests and benchmarks: deterministic
//! weights from our own generator (candle's CPU RNG cannot be seeded),
//! written in the Hugging Face layout that real checkpoints use.
use super::config::{Activation, ClipConfig};
use crate::domain::rng::SplitMix64;
use candle_core::{Device, Tensor};
use std::collections::HashMap;
use std::path::Path;

/// A small model that runs in milliseconds: 2 layers, width 32, 32 px images in 8 px patches.
pub fn tiny_config(act: Activation, vocab_size: usize) -> ClipConfig {
    let json = serde_json::json!({
        "text_config": {"vocab_size": vocab_size, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                        "num_attention_heads": 4, "max_position_embeddings": 16, "hidden_act": act},
        "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                          "image_size": 32, "patch_size": 8, "hidden_act": act},
        "projection_dim": 16
    });
    ClipConfig::parse(&json.to_string()).expect("a valid tiny config")
}

fn tensor(rng: &mut SplitMix64, shape: &[usize], base: f32, spread: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| base + spread * (rng.next_f64() as f32 * 2.0 - 1.0)).collect();
    Tensor::from_vec(data, shape, &Device::Cpu).expect("shape matches")
}

/// Fills one named tensor of the given shape from a seeded range.
type Put<'a> = dyn FnMut(String, &[usize], f32, f32) + 'a;

/// The encoder layers of one tower.
fn tower(put: &mut Put, prefix: &str, layers: usize, h: usize, inner: usize) {
    for i in 0..layers {
        let l = format!("{prefix}.encoder.layers.{i}");
        for p in ["q_proj", "k_proj", "v_proj", "out_proj"] {
            put(format!("{l}.self_attn.{p}.weight"), &[h, h], 0.0, 0.15);
            put(format!("{l}.self_attn.{p}.bias"), &[h], 0.0, 0.02);
        }
        for n in ["layer_norm1", "layer_norm2"] {
            put(format!("{l}.{n}.weight"), &[h], 1.0, 0.1);
            put(format!("{l}.{n}.bias"), &[h], 0.0, 0.05);
        }
        put(format!("{l}.mlp.fc1.weight"), &[inner, h], 0.0, 0.15);
        put(format!("{l}.mlp.fc1.bias"), &[inner], 0.0, 0.02);
        put(format!("{l}.mlp.fc2.weight"), &[h, inner], 0.0, 0.1);
        put(format!("{l}.mlp.fc2.bias"), &[h], 0.0, 0.02);
    }
}

/// Every tensor a CLIP checkpoint has, under its Hugging Face name.
pub fn random_weights(c: &ClipConfig, seed: u64) -> HashMap<String, Tensor> {
    let mut rng = SplitMix64::new(seed);
    let mut w = HashMap::new();
    let mut put = |name: String, shape: &[usize], base: f32, spread: f32| {
        w.insert(name, tensor(&mut rng, shape, base, spread));
    };
    let t = &c.text_config;
    put("text_model.embeddings.token_embedding.weight".into(), &[t.vocab_size, t.hidden_size], 0.0, 0.5);
    put(
        "text_model.embeddings.position_embedding.weight".into(),
        &[t.max_position_embeddings, t.hidden_size],
        0.0,
        0.1,
    );
    tower(&mut put, "text_model", t.num_hidden_layers, t.hidden_size, t.intermediate_size);
    put("text_model.final_layer_norm.weight".into(), &[t.hidden_size], 1.0, 0.1);
    put("text_model.final_layer_norm.bias".into(), &[t.hidden_size], 0.0, 0.05);
    let v = &c.vision_config;
    let grid = v.image_size / v.patch_size;
    put("vision_model.embeddings.class_embedding".into(), &[v.hidden_size], 0.0, 0.5);
    put(
        "vision_model.embeddings.patch_embedding.weight".into(),
        &[v.hidden_size, 3, v.patch_size, v.patch_size],
        0.0,
        0.05,
    );
    put("vision_model.embeddings.position_embedding.weight".into(), &[grid * grid + 1, v.hidden_size], 0.0, 0.1);
    put("vision_model.pre_layrnorm.weight".into(), &[v.hidden_size], 1.0, 0.1);
    put("vision_model.pre_layrnorm.bias".into(), &[v.hidden_size], 0.0, 0.05);
    tower(&mut put, "vision_model", v.num_hidden_layers, v.hidden_size, v.intermediate_size);
    put("vision_model.post_layernorm.weight".into(), &[v.hidden_size], 1.0, 0.1);
    put("vision_model.post_layernorm.bias".into(), &[v.hidden_size], 0.0, 0.05);
    put("visual_projection.weight".into(), &[c.projection_dim, v.hidden_size], 0.0, 0.2);
    put("text_projection.weight".into(), &[c.projection_dim, t.hidden_size], 0.0, 0.2);
    put("logit_scale".into(), &[], 2.6592, 0.0);
    w
}

/// A WordLevel `tokenizer.json`: lower-cased, split on whitespace and
/// punctuation, `<bos> … <eos>` around every text. Ids: `<pad>` 0, the
/// words, `<unk>`, `<bos>`, and `<eos>` last, so it has the highest id as
/// CLIP's end-of-text does. Returns the vocabulary size (`<eos>` is one less).
pub fn wordlevel_tokenizer_json(words: &[&str]) -> (String, usize) {
    let mut vocab: Vec<String> = vec!["<pad>".into()];
    for w in words {
        let w = w.to_lowercase();
        if !vocab.contains(&w) {
            vocab.push(w);
        }
    }
    vocab.extend(["<unk>", "<bos>", "<eos>"].map(String::from));
    let n = vocab.len();
    let map: serde_json::Map<String, serde_json::Value> =
        vocab.iter().enumerate().map(|(i, w)| (w.clone(), i.into())).collect();
    let special = |name: &str, id: usize| serde_json::json!({"id": name, "ids": [id], "tokens": [name]});
    let template = |seq: &str| serde_json::json!([{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": seq, "type_id": 0}}, {"SpecialToken": {"id": "<eos>", "type_id": 0}}]);
    let json = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {"type": "TemplateProcessing", "single": template("A"), "pair": template("B"),
                           "special_tokens": {"<bos>": special("<bos>", n - 2), "<eos>": special("<eos>", n - 1)}},
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": map, "unk_token": "<unk>"}
    });
    (json.to_string(), n)
}

/// Writes `config.json`, `model.safetensors` and `tokenizer.json` into `dir`.
pub fn write_checkpoint(dir: &Path, config: &ClipConfig, tokenizer_json: &str, seed: u64) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(config)?)?;
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json)?;
    candle_core::safetensors::save(&random_weights(config, seed), dir.join("model.safetensors"))?;
    Ok(())
}

/// A tiny checkpoint whose vocabulary is the words of `texts`.
pub fn write_tiny_checkpoint(dir: &Path, act: Activation, texts: &[&str], seed: u64) -> anyhow::Result<ClipConfig> {
    let words: Vec<&str> =
        texts.iter().flat_map(|t| t.split(|c: char| !c.is_alphanumeric())).filter(|w| !w.is_empty()).collect();
    let (tokenizer, vocab) = wordlevel_tokenizer_json(&words);
    let mut config = tiny_config(act, vocab);
    // transformers would otherwise assume CLIP's id; ours pools the same either way.
    config.text_config.eos_token_id = Some(vocab as u32 - 1);
    write_checkpoint(dir, &config, &tokenizer, seed)?;
    Ok(config)
}
