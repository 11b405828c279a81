//! The CPU towers against candle's, and the CPU layers' layouts against each other.
use super::*;
use crate::domain::rng::SplitMix64;
use crate::scoring::cpu_layer::{run_layers, Scratch};
use crate::scoring::seqs::Seqs;
use crate::scoring::testing::{random_weights, tiny_config};

fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar().unwrap()
}

/// Both towers on the CPU paths (packed captions, the patch embedding as
/// a product) give candle's embeddings: captions of varied lengths, with
/// tokens after the pooled position that must not matter, sharing their
/// first tokens (one wholly), and batches of 1, 2 and 5.
#[test]
fn cpu_towers_match_candle_towers() {
    let config = tiny_config(Activation::QuickGelu, 20);
    let vb = || VarBuilder::from_tensors(random_weights(&config, 3), DType::F32, &Device::Cpu);
    let (kernels, ops) = (
        ClipModel::new(vb(), &config, true, Compute::F32).unwrap(),
        ClipModel::new(vb(), &config, false, Compute::F32).unwrap(),
    );
    let mut rng = SplitMix64::new(5);
    let size = config.vision_config.image_size;
    for b in [1, 2, 5] {
        let t = 9;
        let mut ids: Vec<u32> = (0..b * t).map(|_| (rng.next_f64() * 20.0) as u32).collect();
        // Row i starts with row 0's first 2i tokens.
        for i in 1..b {
            let (first, row) = ids.split_at_mut(i * t);
            row[..2 * i].copy_from_slice(&first[..2 * i]);
        }
        let ids = Tensor::from_vec(ids, (b, t), &Device::Cpu).unwrap();
        let pool: Vec<usize> = (0..b).map(|i| [8, 2, 5, 0, 6][i]).collect();
        let (got, want) = (kernels.encode_text(&ids, &pool).unwrap(), ops.encode_text(&ids, &pool).unwrap());
        assert!(max_diff(&got, &want) < 1e-5, "texts, batch {b}");
        let pixels: Vec<f32> = (0..b * 3 * size * size).map(|_| rng.next_f64() as f32 * 4.0 - 2.0).collect();
        let pixels = Tensor::from_vec(pixels, (b, 3, size, size), &Device::Cpu).unwrap();
        let (got, want) = (kernels.encode_images(&pixels).unwrap(), ops.encode_images(&pixels).unwrap());
        assert!(max_diff(&got, &want) < 1e-5, "images, batch {b}");
    }
    let ids = Tensor::zeros((2, 4), DType::U32, &Device::Cpu).unwrap();
    assert!(kernels.encode_text(&ids, &[1, 4]).is_err(), "a pooled position past the tokens");
}

/// The vision tower's CPU layers of the tiny config, their width, and
/// random inputs for sequences of `lens` rows.
fn cpu_layers(lens: &[usize]) -> (Vec<CpuLayer>, Vec<f32>) {
    let config = tiny_config(Activation::QuickGelu, 20);
    let vb = VarBuilder::from_tensors(random_weights(&config, 4), DType::F32, &Device::Cpu);
    let c = &config.vision_config;
    let (n, h, i, heads) = (c.num_hidden_layers, c.hidden_size, c.intermediate_size, c.num_attention_heads);
    let shape = Shape::of(h, i, heads, c.layer_norm_eps, c.hidden_act);
    let built = layers(vb.pp("vision_model").pp("encoder"), n, shape, Compute::F32).unwrap();
    let mut rng = SplitMix64::new(8);
    let x: Vec<f32> = (0..lens.iter().sum::<usize>() * h).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
    (built.iter().map(Layer::cpu).collect::<Result<_>>().unwrap(), x)
}

const LENS: [usize; 7] = [7, 30, 1, 12, 50, 3, 9];

