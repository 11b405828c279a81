//! A CLIP encoder layer on the CPU over plain f32 slices: the same
//! arithmetic as `model::Layer` on candle, in fewer passes. Q, K and V come
//! from one fused matmul; the attention reads its heads in place through
//! strides (no transposes or `contiguous()` copies); biases, residual adds
//! and the softmax scale ride inside the matmuls; layer norm, softmax and
//! the activation are single-pass kernels; buffers are reused across layers.
use super::aligned::AlignedBuf;
use super::config::Activation;
use super::kernels::{activate, layer_norm, matmul, softmax_row, View};
use super::packed::{Epilogue, Packed};
use super::seqs::Seqs;
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

    fn apply(&self, x: &[f32], out: &mut [f32], threads: usize) {
        layer_norm(x, &self.w, &self.b, self.eps, out, threads)
    }
}

/// `(in, out)` (the transpose of candle's `(out, in)`), packed for `x · w`,
/// and the biases side by side.
fn transposed(linears: &[&Linear]) -> Result<(Packed, Vec<f32>)> {
    let w = Tensor::cat(&linears.iter().map(|l| l.weight()).collect::<Vec<_>>(), 0)?;
    let b = Tensor::cat(&linears.iter().map(|l| l.bias().expect("CLIP linears have a bias")).collect::<Vec<_>>(), 0)?;
    let (n, k) = w.dims2()?;
    Ok((Packed::new(w.t()?.contiguous()?.flatten_all()?.to_vec1()?, k, n), b.to_vec1()?))
}

pub struct CpuLayer {
    ln1: Norm,
    /// Q, K and V side by side: (hidden, 3 hidden).
    qkv_w: Packed,
    qkv_b: Vec<f32>,
    out_w: Packed,
    out_b: Vec<f32>,
    ln2: Norm,
    fc1_w: Packed,
    fc1_b: Vec<f32>,
    fc2_w: Packed,
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

/// Work buffers of one forward pass, sized for its sequences
/// (`CpuLayer::fit`) and reused by every layer.
#[derive(Default)]
pub struct Scratch {
    h: AlignedBuf,
    qkv: AlignedBuf,
    /// (sequence, head, longest, longest): each task's own logits.
    logits: AlignedBuf,
    /// (sequence, head, longest, head width).
    heads_out: AlignedBuf,
    attn: AlignedBuf,
    mlp: AlignedBuf,
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

    /// `s` sized for the rows of `seqs`; what it held need not survive (a
    /// buffer that grows past its allocation starts over at zero): every
    /// step writes its buffer before reading it.
    pub fn fit(&self, s: &mut Scratch, seqs: &Seqs) {
        let (rows, longest) = (seqs.rows(), seqs.longest());
        let tasks = seqs.count() * self.heads;
        let c = self.hidden;
        for (v, len) in [
            (&mut s.h, rows * c),
            (&mut s.qkv, rows * 3 * c),
            (&mut s.logits, tasks * longest * longest),
            (&mut s.heads_out, tasks * longest * (c / self.heads)),
            (&mut s.attn, rows * c),
            (&mut s.mlp, rows * self.inner),
        ] {
            v.resize(len);
        }
    }

    /// `x` holds the rows of `seqs`, `hidden` each, updated in place; with
    /// `causal` each position attends to itself and earlier positions only
    /// (and only then may `seqs` share rows). `threads` > 1 splits every
    /// step over the rayon pool; 1 runs it all on this thread.
    pub fn forward(&self, x: &mut [f32], seqs: &Seqs, causal: bool, threads: usize, s: &mut Scratch) {
        let c = self.hidden;
        let rows = x.len() / c;
        assert!(rows == seqs.rows() && (causal || seqs.is_plain()), "CpuLayer: rows and sequences differ");
        if rows == 0 {
            return;
        }
        self.ln1.apply(x, &mut s.h, threads);
        self.qkv_w.product(0..3 * c, Epilogue::bias(&self.qkv_b, false), &mut s.qkv, 3 * c, &s.h, c, rows, threads);
        self.attention(seqs, None, causal, threads, s);
        self.rest(x, threads, s);
    }

