//! The two CLIP towers on candle-nn, with Hugging Face tensor names
//! (`text_model.*`, `vision_model.*`, `text_projection`, `visual_projection`).
//! Written here rather than taken from candle-transformers: that crate is
//! large to compile and its CLIP knows only QuickGELU.
use super::config::{Activation, ClipConfig, TextConfig, VisionConfig};
use super::cpu_layer::{run_layers, CpuLayer, LayerParts};
use super::cpu_tower::{self, Patches};
use super::precision::{Compute, PatchConv, Precision, Proj};
use super::seqs::Seqs;
use candle_core::{DType, Device, Module, Result, Tensor, D};
use candle_nn::{
    conv2d_no_bias, embedding, layer_norm, linear, linear_no_bias, Conv2dConfig, Embedding, LayerNorm, VarBuilder,
};

fn activate(act: Activation, x: &Tensor) -> Result<Tensor> {
    match act {
        Activation::QuickGelu => x * candle_nn::ops::sigmoid(&(x * 1.702)?)?,
        Activation::Gelu => x.gelu_erf(),
        Activation::GeluTanh => x.gelu(),
    }
}

struct Attention {
    q: Proj,
    k: Proj,
    v: Proj,
    out: Proj,
    heads: usize,
    scale: f64,
    compute: Compute,
}

impl Attention {
    fn new(vb: VarBuilder, hidden: usize, heads: usize, compute: Compute) -> Result<Self> {
        let proj = |name: &str| Proj::new(linear(hidden, hidden, vb.pp(name))?, compute);
        Ok(Attention {
            q: proj("q_proj")?,
            k: proj("k_proj")?,
            v: proj("v_proj")?,
            out: proj("out_proj")?,
            heads,
            scale: ((hidden / heads) as f64).powf(-0.5),
            compute,
        })
    }

    /// `mask` is added to the (t, t) attention logits of every head.
    fn forward(&self, x: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let (b, t, c) = x.dims3()?;
        let split = |y: Tensor| y.reshape((b, t, self.heads, c / self.heads))?.transpose(1, 2)?.contiguous();
        let q = split((self.q.forward(x)? * self.scale)?)?;
        let k = split(self.k.forward(x)?)?;
        let v = split(self.v.forward(x)?)?;
        let mut logits = self.compute.matmul(&q, &k.t()?)?;
        if let Some(mask) = mask {
            logits = logits.broadcast_add(mask)?;
        }
        let y = self.compute.matmul(&candle_nn::ops::softmax_last_dim(&logits)?, &v)?;
        self.out.forward(&y.transpose(1, 2)?.reshape((b, t, c))?)
    }
}

struct Layer {
    attn: Attention,
    ln1: LayerNorm,
    fc1: Proj,
    fc2: Proj,
    ln2: LayerNorm,
    act: Activation,
}

impl Layer {
    fn new(vb: VarBuilder, s: &Shape, compute: Compute) -> Result<Self> {
        let Shape { hidden, inner, heads, eps, act } = *s;
        Ok(Layer {
            attn: Attention::new(vb.pp("self_attn"), hidden, heads, compute)?,
            ln1: layer_norm(hidden, eps, vb.pp("layer_norm1"))?,
            fc1: Proj::new(linear(hidden, inner, vb.pp("mlp").pp("fc1"))?, compute)?,
            fc2: Proj::new(linear(inner, hidden, vb.pp("mlp").pp("fc2"))?, compute)?,
            ln2: layer_norm(hidden, eps, vb.pp("layer_norm2"))?,
            act,
        })
    }

    fn forward(&self, x: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let x = (x + self.attn.forward(&self.ln1.forward(x)?, mask)?)?;
        let h = activate(self.act, &self.fc1.forward(&self.ln2.forward(&x)?)?)?;
        &x + self.fc2.forward(&h)?
    }
}

impl Layer {
    fn cpu(&self) -> Result<CpuLayer> {
        let a = &self.attn;
        CpuLayer::new(LayerParts {
            ln1: &self.ln1,
            q: &a.q.full,
            k: &a.k.full,
            v: &a.v.full,
            out: &a.out.full,
            ln2: &self.ln2,
            fc1: &self.fc1.full,
            fc2: &self.fc2.full,
            act: self.act,
            heads: a.heads,
        })
    }
}

