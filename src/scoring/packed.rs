//! The CPU layers' projections against weights packed once at load: panels
//! of 16 output columns, each (k, 16) contiguous, read by an AVX2+FMA
//! kernel of 6 rows × 16 columns, or, where the CPU has AVX-512, one of 8
//! rows × 32 columns (two panels; twice the lanes per multiply-add, which
//! is what PyTorch's own kernels use there). The `gemm` crate repacks (or
//! reads strided) the weights on every call, which costs most when few
//! rows meet many weights (one image: 50 rows; one caption: about 14).
//! Without AVX2+FMA, or with a width that is not a multiple of 16, the
//! weights stay row-major and the `gemm` crate does the product.
use super::aligned::AlignedBuf;
use super::config::Activation;
use super::kernels::{activate, matmul, View};
use rayon::prelude::*;
use std::ops::Range;

/// Output columns per panel: two 8-lane registers.
const NR: usize = 16;
/// Depth per pass: a panel's slice (`KC` × 16 floats, 16 KiB) stays in L1
/// while every row block goes past it.
const KC: usize = 256;
/// Rows per group of row blocks: about `MC` × `KC` of the input stays in L2.
const MC: usize = 72;

/// A (k, n) weight matrix, as `x · w` reads it.
pub struct Packed {
    k: usize,
    n: usize,
    data: AlignedBuf,
    /// The kernel reading the panels; none: row-major, for the `gemm` crate.
    panels: Option<Isa>,
}

/// The packed kernels, by the instructions they need.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Isa {
    Avx2,
    Avx512,
    /// bf16 tiles on three parts of each f32 (`amx`); the weights as those parts.
    Amx,
}

/// Every packed kernel this CPU runs, fastest last.
fn kernels_here() -> Vec<Isa> {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        let avx512 = avx2 && std::is_x86_feature_detected!("avx512f");
        // HARDNEG_CLIP_AMX=0 keeps to the f32 kernels (for comparisons).
        let amx = avx512 && std::env::var("HARDNEG_CLIP_AMX").map_or(true, |v| v != "0") && amx::available();
        [(avx2, Isa::Avx2), (avx512, Isa::Avx512), (amx, Isa::Amx)]
            .into_iter()
            .filter(|(ok, _)| *ok)
            .map(|(_, isa)| isa)
            .collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

/// A raw pointer shared by tasks that write disjoint columns of one matrix.
#[derive(Clone, Copy)]
struct Shared(*mut f32);
// Safety: every task writes only its own panels' columns (see `matmul_acc`).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Through a method, so that closures capture the `Send` wrapper, not the bare pointer.
    fn ptr(self) -> *mut f32 {
        self.0
    }
}

impl Packed {
    /// `w` is (k, n) row-major.
    pub fn new(w: Vec<f32>, k: usize, n: usize) -> Self {
        assert_eq!(w.len(), k * n, "Packed: {k}x{n} weights from {} values", w.len());
        let best = kernels_here().pop();
        Self::with_layout(w, k, n, best.filter(|_| n.is_multiple_of(NR)))
    }

    fn with_layout(w: Vec<f32>, k: usize, n: usize, panels: Option<Isa>) -> Self {
        match panels {
            None => return Packed { k, n, data: AlignedBuf::from_slice(&w), panels },
            #[cfg(target_arch = "x86_64")]
            Some(Isa::Amx) => return Packed { k, n, data: amx::pack(&w, k, n), panels },
            _ => {}
        }
        let mut data = AlignedBuf::zeroed(k * n);
        for (p, panel) in data.chunks_exact_mut(k * NR).enumerate() {
            for (kk, row) in panel.chunks_exact_mut(NR).enumerate() {
                row.copy_from_slice(&w[kk * n + p * NR..kk * n + (p + 1) * NR]);
            }
        }
        Packed { k, n, data, panels }
    }

    /// Rows (the input width).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns (the output width).
    pub fn n(&self) -> usize {
        self.n
    }