    /// As `forward`, but only the row `pool[i]` of each sequence `i`
    /// comes out, as (sequences, hidden): the layer's other rows serve
    /// only as keys and values, so their queries, attention, output
    /// projection and MLP are skipped (a tower's last layer, whose pooled
    /// row is all the embedding reads).
    pub fn forward_pooled(
        &self,
        x: &[f32],
        seqs: &Seqs,
        pool: &[usize],
        causal: bool,
        threads: usize,
        s: &mut Scratch,
    ) -> Vec<f32> {
        let c = self.hidden;
        let rows = x.len() / c;
        assert!(
            rows == seqs.rows() && (causal || seqs.is_plain()) && pool.len() == seqs.count(),
            "CpuLayer: rows, sequences and pooled rows differ"
        );
        let at: Vec<usize> = pool.iter().enumerate().map(|(seq, &p)| seqs.row(seq, p)).collect();
        let mut out = rows_at(x, c, &at);
        if rows == 0 {
            return out;
        }
        self.ln1.apply(x, &mut s.h, threads);
        // Keys and values of every row (columns c.. of the fused weights).
        let (b_q, b_kv) = self.qkv_b.split_at(c);
        self.qkv_w.product(c..3 * c, Epilogue::bias(b_kv, false), &mut s.qkv[c..], 3 * c, &s.h, c, rows, threads);
        // Queries of the pooled rows, into their place in `qkv`.
        let mut q = vec![0.0; at.len() * c];
        self.qkv_w.product(0..c, Epilogue::bias(b_q, false), &mut q, c, &rows_at(&s.h, c, &at), c, at.len(), threads);
        for (row, q) in at.iter().zip(q.chunks_exact(c)) {
            s.qkv[row * 3 * c..][..c].copy_from_slice(q);
        }
        self.attention(seqs, Some(pool), causal, threads, s);
        self.rest(&mut out, threads, s);
        out
    }

    /// The attention's output projection and the MLP, each with its
    /// residual add, over the rows of `x`; `s.attn` holds the attention's
    /// output for those rows.
    fn rest(&self, x: &mut [f32], threads: usize, s: &mut Scratch) {
        let (c, inner) = (self.hidden, self.inner);
        let rows = x.len() / c;
        self.out_w.product(0..c, Epilogue::bias(&self.out_b, true), x, c, &s.attn[..rows * c], c, rows, threads);
        let h = &mut s.h[..rows * c];
        self.ln2.apply(x, h, threads);
        let mlp = &mut s.mlp[..rows * inner];
        // QuickGELU rides in the product; the other activations take a pass.
        let fused = self.act == Activation::QuickGelu;
        let fc1 = Epilogue { quick_gelu: fused, ..Epilogue::bias(&self.fc1_b, false) };
        self.fc1_w.product(0..inner, fc1, mlp, inner, h, c, rows, threads);
        if !fused {
            activate(self.act, mlp, threads);
        }
        self.fc2_w.product(0..c, Epilogue::bias(&self.fc2_b, true), x, c, mlp, inner, rows, threads);
    }

