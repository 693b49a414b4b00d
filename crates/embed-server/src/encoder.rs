//! The BERT encoder of all-MiniLM-L6-v2, fused for CPU inference. Same weights and same math as
//! `candle_transformers::models::bert::BertModel` (kept as [`crate::reference`]), arranged so the
//! time goes into the matrix products:
//!
//! - Sequences are packed back to back (no padding rows): a group of texts of uneven length costs
//!   only its real tokens, and attention never looks at a pad key.
//! - Query, key and value are one product (a 384 × 1152 weight); attention runs per (text, head)
//!   on both cores with the score row kept in cache (scale, softmax and the product with V in one
//!   pass) instead of materialising batch × heads × len × len tensors five times.
//! - Bias + GELU, and bias + residual + LayerNorm, are single passes over the product's output.
//! - exp and erf are branch-free polynomial forms that vectorize (≤ 2e-7 error, far below what
//!   the cosine check can see), compiled for AVX-512 / AVX2+FMA and chosen at run time, so the
//!   binary still runs on any x86-64.
//!
//! The matrix products are candle's (the `gemm` crate, multi-threaded, its AVX-512 kernels enabled
//! in Cargo.toml and chosen at run time too).
use candle_core::{DType, Device, Storage, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use rayon::prelude::*;

type Result<T> = candle_core::Result<T>;

/// The rows of a 2-D contiguous f32 CPU tensor, without copying them.
fn with_rows<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        candle_core::bail!("the encoder runs on the CPU only");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("expected a contiguous tensor");
    };
    Ok(f(&cpu.as_slice::<f32>()?[start..end]))
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

impl Norm {
    fn load(vb: VarBuilder, dims: usize) -> Result<Self> {
        Ok(Norm { gamma: vb.get(dims, "weight")?.to_vec1()?, beta: vb.get(dims, "bias")?.to_vec1()? })
    }
}

/// A dense layer: the weight transposed to (in, out), so `x · w` is a plain row-major product.
struct Dense {
    w: Tensor,
    b: Vec<f32>,
}

impl Dense {
    fn load(vbs: &[VarBuilder], inp: usize, out: usize) -> Result<Self> {
        let mut ws = Vec::new();
        let mut b = Vec::new();
        for vb in vbs {
            ws.push(vb.get((out, inp), "weight")?);
            b.extend(vb.get(out, "bias")?.to_vec1::<f32>()?);
        }
        let w = Tensor::cat(&ws, 0)?.t()?.contiguous()?;
        Ok(Dense { w, b })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.matmul(&self.w)
    }
}

struct Layer {
    qkv: Dense,
    out: Dense,
    ln1: Norm,
    up: Dense,
    down: Dense,
    ln2: Norm,
}

pub struct Encoder {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type0: Vec<f32>,
    emb_ln: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
    eps: f32,
}