/// Causal sequences with every distinct prefix computed once give every
/// position, and every pooled position, what each sequence computed alone
/// gives: prefixes shared by two or more, a sequence wholly inside
/// another, and none.
#[test]
fn shared_prefixes_give_each_sequences_own_rows() {
    let seqs: [&[u32]; 6] =
        [&[0, 1, 2, 3, 4], &[0, 1, 2, 5], &[0, 1, 2, 3, 4], &[0, 1], &[6, 1, 2], &[0, 1, 2, 3, 7, 8]];
    let lens: Vec<usize> = seqs.iter().map(|s| s.len()).collect();
    let (cpu, table) = cpu_layers(&[9, 9]);
    let h = table.len() / 18;
    // A row per (token, position), as the text tower's embeddings are.
    let embed = |token: u32, pos: u32| -> Vec<f32> {
        let (t, p) = (&table[token as usize * h..][..h], &table[(9 + pos as usize) * h..][..h]);
        t.iter().zip(p).map(|(t, p)| t + p).collect()
    };
    let mut alone: Vec<f32> =
        seqs.iter().flat_map(|s| s.iter().enumerate().flat_map(|(p, &t)| embed(t, p as u32))).collect();
    let (shared, rows) = Seqs::shared(&seqs);
    assert_eq!(shared.rows(), 11);
    let mut x: Vec<f32> = rows.iter().flat_map(|&(t, p)| embed(t, p)).collect();
    let plain = Seqs::plain(&lens);
    let pool = shared.last_positions();
    let pooled = run_layers(&cpu, &mut x.clone(), &shared, Some(&pool), true);
    assert_eq!(pooled, run_layers(&cpu, &mut x.clone(), &shared, Some(&pool), true), "deterministic");
    run_layers(&cpu, &mut x, &shared, None, true);
    run_layers(&cpu, &mut alone, &plain, None, true);
    let mut diff = 0f32;
    for (seq, &len) in lens.iter().enumerate() {
        for pos in 0..len {
            let (a, b) = (&x[shared.row(seq, pos) * h..][..h], &alone[plain.row(seq, pos) * h..][..h]);
            diff = a.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(diff, f32::max);
        }
        let (a, b) = (&pooled[seq * h..][..h], &alone[plain.row(seq, len - 1) * h..][..h]);
        diff = a.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(diff, f32::max);
    }
    assert!(diff < 1e-6, "{diff}");
}

/// The last layer computed at the pooled rows alone gives those rows of
/// the run over every row: pooled rows first, last and in between, causal
/// or not.
#[test]
fn pooled_last_layer_gives_the_full_runs_rows() {
    let (cpu, x) = cpu_layers(&LENS);
    let pool = [6, 0, 0, 5, 49, 1, 4];
    let h = x.len() / LENS.iter().sum::<usize>();
    let starts = LENS.iter().scan(0, |row, &len| Some(std::mem::replace(row, *row + len)));
    let rows: Vec<usize> = starts.zip(pool).map(|(start, p)| start + p).collect();
    for causal in [false, true] {
        let mut full = x.clone();
        let seqs = Seqs::plain(&LENS);
        assert!(run_layers(&cpu, &mut full, &seqs, None, causal).is_empty());
        assert_ne!(full, x);
        let want: Vec<f32> = rows.iter().flat_map(|r| full[r * h..(r + 1) * h].to_vec()).collect();
        let got = run_layers(&cpu, &mut x.clone(), &seqs, Some(&pool), causal);
        assert_eq!(got.len(), want.len());
        let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-6, "causal={causal}: {diff}");
    }
}

/// Buffers a larger pass left behind (as `run_layers` keeps them per
/// thread) give what fresh ones give, bit for bit.
#[test]
fn buffers_left_by_a_larger_pass_change_nothing() {
    let (cpu, x) = cpu_layers(&LENS);
    let small = [4, 9];
    let h = x.len() / LENS.iter().sum::<usize>();
    let run = |s: &mut Scratch, lens: &[usize], causal: bool| {
        let mut v = x[..lens.iter().sum::<usize>() * h].to_vec();
        let seqs = Seqs::plain(lens);
        cpu[0].fit(s, &seqs);
        cpu.iter().for_each(|layer| layer.forward(&mut v, &seqs, causal, 1, s));
        v
    };
    let fresh = run(&mut Scratch::default(), &small, true);
    let mut used = Scratch::default();
    assert_ne!(run(&mut used, &LENS, false), x);
    assert_eq!(run(&mut used, &small, true), fresh);
}

/// A config counting fewer layers than the weights hold is refused, per
/// tower, naming the field, the count and the layers found; the config
/// that matches loads.
#[test]
fn fewer_configured_layers_than_the_weights_hold_are_refused() {
    use crate::scoring::clip::{ClipEncoder, DeviceChoice};
    let dir = tempfile::tempdir().unwrap();
    let config =
        crate::scoring::testing::write_tiny_checkpoint(dir.path(), Activation::QuickGelu, &["a cat"], 1).unwrap();
    assert!(ClipEncoder::load(dir.path(), DeviceChoice::Cpu).is_ok());
    for tower in ["text", "vision"] {
        let mut c = config.clone();
        match tower {
            "text" => c.text_config.num_hidden_layers = 1,
            _ => c.vision_config.num_hidden_layers = 1,
        }
        std::fs::write(dir.path().join("config.json"), serde_json::to_string(&c).unwrap()).unwrap();
        let e = ClipEncoder::load(dir.path(), DeviceChoice::Cpu).err().expect("refused");
        let e = format!("{e:#}");
        assert!(e.contains(&format!("{tower}_config.num_hidden_layers is 1")), "{e}");
        assert!(e.contains(&format!("{tower} encoder layers up to {tower}_model.encoder.layers.1 (2 in all)")), "{e}");
    }
}