/// One encoder layer's sizes.
#[derive(Clone, Copy)]
struct Shape {
    hidden: usize,
    inner: usize,
    heads: usize,
    eps: f64,
    act: Activation,
}

impl Shape {
    fn of(hidden: usize, inner: usize, heads: usize, eps: f64, act: Activation) -> Shape {
        Shape { hidden, inner, heads, eps, act }
    }
}

fn layers(vb: VarBuilder, n: usize, s: Shape, compute: Compute) -> Result<Vec<Layer>> {
    (0..n).map(|i| Layer::new(vb.pp("layers").pp(i), &s, compute)).collect()
}

/// A tower's encoder layers: on the CPU our own kernels (`cpu_layer`),
/// elsewhere candle's ops.
enum Encoder {
    Candle(Vec<Layer>),
    Cpu(Vec<CpuLayer>),
}

impl Encoder {
    fn new(layers: Vec<Layer>, kernels: bool) -> Result<Self> {
        if kernels {
            Ok(Encoder::Cpu(layers.iter().map(Layer::cpu).collect::<Result<_>>()?))
        } else {
            Ok(Encoder::Candle(layers))
        }
    }

    /// `x` is (batch, t, hidden); `causal` masks later positions (text).
    fn forward(&self, x: Tensor, causal: bool) -> Result<Tensor> {
        let (b, t, c) = x.dims3()?;
        match self {
            Encoder::Candle(layers) => {
                let mask: Vec<f32> = (0..t * t).map(|k| if k % t > k / t { f32::NEG_INFINITY } else { 0.0 }).collect();
                let mask = Tensor::from_vec(mask, (t, t), x.device())?;
                let mask = causal.then_some(&mask);
                layers.iter().try_fold(x, |x, layer| layer.forward(&x, mask))
            }
            Encoder::Cpu(layers) => {
                let mut v = x.flatten_all()?.to_vec1::<f32>()?;
                run_layers(layers, &mut v, &Seqs::plain(&vec![t; b]), None, causal);
                Tensor::from_vec(v, (b, t, c), x.device())
            }
        }
    }
}

struct TextTower {
    token: Embedding,
    position: Tensor,
    encoder: Encoder,
    final_ln: LayerNorm,
}

impl TextTower {
    fn new(vb: VarBuilder, c: &TextConfig, kernels: bool, compute: Compute) -> Result<Self> {
        let emb = vb.pp("embeddings");
        Ok(TextTower {
            token: embedding(c.vocab_size, c.hidden_size, emb.pp("token_embedding"))?,
            position: emb.get((c.max_position_embeddings, c.hidden_size), "position_embedding.weight")?,
            encoder: Encoder::new(
                layers(
                    vb.pp("encoder"),
                    c.num_hidden_layers,
                    Shape::of(
                        c.hidden_size,
                        c.intermediate_size,
                        c.num_attention_heads,
                        c.layer_norm_eps,
                        c.hidden_act,
                    ),
                    compute,
                )?,
                kernels,
            )?,
            final_ln: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("final_layer_norm"))?,
        })
    }

    /// `ids` is (batch, t), padded with 0 after end-of-text; `pool` holds
    /// the end-of-text position of each row. The causal mask keeps padding
    /// from reaching end-of-text, so no padding mask is needed.
    fn forward(&self, ids: &Tensor, pool: &[usize]) -> Result<Tensor> {
        let (b, t) = ids.dims2()?;
        if pool.len() != b || pool.iter().any(|&p| p >= t) {
            candle_core::bail!("text: {} pooled positions for {b} rows of {t} tokens: {pool:?}", pool.len());
        }
        if let Encoder::Cpu(layers) = &self.encoder {
            let x = cpu_tower::text_packed(&self.token, &self.position, layers, ids, pool)?;
            return self.final_ln.forward(&x);
        }
        let x = self.token.forward(ids)?.broadcast_add(&self.position.narrow(0, 0, t)?)?;
        let x = self.final_ln.forward(&self.encoder.forward(x, true)?)?;
        let rows: Vec<u32> = pool.iter().enumerate().map(|(i, &p)| (i * t + p) as u32).collect();
        let rows = Tensor::new(rows.as_slice(), ids.device())?;
        x.reshape((b * t, ()))?.index_select(&rows, 0)
    }
}