impl Encoder {
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let vb =
            if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let h = config.hidden_size;
        let e = vb.pp("embeddings");
        let word = e.get((config.vocab_size, h), "word_embeddings.weight")?.flatten_all()?.to_vec1()?;
        let position = e
            .get((config.max_position_embeddings, h), "position_embeddings.weight")?
            .flatten_all()?
            .to_vec1()?;
        let token_type0 =
            e.get((config.type_vocab_size, h), "token_type_embeddings.weight")?.get(0)?.to_vec1()?;
        let emb_ln = Norm::load(e.pp("LayerNorm"), h)?;
        let mut layers = Vec::new();
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let s = a.pp("self");
            let i_size = config.intermediate_size;
            layers.push(Layer {
                qkv: Dense::load(&[s.pp("query"), s.pp("key"), s.pp("value")], h, h)?,
                out: Dense::load(&[a.pp("output.dense")], h, h)?,
                ln1: Norm::load(a.pp("output.LayerNorm"), h)?,
                up: Dense::load(&[l.pp("intermediate.dense")], h, i_size)?,
                down: Dense::load(&[l.pp("output.dense")], i_size, h)?,
                ln2: Norm::load(l.pp("output.LayerNorm"), h)?,
            });
        }
        let head_dim = h / config.num_attention_heads.max(1);
        if head_dim * config.num_attention_heads != h || !matches!(head_dim, 32 | 64) {
            candle_core::bail!(
                "unsupported attention shape: {h} dims in {} heads",
                config.num_attention_heads
            );
        }
        Ok(Encoder {
            word,
            position,
            token_type0,
            emb_ln,
            layers,
            hidden: h,
            heads: config.num_attention_heads,
            max_positions: config.max_position_embeddings,
            eps: config.layer_norm_eps as f32,
        })
    }

    /// Mean-pooled, L2-normalized vectors of token-id sequences (each with its [CLS]/[SEP]).
    pub fn embed(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let h = self.hidden;
        let mut offsets = Vec::with_capacity(seqs.len() + 1);
        offsets.push(0usize);
        for s in seqs {
            if s.len() > self.max_positions {
                candle_core::bail!("sequence of {} tokens exceeds {} positions", s.len(), self.max_positions);
            }
            offsets.push(offsets[offsets.len() - 1] + s.len());
        }
        let total = offsets[offsets.len() - 1];
        if total == 0 {
            return Ok(vec![vec![0.0; h]; seqs.len()]);
        }
        let vocab = self.word.len() / h;

        // Embeddings: word + position + token type 0, then LayerNorm.
        let mut rows = Vec::with_capacity(total);
        for s in seqs {
            for (p, &id) in s.iter().enumerate() {
                let id = id as usize;
                if id >= vocab {
                    candle_core::bail!("token id {id} outside the vocabulary of {vocab}");
                }
                rows.push((id, p));
            }
        }
        let mut x = vec![0f32; total * h];
        x.par_chunks_mut(h).zip(rows.par_iter()).for_each(|(out, &(id, p))| {
            let word = &self.word[id * h..(id + 1) * h];
            let pos = &self.position[p * h..(p + 1) * h];
            simd::run(
                #[inline(always)]
                || embed_row(out, word, pos, &self.token_type0, &self.emb_ln, self.eps),
            )
        });
        let mut x = Tensor::from_vec(x, (total, h), &Device::Cpu)?;

        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x)?;
            let ctx = with_rows(&qkv, |qkv| attention(qkv, &layer.qkv.b, &offsets, h, self.heads))?;
            let ctx = Tensor::from_vec(ctx, (total, h), &Device::Cpu)?;
            let attn = layer.out.forward(&ctx)?;
            let x1 = with_rows(&attn, |a| {
                with_rows(&x, |res| residual_norm(a, &layer.out.b, res, &layer.ln1, self.eps))
            })??;
            let x1 = Tensor::from_vec(x1, (total, h), &Device::Cpu)?;
            let up = layer.up.forward(&x1)?;
            let act = with_rows(&up, |u| bias_gelu(u, &layer.up.b))?;
            let act = Tensor::from_vec(act, (total, layer.up.b.len()), &Device::Cpu)?;
            let down = layer.down.forward(&act)?;
            let x2 = with_rows(&down, |d| {
                with_rows(&x1, |res| residual_norm(d, &layer.down.b, res, &layer.ln2, self.eps))
            })??;
            x = Tensor::from_vec(x2, (total, h), &Device::Cpu)?;
        }
        debug_assert_eq!(x.dtype(), DType::F32);

        // Mean over each text's tokens, then L2-normalize (sentence-transformers' Pooling with
        // pooling_mode_mean_tokens, then Normalize).
        with_rows(&x, |x| {
            offsets
                .windows(2)
                .map(|w| {
                    let mut mean = vec![0f32; h];
                    for row in x[w[0] * h..w[1] * h].chunks_exact(h) {
                        for (m, v) in mean.iter_mut().zip(row) {
                            *m += v;
                        }
                    }
                    let n = (w[1] - w[0]).max(1) as f32;
                    mean.iter_mut().for_each(|m| *m /= n);
                    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                    mean.iter_mut().for_each(|m| *m /= norm);
                    mean
                })
                .collect()
        })
    }
}

/// Lanes of the lane-wise accumulators: a multiple of every vector width, so that sums vectorize
/// without reassociating floats.
const LANES: usize = 16;
/// Query rows per attention block.
const ROWS: usize = 4;

#[inline(always)]
fn lane_sum(v: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let mut chunks = v.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// LayerNorm of `v` in place: (v − mean) / sqrt(var + eps) · γ + β.
#[inline(always)]
fn norm_in_place(v: &mut [f32], ln: &Norm, eps: f32) {
    let n = v.len() as f32;
    let mean = lane_sum(v) / n;
    let mut acc = [0f32; LANES];
    let mut chunks = v.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            let d = x - mean;
            *a += d * d;
        }
    }
    let var = (acc.iter().sum::<f32>()
        + chunks.remainder().iter().map(|x| (x - mean) * (x - mean)).sum::<f32>())
        / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, g), b) in v.iter_mut().zip(&ln.gamma).zip(&ln.beta) {
        *x = (*x - mean) * inv * g + b;
    }
}

