//! `config.json` of a Hugging Face CLIP checkpoint (CLIPConfig). Missing
//! fields take the transformers defaults, which are ViT-B/32's.
use serde::{Deserialize, Serialize};

/// The MLP non-linearity. OpenAI checkpoints use QuickGELU; LAION/DataComp
/// OpenCLIP checkpoints converted to HF format use exact (erf) GELU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activation {
    #[serde(rename = "quick_gelu")]
    QuickGelu,
    #[serde(rename = "gelu")]
    Gelu,
    /// The tanh approximation, as transformers names it two ways.
    #[serde(rename = "gelu_new", alias = "gelu_pytorch_tanh")]
    GeluTanh,
}

fn quick_gelu() -> Activation {
    Activation::QuickGelu
}
fn eps() -> f64 {
    1e-5
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextConfig {
    #[serde(default = "d_vocab")]
    pub vocab_size: usize,
    #[serde(default = "d_512")]
    pub hidden_size: usize,
    #[serde(default = "d_2048")]
    pub intermediate_size: usize,
    #[serde(default = "d_12")]
    pub num_hidden_layers: usize,
    #[serde(default = "d_8")]
    pub num_attention_heads: usize,
    #[serde(default = "d_77")]
    pub max_position_embeddings: usize,
    #[serde(default = "quick_gelu")]
    pub hidden_act: Activation,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    /// End-of-text id. As in transformers: pooling takes its first
    /// occurrence, unless it is absent or the legacy 2 (OpenAI configs);
    /// then the largest id, which is end-of-text in CLIP's vocabulary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eos_token_id: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisionConfig {
    #[serde(default = "d_768")]
    pub hidden_size: usize,
    #[serde(default = "d_3072")]
    pub intermediate_size: usize,
    #[serde(default = "d_12")]
    pub num_hidden_layers: usize,
    #[serde(default = "d_12")]
    pub num_attention_heads: usize,
    #[serde(default = "d_224")]
    pub image_size: usize,
    #[serde(default = "d_32")]
    pub patch_size: usize,
    #[serde(default = "quick_gelu")]
    pub hidden_act: Activation,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipConfig {
    pub text_config: TextConfig,
    pub vision_config: VisionConfig,
    #[serde(default = "d_512")]
    pub projection_dim: usize,
}

fn d_vocab() -> usize {
    49408
}
fn d_8() -> usize {
    8
}
fn d_12() -> usize {
    12
}
fn d_32() -> usize {
    32
}
fn d_77() -> usize {
    77
}
fn d_224() -> usize {
    224
}
fn d_512() -> usize {
    512
}
fn d_768() -> usize {
    768
}
fn d_2048() -> usize {
    2048
}
fn d_3072() -> usize {
    3072
}

impl ClipConfig {
    pub fn parse(json: &str) -> anyhow::Result<ClipConfig> {
        let c: ClipConfig = serde_json::from_str(json)?;
        for (tower, hidden, heads) in [
            ("text", c.text_config.hidden_size, c.text_config.num_attention_heads),
            ("vision", c.vision_config.hidden_size, c.vision_config.num_attention_heads),
        ] {
            anyhow::ensure!(
                heads > 0 && hidden % heads == 0,
                "{tower}_config: hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            );
        }
        let v = &c.vision_config;
        anyhow::ensure!(
            v.patch_size > 0 && v.image_size.is_multiple_of(v.patch_size),
            "vision_config: image_size must be a multiple of patch_size"
        );
        Ok(c)
    }

    /// Refuses weights holding encoder layers past a tower's
    /// `num_hidden_layers`: the towers load only the layers the config
    /// counts, so the rest would be dropped silently and the scores change.
    pub fn check_layers(&self, tensor_names: &[String]) -> anyhow::Result<()> {
        let towers = [("text", self.text_config.num_hidden_layers), ("vision", self.vision_config.num_hidden_layers)];
        for (tower, count) in towers {
            let prefix = format!("{tower}_model.encoder.layers.");
            let found: std::collections::BTreeSet<usize> =
                tensor_names.iter().filter_map(|n| n.strip_prefix(&prefix)?.split('.').next()?.parse().ok()).collect();
            if let Some(&last) = found.last().filter(|&&last| last >= count) {
                anyhow::bail!(
                    "{tower}_config.num_hidden_layers is {count}, but model.safetensors holds {tower} encoder \
                     layers up to {prefix}{last} ({} in all): fix config.json",
                    found.len()
                );
            }
        }
        Ok(())
    }

    /// OpenAI ViT-B/32 (the transformers defaults), for benchmarks.
    pub fn vit_b_32() -> ClipConfig {
        ClipConfig::parse(r#"{"text_config": {}, "vision_config": {}}"#).expect("defaults parse")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_vit_b_32_and_activations_parse() {
        let c = ClipConfig::vit_b_32();
        assert_eq!(
            (c.vision_config.hidden_size, c.vision_config.patch_size, c.text_config.hidden_size),
            (768, 32, 512)
        );
        assert_eq!(c.text_config.hidden_act, Activation::QuickGelu);
        let g = ClipConfig::parse(r#"{"text_config": {"hidden_act": "gelu"}, "vision_config": {"hidden_act": "gelu_pytorch_tanh"}, "projection_dim": 640}"#).unwrap();
        assert_eq!(
            (g.text_config.hidden_act, g.vision_config.hidden_act, g.projection_dim),
            (Activation::Gelu, Activation::GeluTanh, 640)
        );
        assert!(ClipConfig::parse(r#"{"text_config": {"hidden_act": "relu"}, "vision_config": {}}"#).is_err());
        assert!(ClipConfig::parse(r#"{"text_config": {"hidden_size": 100}, "vision_config": {}}"#).is_err());
    }
}
