//! The three bf16 parts of each f32 (see the parent module), in the tiles'
//! layouts: the weights once at load, the input at every product.
use super::{padded, KT, MT, NR};
use crate::scoring::aligned::AlignedBuf;
use std::arch::x86_64::*;
use std::cell::RefCell;

/// f32 bits to bf16, rounding to nearest even.
fn bf16(b: u32) -> u16 {
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// `x` = hi + mid + lo: 8 significant bits each give f32's 24 back.
fn split(x: f32) -> [u16; 3] {
    let widen = |h: u16| f32::from_bits((h as u32) << 16);
    let hi = bf16(x.to_bits());
    let rest = x - widen(hi);
    let mid = bf16(rest.to_bits());
    [hi, mid, bf16((rest - widen(mid)).to_bits())]
}

/// The (k, n) weights per 16-column panel as three parts, each (padded k
/// / 2) × 16 pairs of rows (the B tile's layout), in f32 storage.
pub(in crate::scoring::packed) fn pack(w: &[f32], k: usize, n: usize) -> AlignedBuf {
    use rayon::prelude::*;
    let kp = padded(k);
    let mut data = AlignedBuf::zeroed(3 * kp * n / 2);
    // Safety: 3 · kp · n u16 fill the buffer exactly (kp is even).
    let parts = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u16>(), 3 * kp * n) };
    // A task per panel: a model's weights take seconds on one thread.
    parts.par_chunks_mut(3 * kp * NR).enumerate().for_each(|(panel, out)| {
        for (row, values) in w.chunks_exact(n).enumerate() {
            for (j, &x) in values[panel * NR..(panel + 1) * NR].iter().enumerate() {
                for (part, v) in split(x).into_iter().enumerate() {
                    out[part * kp * NR + (row / 2) * 2 * NR + j * 2 + row % 2] = v;
                }
            }
        }
    });
    data
}

/// The input's parts, per block of 16 rows: part 0, 1, 2, each per tile
/// step 16 rows × 32 depths (the A tile's layout).
pub(in crate::scoring::packed) struct Split {
    buf: AlignedBuf,
    /// Rows in use (the last block padded with zero rows).
    pub(super) m: usize,
}

thread_local! {
    /// Reused between products (a batch of 32 images needs up to 29 MB).
    static SPLIT: RefCell<Option<AlignedBuf>> = const { RefCell::new(None) };
}

/// u16 per block of 16 rows.
pub(super) fn block_len(kp: usize) -> usize {
    3 * MT * kp
}

impl Split {
    /// `a` (m, k) with row stride `a_rs`, rows padded to 16 with zeros.
    pub(in crate::scoring::packed) fn new(a: &[f32], a_rs: usize, (m, k): (usize, usize), threads: usize) -> Split {
        use rayon::prelude::*;
        let kp = padded(k);
        let mut buf = SPLIT.with(|s| s.borrow_mut().take()).unwrap_or_default();
        buf.resize(m.div_ceil(MT) * block_len(kp) / 2);
        let len = buf.len() * 2;
        // Safety: the buffer holds `len` u16.
        let parts = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u16>(), len) };
        let fill = |(b, block): (usize, &mut [u16])| {
            for r in 0..MT {
                let row = b * MT + r;
                let src = (row < m).then(|| &a[row * a_rs..row * a_rs + k]);
                // Safety: AVX-512 was checked in `available`; `block` holds 16 rows of kp.
                unsafe { split_row(src, kp, &mut block[r * KT..]) }
            }
        };
        if threads > 1 && m > 2 * MT {
            parts.par_chunks_mut(block_len(kp)).enumerate().for_each(fill);
        } else {
            parts.chunks_mut(block_len(kp)).enumerate().for_each(fill);
        }
        Split { buf, m }
    }

    pub(super) fn ptr(&self) -> *const u16 {
        self.buf.as_ptr().cast()
    }
}

impl Drop for Split {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        SPLIT.with(|s| *s.borrow_mut() = Some(buf));
    }
}

/// [`bf16`] in 16 lanes (the bf16 in each lane's low half).
#[inline]
#[target_feature(enable = "avx512f")]
fn round16(b: __m512i) -> __m512i {
    let odd = _mm512_and_si512(_mm512_srli_epi32::<16>(b), _mm512_set1_epi32(1));
    _mm512_srli_epi32::<16>(_mm512_add_epi32(b, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))))
}

/// bf16s (in the lanes' low halves) back to f32.
#[inline]
#[target_feature(enable = "avx512f")]
fn widen16(h: __m512i) -> __m512 {
    _mm512_castsi512_ps(_mm512_slli_epi32::<16>(h))
}

/// One row's three parts into `out` (the row's place in its block: step
/// `s`, part `p` at `p · 16 · kp + s · 512`); zeros past `src` or for none.
#[target_feature(enable = "avx512f")]
unsafe fn split_row(src: Option<&[f32]>, kp: usize, out: &mut [u16]) {
    let k = src.map_or(0, <[f32]>::len);
    for q in (0..kp).step_by(16) {
        let mask: __mmask16 = if q >= k { 0 } else { (((1u32 << (k - q).min(16)) - 1) & 0xffff) as u16 };
        let x = match src {
            Some(src) => _mm512_maskz_loadu_ps(mask, src.as_ptr().add(q.min(k))),
            None => _mm512_setzero_ps(),
        };
        let hi = round16(_mm512_castps_si512(x));
        let rest = _mm512_sub_ps(x, widen16(hi));
        let mid = round16(_mm512_castps_si512(rest));
        let lo = round16(_mm512_castps_si512(_mm512_sub_ps(rest, widen16(mid))));
        let at = (q / KT) * MT * KT + q % KT;
        for (p, v) in [hi, mid, lo].into_iter().enumerate() {
            let dst = out.as_mut_ptr().add(p * MT * kp + at);
            _mm256_storeu_si256(dst.cast(), _mm512_cvtepi32_epi16(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three parts of 8 significant bits each give every f32 back exactly
    /// (24 bits), over values of every size the towers see.
    #[test]
    fn three_parts_rebuild_each_value() {
        let widen = |h: u16| f32::from_bits((h as u32) << 16) as f64;
        let mut x = 1.0e-20f32;
        while x < 1.0e20 {
            for v in [x, -x, x * 1.337, x * (1.0 + f32::EPSILON), x * (1.0 - f32::EPSILON / 2.0)] {
                let [hi, mid, lo] = split(v);
                assert_eq!(widen(hi) + widen(mid) + widen(lo), v as f64, "{v}: {hi:#x} {mid:#x} {lo:#x}");
            }
            x *= 3.7;
        }
        // 1 + 2^-8 is a tie at bf16's precision (rounded to even, 1.0);
        // the rest is exact in the next part.
        assert_eq!(split(1.0 + 2f32.powi(-8)), [0x3f80, 0x3b80, 0]);
    }
}