struct VisionTower {
    class: Tensor,
    patch: PatchConv,
    /// The patch embedding as one product, for the CPU layers.
    patches: Option<Patches>,
    position: Tensor,
    pre_ln: LayerNorm,
    encoder: Encoder,
    post_ln: LayerNorm,
}

impl VisionTower {
    fn new(vb: VarBuilder, c: &VisionConfig, kernels: bool, compute: Compute) -> Result<Self> {
        let emb = vb.pp("embeddings");
        let grid = c.image_size / c.patch_size;
        let conv = Conv2dConfig { stride: c.patch_size, ..Default::default() };
        let patch = conv2d_no_bias(3, c.hidden_size, c.patch_size, conv, emb.pp("patch_embedding"))?;
        Ok(VisionTower {
            class: emb.get(c.hidden_size, "class_embedding")?,
            patches: kernels.then(|| Patches::new(patch.weight())).transpose()?,
            patch: PatchConv::new(patch, compute)?,
            position: emb.get((grid * grid + 1, c.hidden_size), "position_embedding.weight")?,
            // Sic: transformers spells it "pre_layrnorm".
            pre_ln: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("pre_layrnorm"))?,
            encoder: Encoder::new(
                layers(
                    vb.pp("encoder"),
                    c.num_hidden_layers,
                    Shape::of(
                        c.hidden_size,
                        c.intermediate_size,
                        c.num_attention_heads,
                        c.layer_norm_eps,
                        c.hidden_act,
                    ),
                    compute,
                )?,
                kernels,
            )?,
            post_ln: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("post_layernorm"))?,
        })
    }

    /// `pixels` is (batch, 3, size, size), already normalised.
    fn forward(&self, pixels: &Tensor) -> Result<Tensor> {
        let b = pixels.dim(0)?;
        if let (Encoder::Cpu(layers), Some(patches)) = (&self.encoder, &self.patches) {
            let x = self.pre_ln.forward(&patches.embed(pixels, &self.class, &self.position)?)?;
            let (b, t, c) = x.dims3()?;
            let mut v = x.flatten_all()?.to_vec1::<f32>()?;
            // Only the class token (row 0) is pooled.
            let class = run_layers(layers, &mut v, &Seqs::plain(&vec![t; b]), Some(&vec![0; b]), false);
            return self.post_ln.forward(&Tensor::from_vec(class, (b, c), pixels.device())?);
        }
        let patches = self.patch.forward(pixels)?.flatten_from(2)?.transpose(1, 2)?;
        let class = self.class.reshape((1, 1, ()))?.repeat((b, 1, 1))?;
        let x = Tensor::cat(&[&class, &patches], 1)?.broadcast_add(&self.position)?;
        let x = self.encoder.forward(self.pre_ln.forward(&x)?, false)?;
        self.post_ln.forward(&x.narrow(1, 0, 1)?.squeeze(1)?)
    }
}

pub struct ClipModel {
    text: TextTower,
    vision: VisionTower,
    text_projection: Proj,
    visual_projection: Proj,
}

fn l2_normalize(x: &Tensor) -> Result<Tensor> {
    x.broadcast_div(&x.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?)
}

impl ClipModel {
    /// With `kernels` (CPU, f32 only) the encoder layers run on
    /// `cpu_layer`'s kernels, else on candle's ops with their products in
    /// `compute`'s type.
    fn new(vb: VarBuilder, c: &ClipConfig, kernels: bool, compute: Compute) -> Result<Self> {
        let (t, v) = (&c.text_config, &c.vision_config);
        Ok(ClipModel {
            text: TextTower::new(vb.pp("text_model"), t, kernels, compute)?,
            vision: VisionTower::new(vb.pp("vision_model"), v, kernels, compute)?,
            text_projection: Proj::new(
                linear_no_bias(t.hidden_size, c.projection_dim, vb.pp("text_projection"))?,
                compute,
            )?,
            visual_projection: Proj::new(
                linear_no_bias(v.hidden_size, c.projection_dim, vb.pp("visual_projection"))?,
                compute,
            )?,
        })
    }