    /// `dst += x · w`: `dst` is (m, n) with row stride `dst_rs`, `x` is
    /// (m, k) with row stride `x_rs`. `threads` > 1 splits the panels over
    /// the rayon pool.
    pub fn matmul_acc(&self, dst: &mut [f32], dst_rs: usize, x: &[f32], x_rs: usize, m: usize, threads: usize) {
        self.product(0..self.n, Epilogue::ACC, dst, dst_rs, x, x_rs, m, threads)
    }

    /// As `matmul_acc` with only the weights' columns `cols` (multiples of
    /// 16 apart from the ends), `dst`'s column 0 being column `cols.start`,
    /// and what `e` says around the product.
    #[allow(clippy::too_many_arguments)]
    pub fn product(
        &self,
        cols: Range<usize>,
        e: Epilogue,
        dst: &mut [f32],
        dst_rs: usize,
        x: &[f32],
        x_rs: usize,
        m: usize,
        threads: usize,
    ) {
        let (k, n) = (self.k, cols.len());
        if m == 0 || n == 0 {
            return;
        }
        assert!(
            cols.end <= self.n
                && dst_rs >= n
                && x_rs >= k
                && dst.len() >= (m - 1) * dst_rs + n
                && x.len() >= (m - 1) * x_rs + k
                && e.bias.is_none_or(|b| b.len() == n),
            "Packed::matmul_acc: ({m}x{k}) · ({k}x{n}) does not fit its slices"
        );
        let Some(isa) = self.panels else {
            // The `gemm` crate, the bias and the activation as passes of their own.
            for row in dst.chunks_mut(dst_rs).take(m) {
                let row = &mut row[..n];
                if !e.acc {
                    row.fill(0.0);
                }
                if let Some(bias) = e.bias {
                    row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
                }
            }
            let (x, w) = (View::rows(x, x_rs), View::rows(&self.data[cols.start..], self.n));
            matmul(dst, dst_rs, x, w, (m, n, k), 1.0, true, threads);
            if e.quick_gelu {
                dst.chunks_mut(dst_rs).take(m).for_each(|row| activate(Activation::QuickGelu, &mut row[..n], 1));
            }
            return;
        };
        assert!(
            cols.start.is_multiple_of(NR) && n.is_multiple_of(NR),
            "Packed::matmul_acc: columns {cols:?} are not whole panels"
        );
        let (first, panels) = (cols.start / NR, n / NR);
        // A few tasks per thread: on a shared machine a thread that loses its
        // core for a while leaves its remaining tasks to the others. Whole
        // pairs of panels per task for the AVX-512 kernel, which takes two
        // at a time (a lone panel runs at about half its speed).
        let unit = if isa == Isa::Avx2 { 1 } else { 2 };
        let units = panels.div_ceil(unit);
        let tasks = if threads > 1 { (3 * threads).min(units) } else { 1 };
        let task_panels = |t: usize| first + (unit * (units * t / tasks)).min(panels);
        let out = Shared(dst.as_mut_ptr());
        #[cfg(target_arch = "x86_64")]
        let split = (isa == Isa::Amx).then(|| amx::Split::new(x, x_rs, (m, k), threads));
        let run = |t: usize| {
            // Safety: the asserts above keep every row and panel inside the
            // slices; task `t` writes only columns of panels
            // `task_panels(t)..task_panels(t + 1)`, disjoint from the others'.
            #[cfg(target_arch = "x86_64")]
            if let Some(split) = &split {
                let (w, kp) = (self.data.as_ptr().cast::<u16>(), amx::padded(k));
                return unsafe {
                    amx::gemm(out.ptr(), dst_rs, split, w, kp, e, first, task_panels(t)..task_panels(t + 1))
                };
            }
            #[cfg(target_arch = "x86_64")]
            unsafe {
                avx::gemm(
                    out.ptr(),
                    dst_rs,
                    x.as_ptr(),
                    x_rs,
                    (m, k),
                    &self.data,
                    e,
                    first,
                    task_panels(t)..task_panels(t + 1),
                    isa,
                )
            }
            #[cfg(not(target_arch = "x86_64"))]
            unreachable!("panels are only made where AVX2+FMA runs (task {t} of {tasks}, {:p}, {isa:?})", out.ptr());
        };
        if tasks > 1 {
            (0..tasks).into_par_iter().for_each(run);
        } else {
            run(0);
        }
    }
}