#[inline(always)]
fn embed_row(out: &mut [f32], word: &[f32], pos: &[f32], ty: &[f32], ln: &Norm, eps: f32) {
    for (((o, w), p), t) in out.iter_mut().zip(word).zip(pos).zip(ty) {
        *o = w + p + t;
    }
    norm_in_place(out, ln, eps);
}

/// LayerNorm(a + bias + residual), row by row, on both cores.
fn residual_norm(a: &[f32], bias: &[f32], res: &[f32], ln: &Norm, eps: f32) -> Vec<f32> {
    let h = bias.len();
    let mut out = vec![0f32; a.len()];
    out.par_chunks_mut(h * 64).zip(a.par_chunks(h * 64)).zip(res.par_chunks(h * 64)).for_each(
        |((out, a), res)| {
            simd::run(
                #[inline(always)]
                || {
                    for ((o, a), r) in out.chunks_exact_mut(h).zip(a.chunks_exact(h)).zip(res.chunks_exact(h))
                    {
                        for (((o, a), b), r) in o.iter_mut().zip(a).zip(bias).zip(r) {
                            *o = a + b + r;
                        }
                        norm_in_place(o, ln, eps);
                    }
                },
            )
        },
    );
    out
}

/// GELU(u + bias) with the exact (erf) form BERT was trained with.
fn bias_gelu(u: &[f32], bias: &[f32]) -> Vec<f32> {
    let w = bias.len();
    let mut out = vec![0f32; u.len()];
    out.par_chunks_mut(w * 32).zip(u.par_chunks(w * 32)).for_each(|(out, u)| {
        simd::run(
            #[inline(always)]
            || {
                for (o, u) in out.chunks_exact_mut(w).zip(u.chunks_exact(w)) {
                    for ((o, u), b) in o.iter_mut().zip(u).zip(bias) {
                        let x = u + b;
                        *o = 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
                    }
                }
            },
        )
    });
    out
}

/// Self-attention over packed sequences. `qkv` has one row per token: [q | k | v], each `h` wide
/// (bias not yet added); `offsets` delimit the sequences. Returns the context rows (`h` wide).
fn attention(qkv: &[f32], bias: &[f32], offsets: &[usize], h: usize, heads: usize) -> Vec<f32> {
    let d = h / heads;
    let tasks: Vec<(usize, usize)> =
        (0..offsets.len() - 1).flat_map(|s| (0..heads).map(move |head| (s, head))).collect();
    let parts: Vec<Vec<f32>> = tasks
        .par_iter()
        .map(|&(s, head)| {
            let (start, end) = (offsets[s], offsets[s + 1]);
            let rows = &qkv[start * 3 * h..end * 3 * h];
            match d {
                32 => simd::run(
                    #[inline(always)]
                    || attention_head::<32>(rows, bias, h, head * d),
                ),
                _ => simd::run(
                    #[inline(always)]
                    || attention_head::<64>(rows, bias, h, head * d),
                ),
            }
        })
        .collect();
    let mut ctx = vec![0f32; qkv.len() / 3];
    for (&(s, head), part) in tasks.iter().zip(&parts) {
        let start = offsets[s];
        for (i, row) in part.chunks_exact(d).enumerate() {
            let at = (start + i) * h + head * d;
            ctx[at..at + d].copy_from_slice(row);
        }
    }
    ctx
}