    /// Unit-length text embeddings, (batch, projection_dim).
    pub fn encode_text(&self, ids: &Tensor, pool: &[usize]) -> Result<Tensor> {
        l2_normalize(&self.text_projection.forward(&self.text.forward(ids, pool)?)?)
    }

    /// Unit-length image embeddings, (batch, projection_dim).
    pub fn encode_images(&self, pixels: &Tensor) -> Result<Tensor> {
        l2_normalize(&self.visual_projection.forward(&self.vision.forward(pixels)?)?)
    }
}

/// Loads `model.safetensors` (any float dtype, computed in f32); on the
/// CPU the encoder layers run on our kernels.
pub fn load(weights: &std::path::Path, config: &ClipConfig, device: &Device) -> Result<ClipModel> {
    load_precision(weights, config, device, Precision::F32)
}

/// As `load`, with the products in `precision` (`precision.rs`): bf16 and
/// f16 run on candle's ops (on the CPU too, emulated there).
pub fn load_precision(
    weights: &std::path::Path,
    config: &ClipConfig,
    device: &Device,
    precision: Precision,
) -> Result<ClipModel> {
    let kernels = device.is_cpu() && precision == Precision::F32;
    load_with(weights, config, device, kernels, precision.compute(device.is_cpu()))
}

/// As `load`, but every layer on candle's ops on every device: the
/// reference the CPU kernels are benchmarked and tested against.
pub fn load_candle_ops(weights: &std::path::Path, config: &ClipConfig, device: &Device) -> Result<ClipModel> {
    load_with(weights, config, device, false, Compute::F32)
}

fn load_with(
    weights: &std::path::Path,
    config: &ClipConfig,
    device: &Device,
    kernels: bool,
    compute: Compute,
) -> Result<ClipModel> {
    // Safety: the file is memory-mapped read-only; it must not be truncated while loaded.
    let tensors = unsafe { candle_core::safetensors::MmapedSafetensors::new(weights)? };
    let names: Vec<String> = tensors.tensors().into_iter().map(|(name, _)| name).collect();
    // Msg, not msg(): a refusal to read, with no backtrace under RUST_BACKTRACE.
    config.check_layers(&names).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
    let vb = VarBuilder::from_backend(Box::new(tensors), DType::F32, device.clone());
    ClipModel::new(vb, config, kernels, compute)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rng::SplitMix64;
    use crate::scoring::testing::{random_weights, tiny_config};

    /// The CPU layers and candle's agree on every activation, with and
    /// without the causal mask.
    #[test]
    fn cpu_layers_match_candle_layers() {
        for act in [Activation::QuickGelu, Activation::Gelu] {
            let c = tiny_config(act, 20).vision_config;
            let vb = VarBuilder::from_tensors(random_weights(&tiny_config(act, 20), 9), DType::F32, &Device::Cpu);
            let vb = vb.pp("vision_model").pp("encoder");
            let (n, h, i, heads) = (c.num_hidden_layers, c.hidden_size, c.intermediate_size, c.num_attention_heads);
            let s = Shape::of(h, i, heads, c.layer_norm_eps, act);
            let cpu = Encoder::new(layers(vb.clone(), n, s, Compute::F32).unwrap(), true).unwrap();
            let candle = Encoder::new(layers(vb, n, s, Compute::F32).unwrap(), false).unwrap();
            let (b, t) = (3, 7);
            let mut rng = SplitMix64::new(1);
            let x: Vec<f32> = (0..b * t * h).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
            let x = Tensor::from_vec(x, (b, t, h), &Device::Cpu).unwrap();
            for causal in [false, true] {
                let got = cpu.forward(x.clone(), causal).unwrap();
                let want = candle.forward(x.clone(), causal).unwrap();
                let diff = (got - want).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap();
                assert!(diff.to_scalar::<f32>().unwrap() < 1e-5, "{act:?} causal={causal}");
            }
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tower_tests;