    /// softmax(q kᵀ / sqrt(d)) v for every (sequence, head), one task each,
    /// reading q, k and v where the fused projection put them (a sequence
    /// that reads rows of others gathers its keys and values first); into
    /// `s.attn`, packed: each sequence's own rows, or with `pool` only its
    /// row `pool[i]` (the others still its keys and values).
    fn attention(&self, seqs: &Seqs, pool: Option<&[usize]>, causal: bool, threads: usize, s: &mut Scratch) {
        let (c, heads) = (self.hidden, self.heads);
        let d = c / heads;
        let scale = (d as f32).powf(-0.5);
        let longest = seqs.longest();
        // Each sequence's queries: `n` positions from `first`, in rows from `row` on.
        let queries = |seq: usize| match pool {
            Some(p) => (p[seq], 1, seqs.row(seq, p[seq])),
            None => seqs.own(seq),
        };
        let qkv = &s.qkv;
        let task = |(p, (logits, y)): (usize, (&mut [f32], &mut [f32]))| {
            let (seq, head) = (p / heads, p % heads);
            let (t, (first, n, row)) = (seqs.len(seq), queries(seq));
            if n == 0 {
                return;
            }
            let q = View::rows(&qkv[row * 3 * c + head * d..], 3 * c);
            let gathered: Vec<f32>;
            let (k, v) = if seqs.contiguous(seq) {
                let at = seqs.row(seq, 0) * 3 * c + head * d;
                (View::transposed(&qkv[at + c..], 3 * c), View::rows(&qkv[at + 2 * c..], 3 * c))
            } else {
                // Every position's key, then every position's value: (t, d) each.
                let mut kv = Vec::with_capacity(2 * t * d);
                for part in [c, 2 * c] {
                    for row in seqs.path(seq) {
                        kv.extend_from_slice(&qkv[row * 3 * c + part + head * d..][..d]);
                    }
                }
                gathered = kv;
                (View::transposed(&gathered[..t * d], d), View::rows(&gathered[t * d..], d))
            };
            let logits = &mut logits[..n * t];
            matmul(logits, t, q, k, (n, t, d), scale, false, 1);
            for (i, row) in logits.chunks_exact_mut(t).enumerate() {
                softmax_row(row, if causal { first + i + 1 } else { t });
            }
            matmul(y, d, View::rows(logits, t), v, (n, d, t), 1.0, false, 1);
        };
        let (logit_chunk, y_chunk) = (longest * longest, longest * d);
        if threads > 1 {
            s.logits.par_chunks_mut(logit_chunk).zip(s.heads_out.par_chunks_mut(y_chunk)).enumerate().for_each(task);
        } else {
            s.logits.chunks_mut(logit_chunk).zip(s.heads_out.chunks_mut(y_chunk)).enumerate().for_each(task);
        }
        // (sequence, head, query, d) back to packed (row, head · d).
        let mut rows = s.attn.chunks_exact_mut(c);
        for seq in 0..seqs.count() {
            for (i, row) in rows.by_ref().take(queries(seq).1).enumerate() {
                for h in 0..heads {
                    let from = ((seq * heads + h) * longest + i) * d;
                    row[h * d..(h + 1) * d].copy_from_slice(&s.heads_out[from..from + d]);
                }
            }
        }
    }
}

/// Rows `at` of `v` (rows of `c`), one after another.
fn rows_at(v: &[f32], c: usize, at: &[usize]) -> Vec<f32> {
    at.iter().flat_map(|row| &v[row * c..(row + 1) * c]).copied().collect()
}

/// Every layer over the rows of `seqs` in `x`, each step split over the
/// pool's threads. Without `pool`, `x` ends as every row's output (and
/// nothing is returned); with it, the last layer computes and returns only
/// each sequence's position `pool[i]`, as (sequences, hidden)
/// (`forward_pooled`).
pub fn run_layers(layers: &[CpuLayer], x: &mut [f32], seqs: &Seqs, pool: Option<&[usize]>, causal: bool) -> Vec<f32> {
    let Some(first) = layers.first() else {
        let at: Vec<usize> = pool.unwrap_or_default().iter().enumerate().map(|(seq, &p)| seqs.row(seq, p)).collect();
        return rows_at(x, x.len() / seqs.rows().max(1), &at);
    };
    let threads = rayon::current_num_threads();
    let mut go = |scratch: &mut Scratch| {
        first.fit(scratch, seqs);
        let (all, last) = match pool {
            Some(pool) => (&layers[..layers.len() - 1], layers.last().map(|last| (last, pool))),
            None => (layers, None),
        };
        all.iter().for_each(|layer| layer.forward(x, seqs, causal, threads, scratch));
        last.map_or(Vec::new(), |(last, pool)| last.forward_pooled(x, seqs, pool, causal, threads, scratch))
    };
    // On a worker of the pool: each step's tasks then start from there, not
    // from this thread, which would sleep and wake around every step.
    rayon::scope(|_| {
        // Taken already if this thread got here again while waiting on the pool.
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => go(&mut scratch),
            Err(_) => go(&mut Scratch::default()),
        })
    })
}

thread_local! {
    /// The last forward pass's buffers on this thread, for the next: fresh
    /// ones cost a page fault per 4 KiB and their release an munmap, every
    /// pass (3% of a batch of 32 captions). Kept until the thread ends: at
    /// most the largest pass's (53 MB for 32 images of ViT-B/32).
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}
