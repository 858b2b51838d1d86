//! LLM-style sampling over a batch of logits, the way a decoding loop uses top-K: for each sequence
//! of the batch, keep the K largest logits (`topk_kernels::ndarray`), then the smallest prefix of them
//! whose probability reaches `top_p` (nucleus sampling), then draw one token from that prefix.
//!
//! ```text
//! cargo run --example llm_sampling --features ndarray
//! ```
//!
//! The logits come from a made-up model laid out vocabulary-major, `(vocab, batch)`, as a matrix
//! product `W · h` gives them: the batch's rows are its transpose, read in place through ndarray's
//! strides (no copy). The outputs are allocated once and refilled at every step (`topk_into`). The
//! random numbers come from a small seeded generator, so every run prints the same tokens.

use ndarray::{Array2, ArrayView1, Axis};
use topk_kernels::Direction;
use topk_kernels::ndarray::topk_into;

/// Sampling settings, as an inference server takes them.
struct Sampling {
    temperature: f32,
    top_k: usize,
    top_p: f32,
}

/// SplitMix64: a small, seeded, well-mixed generator (enough for an example; not for cryptography).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 24 bits (an f32's precision).
    fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u32 << 24) as f32
    }
}

/// The logits of a made-up model for `batch` sequences at decoding step `step`, vocabulary-major:
/// a few tokens stand out from a long tail, as in a real model's output.
fn logits(vocab: usize, batch: usize, step: usize, rng: &mut SplitMix64) -> Array2<f32> {
    Array2::from_shape_fn((vocab, batch), |(token, row)| {
        let noise = rng.next_f32() * 4.0 - 2.0;
        let favoured = (token * 7 + row * 13 + step * 31).is_multiple_of(997);
        noise + if favoured { 8.0 } else { 0.0 }
    })
}

/// Nucleus sampling over one row's top K: `values` are that row's K largest logits in decreasing
/// order, `tokens` their positions in the vocabulary. Returns the drawn token.
fn sample_row(values: ArrayView1<f32>, tokens: ArrayView1<u32>, settings: &Sampling, rng: &mut SplitMix64) -> u32 {
    // Softmax over the K kept logits, the largest first (stable: subtract the largest).
    let largest = values[0];
    let weights: Vec<f32> = values
        .iter()
        .map(|&v| ((v - largest) / settings.temperature).exp())
        .collect();
    let total: f32 = weights.iter().sum();
    // The smallest prefix whose probability reaches top_p (at least one token).
    let mut mass = 0.0;
    let mut kept = 0;
    for &w in &weights {
        mass += w / total;
        kept += 1;
        if mass >= settings.top_p {
            break;
        }
    }
    // Draw from the prefix, in proportion to the weights.
    let prefix = &weights[..kept];
    let mut target = rng.next_f32() * prefix.iter().sum::<f32>();
    for (j, &w) in prefix.iter().enumerate() {
        if target < w {
            return tokens[j];
        }
        target -= w;
    }
    tokens[kept - 1]
}

fn main() -> Result<(), topk_kernels::Error> {
    let (vocab, batch, steps) = (32_000, 4, 6);
    let settings = Sampling {
        temperature: 0.8,
        top_k: 40,
        top_p: 0.9,
    };
    let mut rng = SplitMix64(0x5EED);
    // The outputs of every step: (batch, top_k), allocated once.
    let mut values = Array2::<f32>::zeros((batch, settings.top_k));
    let mut tokens = Array2::<u32>::zeros((batch, settings.top_k));
    let mut generated = vec![Vec::new(); batch];
    for step in 0..steps {
        let logits = logits(vocab, batch, step, &mut rng);
        // (batch, vocab) through the transpose's strides; the last axis is the vocabulary.
        topk_into(
            &logits.t(),
            settings.top_k,
            -1,
            Direction::Decreasing,
            &mut values,
            &mut tokens,
        )?;
        for (row, (v, t)) in values.axis_iter(Axis(0)).zip(tokens.axis_iter(Axis(0))).enumerate() {
            // The kernel's answer, checked the slow way: the largest logit of the row.
            let best = logits.column(row).iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(v[0], best);
            generated[row].push(sample_row(v, t, &settings, &mut rng));
        }
    }
    for (row, ids) in generated.iter().enumerate() {
        println!("sequence {row}: tokens {ids:?}");
    }
    Ok(())
}