/// One head of one sequence: softmax(q·kᵀ / √d) · v for every query row, `d` wide.
#[inline(always)]
fn attention_head<const D: usize>(qkv: &[f32], bias: &[f32], h: usize, col: usize) -> Vec<f32> {
    let d = D;
    let len = qkv.len() / (3 * h);
    // Keys transposed (d × padded len, zero padded) so a score row is d vector updates; the
    // padded tail of a score row is masked before the softmax.
    let padded = len.div_ceil(LANES) * LANES;
    let scale = 1.0 / (d as f32).sqrt();
    // Queries in blocks of ROWS (zero rows pad the last block): each key or value loaded from
    // cache serves ROWS queries. Products use mul_add, a fused multiply-add under AVX2/AVX-512.
    let q_rows = len.div_ceil(ROWS) * ROWS;
    let mut q = vec![0f32; q_rows * d];
    let mut kt = vec![0f32; d * padded];
    let mut v = vec![0f32; len * d];
    for (t, row) in qkv.chunks_exact(3 * h).enumerate() {
        for c in 0..d {
            q[t * d + c] = (row[col + c] + bias[col + c]) * scale;
            kt[c * padded + t] = row[h + col + c] + bias[h + col + c];
            v[t * d + c] = row[2 * h + col + c] + bias[2 * h + col + c];
        }
    }
    let mut out = vec![0f32; len * d];
    let mut scores = vec![0f32; ROWS * padded];
    for (qb, qblock) in q.chunks_exact(ROWS * D).enumerate() {
        for jb in 0..padded / LANES {
            let mut s = [[0f32; LANES]; ROWS];
            for c in 0..D {
                let k = &kt[c * padded + jb * LANES..][..LANES];
                for (r, s) in s.iter_mut().enumerate() {
                    let qc = qblock[r * D + c];
                    for (s, k) in s.iter_mut().zip(k) {
                        *s = qc.mul_add(*k, *s);
                    }
                }
            }
            for (r, s) in s.iter().enumerate() {
                scores[r * padded + jb * LANES..][..LANES].copy_from_slice(s);
            }
        }
        let real = ROWS.min(len - qb * ROWS);
        let mut inv = [0f32; ROWS];
        for (r, row) in scores.chunks_exact_mut(padded).take(real).enumerate() {
            let row = &mut row[..len];
            let mut mx = [f32::MIN; LANES];
            let mut chunks = row.chunks_exact(LANES);
            for c in &mut chunks {
                for (m, x) in mx.iter_mut().zip(c) {
                    *m = m.max(*x);
                }
            }
            let max = chunks.remainder().iter().chain(&mx).fold(f32::MIN, |m, x| m.max(*x));
            for s in row.iter_mut() {
                *s = exp(*s - max);
            }
            inv[r] = 1.0 / lane_sum(row);
        }
        let mut acc = [[0f32; D]; ROWS];
        for (j, vj) in v.chunks_exact(D).enumerate() {
            for (r, acc) in acc.iter_mut().enumerate() {
                let p = scores[r * padded + j];
                for (a, x) in acc.iter_mut().zip(vj) {
                    *a = p.mul_add(*x, *a);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate().take(real) {
            let o = &mut out[(qb * ROWS + r) * D..][..D];
            for (o, a) in o.iter_mut().zip(acc) {
                *o = a * inv[r];
            }
        }
    }
    out
}

/// e^x, branch-free (so loops over it vectorize), after Cephes' expf: x = n·ln 2 + r with n an
/// integer (set directly in the exponent bits) and |r| ≤ ½ ln 2 (ln 2 split in two constants so
/// r stays exact), e^r by a degree-7 polynomial; relative error ≈ 1e-7. Inputs are clamped to the
/// finite range.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23: adding it rounds to an integer in the low bits
    let x = x.clamp(-87.0, 88.0);
    let m = x * std::f32::consts::LOG2_E + MAGIC;
    let n = m - MAGIC;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 0.166_666_65)
        * r
        + 0.5;
    let er = p * r * r + r + 1.0;
    let pow2 = f32::from_bits((m.to_bits().wrapping_sub(0x4B40_0000).wrapping_add(127)) << 23);
    pow2 * er
}

/// erf(x) by Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7), branch-free.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly =
        t * (0.254_829_6 + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    (1.0 - poly * exp(-a * a)).copysign(x)
}

/// Runs a closure compiled for the best vector extension the CPU has (AVX-512, else AVX2+FMA,
/// else the baseline), detected at run time: the binary stays portable to any x86-64.
mod simd {
    #[inline(always)]
    pub fn run<R>(f: impl FnOnce() -> R) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has the features `v4` is compiled for (checked just above).
                #[allow(unsafe_code)]
                return unsafe { v4(f) };
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has the features `v3` is compiled for (checked just above).
                #[allow(unsafe_code)]
                return unsafe { v3(f) };
            }
        }
        f()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn v4<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn v3<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::{erf, exp};

    #[test]
    fn fast_exp_matches_the_standard_library_over_the_range_softmax_and_gelu_use() {
        let mut worst = 0f32;
        for i in -8700..=800 {
            let x = i as f32 / 100.0;
            let (got, want) = (exp(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 5e-7, "relative error {worst}");
    }

    #[test]
    fn fast_erf_matches_the_exact_erf_within_two_in_ten_million() {
        // Exact erf via f64 series/continued fraction is not in std; compare with the
        // well-known values and odd symmetry instead, plus monotonicity on a fine grid.
        for (x, want) in
            [(0.0f32, 0.0f32), (0.5, 0.520_499_9), (1.0, 0.842_700_8), (2.0, 0.995_322_3), (3.0, 0.999_977_9)]
        {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {} want {want}", erf(x));
            assert!((erf(-x) + want).abs() < 2e-7);
        }
        let mut prev = -1.0f32;
        for i in -500..=500 {
            let y = erf(i as f32 / 100.0);
            assert!(y >= prev - 1e-7 && y.abs() <= 1.0, "erf not monotone/bounded at {}", i);
            prev = y;
        }
    }
}
