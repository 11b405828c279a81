//! The CPU layers' projections against weights packed once at load: panels
//! of 16 output columns, each (k, 16) contiguous, read by an AVX2+FMA
//! kernel of 6 rows × 16 columns. The `gemm` crate repacks (or reads
//! strided) the weights on every call, which costs most when few rows meet
//! many weights (one image: 50 rows; one caption: about 14).
//! Without AVX2+FMA, or with a width that is not a multiple of 16, the
//! weights stay row-major and the `gemm` crate does the product.
use super::config::Activation;
use super::kernels::{activate, matmul, View};
use rayon::prelude::*;
use std::ops::Range;

/// Output columns per panel: two 8-lane registers.
const NR: usize = 16;
/// Depth per pass: a panel's slice (`KC` × 16 floats, 16 KiB) stays in L1
/// while every row block goes past it.
const KC: usize = 256;
/// Rows per block: `MC` × `KC` of the input stays in L2.
const MC: usize = 72;

/// A (k, n) weight matrix, as `x · w` reads it.
pub struct Packed {
    k: usize,
    n: usize,
    data: Vec<f32>,
    panels: bool,
}

fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
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
        Self::with_layout(w, k, n, has_fma() && n.is_multiple_of(NR))
    }

    fn with_layout(w: Vec<f32>, k: usize, n: usize, panels: bool) -> Self {
        if !panels {
            return Packed { k, n, data: w, panels };
        }
        let mut data = vec![0.0; k * n];
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
        if !self.panels {
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
        }
        assert!(
            cols.start.is_multiple_of(NR) && n.is_multiple_of(NR),
            "Packed::matmul_acc: columns {cols:?} are not whole panels"
        );
        let (first, panels) = (cols.start / NR, n / NR);
        // A few tasks per thread: on a shared machine a thread that loses its
        // core for a while leaves its remaining tasks to the others.
        let tasks = if threads > 1 { (3 * threads).min(panels) } else { 1 };
        let out = Shared(dst.as_mut_ptr());
        let run = |t: usize| {
            // Safety: the asserts above keep every row and panel inside the
            // slices; task `t` writes only columns of panels
            // first + [panels·t/tasks, panels·(t+1)/tasks), disjoint from the others'.
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
                    first + panels * t / tasks..first + panels * (t + 1) / tasks,
                )
            }
            #[cfg(not(target_arch = "x86_64"))]
            unreachable!("panels are only made where AVX2+FMA runs (task {t} of {tasks}, {:p})", out.ptr());
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
mod avx {
    use super::{Epilogue, KC, MC, NR};
    use crate::scoring::kernels::avx::quick_gelu8;
    use std::arch::x86_64::*;

    /// `dst[r][0..16] = act(start[r] + a[r][0..kc] · b)` for `R` rows, `b`
    /// a panel's (kc, 16) slice; `start` is `dst` with `load`, plus `bias`
    /// unless null; the activation is QuickGELU with `gelu`.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel<const R: usize>(
        dst: *mut f32,
        dst_rs: usize,
        a: *const f32,
        a_rs: usize,
        b: *const f32,
        kc: usize,
        (load, bias, gelu): (bool, *const f32, bool),
    ) {
        let mut c = [[_mm256_setzero_ps(); 2]; R];
        for (r, c) in c.iter_mut().enumerate() {
            if load {
                *c = [_mm256_loadu_ps(dst.add(r * dst_rs)), _mm256_loadu_ps(dst.add(r * dst_rs + 8))];
            }
            if !bias.is_null() {
                *c = [_mm256_add_ps(c[0], _mm256_loadu_ps(bias)), _mm256_add_ps(c[1], _mm256_loadu_ps(bias.add(8)))];
            }
        }
        for kk in 0..kc {
            let (b0, b1) = (_mm256_loadu_ps(b.add(kk * NR)), _mm256_loadu_ps(b.add(kk * NR + 8)));
            for (r, c) in c.iter_mut().enumerate() {
                let a = _mm256_broadcast_ss(&*a.add(r * a_rs + kk));
                *c = [_mm256_fmadd_ps(a, b0, c[0]), _mm256_fmadd_ps(a, b1, c[1])];
            }
        }
        for (r, c) in c.iter().enumerate() {
            let c = if gelu { [quick_gelu8(c[0]), quick_gelu8(c[1])] } else { *c };
            _mm256_storeu_ps(dst.add(r * dst_rs), c[0]);
            _mm256_storeu_ps(dst.add(r * dst_rs + 8), c[1]);
        }
    }

    /// `dst = act(start + a · w)` (`e`) over the columns of `panels`,
    /// `dst`'s column 0 being panel `first`'s; the caller checks bounds.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn gemm(
        dst: *mut f32,
        dst_rs: usize,
        a: *const f32,
        a_rs: usize,
        (m, k): (usize, usize),
        w: &[f32],
        e: Epilogue,
        first: usize,
        panels: std::ops::Range<usize>,
    ) {
        for kb in (0..k).step_by(KC) {
            let kc = KC.min(k - kb);
            // The start and the activation ride on the first and the last pass over k.
            let (load, gelu) = (kb > 0 || e.acc, e.quick_gelu && kb + kc == k);
            for ib in (0..m).step_by(MC) {
                let end = (ib + MC).min(m);
                for p in panels.clone() {
                    let b = w.as_ptr().add((p * k + kb) * NR);
                    let bias = match e.bias {
                        Some(bias) if kb == 0 => bias.as_ptr().add((p - first) * NR),
                        _ => std::ptr::null(),
                    };
                    let f = (load, bias, gelu);
                    for i in (ib..end).step_by(6) {
                        let (d, a) = (dst.add(i * dst_rs + (p - first) * NR), a.add(i * a_rs + kb));
                        match end - i {
                            1 => kernel::<1>(d, dst_rs, a, a_rs, b, kc, f),
                            2 => kernel::<2>(d, dst_rs, a, a_rs, b, kc, f),
                            3 => kernel::<3>(d, dst_rs, a, a_rs, b, kc, f),
                            4 => kernel::<4>(d, dst_rs, a, a_rs, b, kc, f),
                            5 => kernel::<5>(d, dst_rs, a, a_rs, b, kc, f),
                            _ => kernel::<6>(d, dst_rs, a, a_rs, b, kc, f),
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rng::SplitMix64;
    use candle_core::{Device, Tensor, D};

    /// Values in ±`scale`.
    fn random(n: usize, seed: u64, scale: f32) -> Vec<f32> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32 * scale).collect()
    }

    /// Every row-block remainder (m = 1..13 and past a block of 72), a
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
        for panels in [true, false] {
            let packed = Packed::with_layout(w.clone(), k, n, panels && has_fma());
            for m in (1..=13).chain([80]) {
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
                        assert!(diff < 1e-6, "panels={panels} m={m} threads={threads}: {diff}");
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
        for panels in [true, false] {
            let packed = Packed::with_layout(w.clone(), k, n, panels && has_fma());
            for (cols, threads) in [(16..48, 2), (0..16, 1), (0..64, 2)] {
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
                        "panels={panels} {cols:?} acc={acc} bias={with_bias} gelu={quick_gelu}: {diff}"
                    );
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
