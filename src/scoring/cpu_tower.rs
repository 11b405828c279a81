//! The towers' CPU paths around the encoder layers (`cpu_layer`): the
//! patch embedding as one product, and captions packed to their pooled
//! positions.
use super::cpu_layer::{run_layers, CpuLayer};
use super::packed::Packed;
use super::seqs::Seqs;
use candle_core::{Module, Result, Tensor};
use candle_nn::Embedding;

/// A stride-`p` `p`×`p` convolution with no bias (CLIP's patch embedding)
/// as (images · patches, 3·p·p) · (3·p·p, hidden).
pub struct Patches {
    w: Packed,
    p: usize,
}

impl Patches {
    /// `weight` is the convolution's (hidden, channels, p, p).
    pub fn new(weight: &Tensor) -> Result<Self> {
        let (hidden, channels, p, _) = weight.dims4()?;
        let k = channels * p * p;
        let w = weight.reshape((hidden, k))?.t()?.contiguous()?.flatten_all()?.to_vec1()?;
        Ok(Patches { w: Packed::new(w, k, hidden), p })
    }

    /// (batch, 1 + patches, hidden): the class embedding, then every patch
    /// (row by row) through the convolution, each plus its position.
    pub fn embed(&self, pixels: &Tensor, class: &Tensor, position: &Tensor) -> Result<Tensor> {
        let (b, channels, size, width) = pixels.dims4()?;
        let (p, grid) = (self.p, size / self.p);
        if width != size || channels * p * p != self.w.k() {
            candle_core::bail!("patches: ({channels}, {size}, {width}) pixels for {p}x{p} patches");
        }
        let (n, k, c) = (grid * grid, self.w.k(), self.w.n());
        let px = pixels.flatten_all()?.to_vec1::<f32>()?;
        // Each patch's pixels in the weight's (channel, row, column) order.
        let mut cols = vec![0f32; b * n * k];
        for (r, row) in cols.chunks_exact_mut(k).enumerate() {
            let (image, gy, gx) = (r / n, (r % n) / grid, r % grid);
            for (i, line) in row.chunks_exact_mut(p).enumerate() {
                let (ch, ky) = (i / p, i % p);
                let from = ((image * channels + ch) * size + gy * p + ky) * size + gx * p;
                line.copy_from_slice(&px[from..from + p]);
            }
        }
        let t = n + 1;
        let mut x = position.flatten_all()?.to_vec1::<f32>()?.repeat(b);
        let class = class.to_vec1::<f32>()?;
        let threads = rayon::current_num_threads();
        for (image, x) in x.chunks_exact_mut(t * c).enumerate() {
            x[..c].iter_mut().zip(&class).for_each(|(x, c)| *x += c);
            self.w.matmul_acc(&mut x[c..], c, &cols[image * n * k..], k, n, threads);
        }
        Tensor::from_vec(x, (b, t, c), pixels.device())
    }
}

/// The text tower's last hidden state at each pooled position, each
/// sequence computed only up to there (under the causal mask nothing after
/// a position reaches it), each distinct prefix of tokens once (`Seqs`).
/// (batch, hidden), before the final layer norm.
pub fn text_packed(
    token: &Embedding,
    position: &Tensor,
    layers: &[CpuLayer],
    ids: &Tensor,
    pool: &[usize],
) -> Result<Tensor> {
    let ids = ids.to_vec2::<u32>()?;
    let tokens: Vec<&[u32]> = ids.iter().zip(pool).map(|(r, &p)| &r[..=p]).collect();
    let (seqs, rows) = Seqs::shared(&tokens);
    let (packed, positions): (Vec<u32>, Vec<u32>) = rows.into_iter().unzip();
    let device = position.device();
    let at = Tensor::new(positions.as_slice(), device)?;
    let x = (token.forward(&Tensor::new(packed.as_slice(), device)?)? + position.index_select(&at, 0)?)?;
    let c = x.dim(1)?;
    let mut v = x.flatten_all()?.to_vec1::<f32>()?;
    let pooled = run_layers(layers, &mut v, &seqs, Some(&seqs.last_positions()), true);
    Tensor::from_vec(pooled, (pool.len(), c), device)
}