/// What surrounds a product `x · w` written into `dst`.
#[derive(Clone, Copy)]
pub struct Epilogue<'a> {
    /// Add the product to what `dst` holds, else overwrite it.
    pub acc: bool,
    /// Added to every row (one value per column written).
    pub bias: Option<&'a [f32]>,
    /// QuickGELU on the sum, as `kernels::activate` computes it.
    pub quick_gelu: bool,
}

impl<'a> Epilogue<'a> {
    pub const ACC: Epilogue<'static> = Epilogue { acc: true, bias: None, quick_gelu: false };

    /// `dst = bias + x · w`, or `dst += bias + x · w` with `acc`.
    pub fn bias(bias: &'a [f32], acc: bool) -> Self {
        Epilogue { acc, bias: Some(bias), quick_gelu: false }
    }
}

#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "x86_64")]
mod avx;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rng::SplitMix64;
    use candle_core::{Device, Tensor, D};

    /// Row-major and every packed kernel this CPU runs.
    fn layouts() -> Vec<Option<Isa>> {
        std::iter::once(None).chain(kernels_here().into_iter().map(Some)).collect()
    }

    /// Values in ±`scale`.
    fn random(n: usize, seed: u64, scale: f32) -> Vec<f32> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32 * scale).collect()
    }

    /// Every row-block split (m = 1..13, past a group of 72 rows, 106
    /// rows in blocks of 8 and 7 for AVX-512, 6 and 5 for AVX2), a
    /// depth past one pass (300 > 256), strided rows, both layouts and
    /// thread counts: the same as candle's matmul. Inputs scaled by
    /// 1/sqrt(k), as a layer norm's output meets its weights, so that
    /// sums stay near 1 and 1e-6 means the same as for the other kernels;
    /// what the product adds to, like a bias, within ±0.1.
    #[test]
    fn panels_and_row_major_match_candle() {
        let (k, n) = (300, 48);
        let w = random(k * n, 1, 1.0);
        let wt = Tensor::from_slice(&w, (k, n), &Device::Cpu).unwrap();
        for panels in layouts() {
            let packed = Packed::with_layout(w.clone(), k, n, panels);
            for m in (1..=13).chain([80, 106]) {
                let (x_rs, dst_rs) = (k + 3, n + 5);
                let x = random(m * x_rs, m as u64, (k as f32).powf(-0.5));
                let start = random(m * dst_rs, 100 + m as u64, 0.1);
                let t = |v: &[f32], cols: usize, used: usize| {
                    Tensor::from_slice(v, (m, cols), &Device::Cpu).unwrap().narrow(D::Minus1, 0, used).unwrap()
                };
                let want = (t(&start, dst_rs, n) + t(&x, x_rs, k).matmul(&wt).unwrap()).unwrap();
                let want: Vec<Vec<f32>> = want.to_vec2().unwrap();
                for threads in [1, 2] {
                    let mut got = start.clone();
                    packed.matmul_acc(&mut got, dst_rs, &x, x_rs, m, threads);
                    for ((got, start), want) in got.chunks(dst_rs).zip(start.chunks(dst_rs)).zip(&want) {
                        let diff = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
                        assert!(diff < 1e-6, "panels={panels:?} m={m} threads={threads}: {diff}");
                        // Padding columns past n are left alone.
                        assert_eq!(got[n..], start[n..]);
                    }
                }
            }
        }
    }

    /// A range of whole panels (any columns, row-major) and every
    /// epilogue give the unfused computation on candle, that is
    /// `act(start + bias + x · w[.., cols])`, the bias on the first pass
    /// over k (300 > 256) and QuickGELU on the last.
    #[test]
    fn column_ranges_and_epilogues_match_candle() {
        let (k, n, m) = (300, 64, 9);
        let (w, x) = (random(k * n, 3, 1.0), random(m * k, 4, (k as f32).powf(-0.5)));
        let (bias, start) = (random(n, 5, 0.1), random(m * n, 6, 0.1));
        let t = |v: &[f32], shape: (usize, usize)| Tensor::from_slice(v, shape, &Device::Cpu).unwrap();
        for panels in layouts() {
            let packed = Packed::with_layout(w.clone(), k, n, panels);
            // One panel, an odd number (a lone panel after pairs), all of them.
            for (cols, threads) in [(16..48, 2), (0..16, 1), (16..64, 1), (16..64, 2), (0..64, 2)] {
                let nc = cols.len();
                let w_cols = t(&w, (k, n)).narrow(1, cols.start, nc).unwrap();
                let product = t(&x, (m, k)).matmul(&w_cols.contiguous().unwrap()).unwrap();
                for (acc, with_bias, quick_gelu) in [
                    (true, false, false),
                    (false, false, false),
                    (false, true, false),
                    (true, true, false),
                    (false, true, true),
                ] {
                    let mut want = product.clone();
                    if acc {
                        want = (want + t(&start[..m * nc], (m, nc))).unwrap();
                    }
                    if with_bias {
                        want = want.broadcast_add(&t(&bias[..nc], (1, nc))).unwrap();
                    }
                    if quick_gelu {
                        want = (&want * candle_nn::ops::sigmoid(&(&want * 1.702).unwrap()).unwrap()).unwrap();
                    }
                    let e = Epilogue { acc, bias: with_bias.then(|| &bias[..nc]), quick_gelu };
                    let mut got = start[..m * nc].to_vec();
                    packed.product(cols.clone(), e, &mut got, nc, &x, k, m, threads);
                    let want = want.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                    let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
                    assert!(
                        diff < 1e-6,
                        "panels={panels:?} {cols:?} acc={acc} bias={with_bias} gelu={quick_gelu}: {diff}"
                    );
                }
            }
        }
    }

    /// A depth of three passes for the AMX kernel (768 each, the last one
    /// short) and of several for the others, over one row tile, a pair and
    /// a tail, and past a chunk of 256 rows: `start + bias + x · w`.
    #[test]
    fn deep_products_match_candle() {
        let (k, n) = (1600, 48);
        let w = random(k * n, 7, 1.0);
        let bias = random(n, 8, 0.1);
        let wt = Tensor::from_slice(&w, (k, n), &Device::Cpu).unwrap();
        for panels in layouts() {
            let packed = Packed::with_layout(w.clone(), k, n, panels);
            for m in [5, 40, 300] {
                let x = random(m * k, 9 + m as u64, (k as f32).powf(-0.5));
                let start = random(m * n, 10 + m as u64, 0.1);
                let t = |v: &[f32], shape: (usize, usize)| Tensor::from_slice(v, shape, &Device::Cpu).unwrap();
                let want = (t(&start, (m, n)) + t(&x, (m, k)).matmul(&wt).unwrap()).unwrap();
                let want = want.broadcast_add(&t(&bias, (1, n))).unwrap().flatten_all().unwrap();
                let want = want.to_vec1::<f32>().unwrap();
                for threads in [1, 2] {
                    let mut got = start.clone();
                    packed.product(0..n, Epilogue::bias(&bias, true), &mut got, n, &x, k, m, threads);
                    let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
                    // 1,600 f32 terms: candle's rounding alone is up to ~2.4e-6 off ours.
                    assert!(diff < 5e-6, "panels={panels:?} m={m} threads={threads}: {diff}");
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn refuses_inputs_past_their_slices() {
        let w = Packed::new(vec![1.0; 4 * 16], 4, 16);
        w.matmul_acc(&mut [0.0; 16], 16, &[1.0; 7], 4, 2, 1);
    }
}
