//! `hardneg score --dtype`: f32, or bf16/f16 the way PyTorch's `autocast`
//! runs a model: the products (linear layers, attention's two matmuls, the
//! patch convolution) take their inputs and weights in the half type and
//! sum in f32, their outputs rounded to the half type; layer norms,
//! softmax, activations, residual adds and the final normalisation stay in
//! f32. On CUDA the products run in the half type (cuBLAS, f32
//! accumulation: candle's default, as PyTorch's). candle's CPU matmul takes
//! no bf16, so on the CPU the same graph rounds the same values to the half
//! type and multiplies them in f32: the same numbers up to the order of the
//! sums, so the CPU tests the path the GPU runs.
use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Conv2d, Linear};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    #[default]
    F32,
    Bf16,
    F16,
}

impl Precision {
    pub fn parse(s: &str) -> Option<Precision> {
        match s {
            "f32" => Some(Precision::F32),
            "bf16" => Some(Precision::Bf16),
            "f16" => Some(Precision::F16),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::F16 => "f16",
        }
    }

    /// How the products run on a device (`cpu` true: emulated in f32).
    pub fn compute(self, cpu: bool) -> Compute {
        match self {
            Precision::F32 => Compute::F32,
            Precision::Bf16 => Compute::Half { dtype: DType::BF16, emulate: cpu },
            Precision::F16 => Compute::Half { dtype: DType::F16, emulate: cpu },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    F32,
    /// Products in `dtype`; `emulate`: rounded to it, multiplied in f32.
    Half {
        dtype: DType,
        emulate: bool,
    },
}

impl Compute {
    /// A product's input (or weight), in the type the product reads.
    fn input(self, x: &Tensor) -> Result<Tensor> {
        match self {
            Compute::F32 => Ok(x.clone()),
            Compute::Half { dtype, emulate: false } => x.to_dtype(dtype),
            Compute::Half { dtype, emulate: true } => x.to_dtype(dtype)?.to_dtype(DType::F32),
        }
    }

    /// A product's output back in f32, rounded through the half type as
    /// the GPU stores it.
    fn output(self, y: Tensor) -> Result<Tensor> {
        match self {
            Compute::F32 => Ok(y),
            Compute::Half { dtype, .. } => y.to_dtype(dtype)?.to_dtype(DType::F32),
        }
    }

    /// `a.matmul(b)` (attention's two products).
    pub fn matmul(self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        self.output(self.input(a)?.matmul(&self.input(b)?)?)
    }
}

/// A linear layer: in f32 as loaded (what the CPU kernels pack), and its
/// weight in the half type when the products run in one.
pub struct Proj {
    pub full: Linear,
    half: Option<(Compute, Linear)>,
}

impl Proj {
    pub fn new(full: Linear, compute: Compute) -> Result<Proj> {
        let half = match compute {
            Compute::F32 => None,
            c => Some((c, Linear::new(c.input(full.weight())?, None))),
        };
        Ok(Proj { full, half })
    }

    /// The bias is added in f32 after the rounded product.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let Some((c, half)) = &self.half else { return self.full.forward(x) };
        let y = c.output(half.forward(&c.input(x)?)?)?;
        match self.full.bias() {
            Some(b) => y.broadcast_add(b),
            None => Ok(y),
        }
    }
}

/// The patch embedding (no bias), likewise.
pub struct PatchConv {
    pub full: Conv2d,
    half: Option<(Compute, Conv2d)>,
}

impl PatchConv {
    pub fn new(full: Conv2d, compute: Compute) -> Result<PatchConv> {
        let half = match compute {
            Compute::F32 => None,
            c => Some((c, Conv2d::new(c.input(full.weight())?, None, *full.config()))),
        };
        Ok(PatchConv { full, half })
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match &self.half {
            None => self.full.forward(x),
            Some((c, half)) => c.output(half.forward(&c.input(x)?)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for p in [Precision::F32, Precision::Bf16, Precision::F16] {
            assert_eq!(Precision::parse(p.as_str()), Some(p));
        }
        assert_eq!(Precision::parse("fp16"), None);
        assert_eq!(Precision::default(), Precision::F32);
    }

    /// The emulated product sees exactly the bf16 values of its inputs and
    /// rounds its output to bf16 (8 significant bits): 1 + 2^-9 is no bf16
    /// and becomes 1; 1 + 3 * 1.0078125 = 4.0234375 rounds to 4.03125, where
    /// f32 gives 4.025390625.
    #[test]
    fn emulated_bf16_products_round_inputs_and_outputs() {
        let c = Precision::Bf16.compute(true);
        let a = Tensor::new(&[[1.0f32 + 1.0 / 512.0, 1.007_812_5]], &Device::Cpu).unwrap();
        let b = Tensor::new(&[[1.0f32], [3.0]], &Device::Cpu).unwrap();
        let got: Vec<Vec<f32>> = c.matmul(&a, &b).unwrap().to_vec2().unwrap();
        assert_eq!(got, [[4.031_25]]);
        let f32_product: Vec<Vec<f32>> = Precision::F32.compute(true).matmul(&a, &b).unwrap().to_vec2().unwrap();
        assert_eq!(f32_product, [[4.025_390_6]]);
        // The bias joins in f32, after the rounding.
        let lin = Linear::new(
            Tensor::new(&[[1.0f32, 3.0]], &Device::Cpu).unwrap(),
            Some(Tensor::new(&[1e-3f32], &Device::Cpu).unwrap()),
        );
        let p = Proj::new(lin, c).unwrap();
        let y: Vec<Vec<f32>> = p.forward(&a).unwrap().to_vec2().unwrap();
        assert_eq!(y, [[4.031_25 + 1e-3]]);
    }
}
