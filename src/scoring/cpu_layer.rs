//! A CLIP encoder layer on the CPU over plain f32 slices: the same
//! arithmetic as `model::Layer` on candle, in fewer passes. Q, K and V come
//! from one fused matmul; the attention reads its heads in place through
//! strides (no transposes or `contiguous()` copies); biases, residual adds
//! and the softmax scale ride inside the matmuls; layer norm, softmax and
//! the activation are single-pass kernels; buffers are reused across layers.
use super::config::Activation;
use super::kernels::{activate, add_rows, fill_rows, layer_norm, matmul, softmax_row, View};
use candle_core::{Result, Tensor};
use candle_nn::{LayerNorm, Linear};
use rayon::prelude::*;

struct Norm {
    w: Vec<f32>,
    b: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn new(ln: &LayerNorm) -> Result<Self> {
        let b = match ln.bias() {
            Some(b) => b.to_vec1()?,
            None => vec![0.0; ln.weight().dim(0)?],
        };
        Ok(Norm { w: ln.weight().to_vec1()?, b, eps: ln.eps() as f32 })
    }

    fn apply(&self, x: &[f32], out: &mut [f32]) {
        layer_norm(x, &self.w, &self.b, self.eps, out)
    }
}

/// `(in, out)` row-major (the transpose of candle's `(out, in)`), so that
/// `x · w` reads it row by row.
fn transposed(linears: &[&Linear]) -> Result<(Vec<f32>, Vec<f32>)> {
    let w = Tensor::cat(&linears.iter().map(|l| l.weight()).collect::<Vec<_>>(), 0)?;
    let b = Tensor::cat(&linears.iter().map(|l| l.bias().expect("CLIP linears have a bias")).collect::<Vec<_>>(), 0)?;
    Ok((w.t()?.contiguous()?.flatten_all()?.to_vec1()?, b.to_vec1()?))
}

pub struct CpuLayer {
    ln1: Norm,
    /// Q, K and V side by side: (hidden, 3 hidden).
    qkv_w: Vec<f32>,
    qkv_b: Vec<f32>,
    out_w: Vec<f32>,
    out_b: Vec<f32>,
    ln2: Norm,
    fc1_w: Vec<f32>,
    fc1_b: Vec<f32>,
    fc2_w: Vec<f32>,
    fc2_b: Vec<f32>,
    act: Activation,
    heads: usize,
    hidden: usize,
    inner: usize,
}

/// The parts of a candle layer a `CpuLayer` is made of.
pub struct LayerParts<'a> {
    pub ln1: &'a LayerNorm,
    pub q: &'a Linear,
    pub k: &'a Linear,
    pub v: &'a Linear,
    pub out: &'a Linear,
    pub ln2: &'a LayerNorm,
    pub fc1: &'a Linear,
    pub fc2: &'a Linear,
    pub act: Activation,
    pub heads: usize,
}

/// Work buffers of one forward pass, sized for (rows, t) and reused by every layer.
pub struct Scratch {
    h: Vec<f32>,
    qkv: Vec<f32>,
    logits: Vec<f32>,
    heads_out: Vec<f32>,
    attn: Vec<f32>,
    mlp: Vec<f32>,
}

impl CpuLayer {
    pub fn new(p: LayerParts) -> Result<Self> {
        let (qkv_w, qkv_b) = transposed(&[p.q, p.k, p.v])?;
        let (out_w, out_b) = transposed(&[p.out])?;
        let (fc1_w, fc1_b) = transposed(&[p.fc1])?;
        let (fc2_w, fc2_b) = transposed(&[p.fc2])?;
        let (hidden, inner) = (out_b.len(), fc1_b.len());
        Ok(CpuLayer {
            ln1: Norm::new(p.ln1)?,
            ln2: Norm::new(p.ln2)?,
            qkv_w,
            qkv_b,
            out_w,
            out_b,
            fc1_w,
            fc1_b,
            fc2_w,
            fc2_b,
            act: p.act,
            heads: p.heads,
            hidden,
            inner,
        })
    }

    pub fn scratch(&self, batch: usize, t: usize) -> Scratch {
        let rows = batch * t;
        Scratch {
            h: vec![0.0; rows * self.hidden],
            qkv: vec![0.0; rows * 3 * self.hidden],
            logits: vec![0.0; batch * self.heads * t * t],
            heads_out: vec![0.0; rows * self.hidden],
            attn: vec![0.0; rows * self.hidden],
            mlp: vec![0.0; rows * self.inner],
        }
    }

    /// `x` is (batch, t, hidden) row-major, updated in place; with `causal`
    /// each position attends to itself and earlier positions only.
    pub fn forward(&self, x: &mut [f32], t: usize, causal: bool, s: &mut Scratch) {
        let (c, threads) = (self.hidden, rayon::current_num_threads());
        let rows = x.len() / c;
        self.ln1.apply(x, &mut s.h);
        fill_rows(&mut s.qkv, &self.qkv_b);
        matmul(
            &mut s.qkv,
            3 * c,
            View::rows(&s.h, c),
            View::rows(&self.qkv_w, 3 * c),
            (rows, 3 * c, c),
            1.0,
            true,
            threads,
        );
        self.attention(t, causal, s);
        add_rows(x, &self.out_b);
        matmul(x, c, View::rows(&s.attn, c), View::rows(&self.out_w, c), (rows, c, c), 1.0, true, threads);
        self.ln2.apply(x, &mut s.h);
        fill_rows(&mut s.mlp, &self.fc1_b);
        let inner = self.inner;
        matmul(
            &mut s.mlp,
            inner,
            View::rows(&s.h, c),
            View::rows(&self.fc1_w, inner),
            (rows, inner, c),
            1.0,
            true,
            threads,
        );
        activate(self.act, &mut s.mlp);
        add_rows(x, &self.fc2_b);
        matmul(x, c, View::rows(&s.mlp, inner), View::rows(&self.fc2_w, c), (rows, c, inner), 1.0, true, threads);
    }

    /// softmax(q kᵀ / sqrt(d)) v for every (sequence, head), one rayon task
    /// each, reading q, k and v where the fused projection put them.
    fn attention(&self, t: usize, causal: bool, s: &mut Scratch) {
        let (c, heads) = (self.hidden, self.heads);
        let d = c / heads;
        let scale = (d as f32).powf(-0.5);
        let qkv = &s.qkv;
        s.logits.par_chunks_mut(t * t).zip(s.heads_out.par_chunks_mut(t * d)).enumerate().for_each(
            |(p, (logits, y))| {
                let at = (p / heads) * t * 3 * c + (p % heads) * d;
                let q = View::rows(&qkv[at..], 3 * c);
                let k = View::transposed(&qkv[at + c..], 3 * c);
                matmul(logits, t, q, k, (t, t, d), scale, false, 1);
                for (i, row) in logits.chunks_exact_mut(t).enumerate() {
                    softmax_row(row, if causal { i + 1 } else { t });
                }
                matmul(y, d, View::rows(logits, t), View::rows(&qkv[at + 2 * c..], 3 * c), (t, d, t), 1.0, false, 1);
            },
        );
        // (sequence, head, t, d) back to (sequence, t, head · d).
        let heads_out = &s.heads_out;
        s.attn.par_chunks_mut(t * c).enumerate().for_each(|(seq, out)| {
            for (i, row) in out.chunks_exact_mut(c).enumerate() {
                for h in 0..heads {
                    let from = ((seq * heads + h) * t + i) * d;
                    row[h * d..(h + 1) * d].copy_from_slice(&heads_out[from..from + d]);
                }
            }
        });
    }
}
