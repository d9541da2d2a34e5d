//! The float parts of the int8 model: layer norm, GELU, softmax attention, pooling.
//!
//! Written so that the compiler vectorizes them (reductions keep 16 independent lanes,
//! element-wise loops have no branches) and so that the result is the same at any
//! vector width: Rust never fuses a multiply and an add nor reorders float sums on its
//! own, so each value goes through the same IEEE operations in the same order.
//! `#[inline(always)]` lets the model compile them inside its AVX-512 / AVX2 entry
//! points (see `Int8Bert::forward`).

/// Lanes of the reductions below.
const LANES: usize = 16;

/// `max |x|`.
#[inline(always)]
pub fn max_abs(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = acc[i].max(c[i].abs());
        }
    }
    for (i, v) in rest.iter().enumerate() {
        acc[i] = acc[i].max(v.abs());
    }
    acc.iter().fold(0f32, |m, &v| m.max(v))
}

/// `Σ x` in a fixed order (16 lanes, then the lanes left to right).
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += c[i];
        }
    }
    for (i, v) in rest.iter().enumerate() {
        acc[i] += v;
    }
    acc.iter().fold(0f32, |s, &v| s + v)
}

/// `Σ (x - mean)²` in the same order as [`sum`].
#[inline(always)]
fn sum_sq_dev(x: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            let d = c[i] - mean;
            acc[i] += d * d;
        }
    }
    for (i, v) in rest.iter().enumerate() {
        let d = v - mean;
        acc[i] += d * d;
    }
    acc.iter().fold(0f32, |s, &v| s + v)
}

/// Layer normalization of each row of `x` (rows of `gamma.len()`), in place.
#[inline(always)]
pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let h = gamma.len();
    for row in x.chunks_exact_mut(h) {
        let mean = sum(row) / h as f32;
        let var = sum_sq_dev(row, mean) / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// `e^x` within 2 ulp for x in [-87, 88] (Cephes `expf`: x = n·ln2 + r, a degree-5
/// polynomial for e^r, 2^n put in the exponent bits). Below -87 it returns about
/// 1.6e-38 rather than a subnormal, which softmax and GELU cannot tell from zero.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const C1: f32 = 0.693_359_4;
    const C2: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E).round_ties_even();
    let r = x - n * C1;
    let r = r - n * C2;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * (r * r) + r + 1.0;
    // n is in -126..=127 here, so n + 127 is a normal exponent.
    let bits = ((n as i32 + 127) as u32) << 23;
    e * f32::from_bits(bits)
}

/// `erf(x)` within 3e-7: its Maclaurin series to x^13 below |x| = 0.5 (where the
/// formula below loses digits to cancellation), else Abramowitz & Stegun 7.1.26. Both
/// are computed and one is selected, so the loop stays branch-free.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let z = a * a;
    let mut s = 1.205_533_3e-4f32;
    s = s * z - 8.548_327e-4;
    s = s * z + 5.223_977_6e-3;
    s = s * z - 2.686_617e-2;
    s = s * z + 1.128_379_2e-1;
    s = s * z - 3.761_263_9e-1;
    s = s * z + std::f32::consts::FRAC_2_SQRT_PI;
    let small = s * a;
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let mut p = 1.061_405_4f32;
    p = p * t - 1.453_152_1;
    p = p * t + 1.421_413_8;
    p = p * t - 0.284_496_74;
    p = p * t + 0.254_829_6;
    let large = 1.0 - p * t * exp(-z);
    let y = if a < 0.5 { small } else { large };
    y.copysign(x)
}

/// GELU as BERT defines it: `x/2 · (1 + erf(x/√2))`.
#[inline(always)]
pub fn gelu_in_place(x: &mut [f32]) {
    const INV_SQRT2: f32 = std::f32::consts::FRAC_1_SQRT_2;
    for v in x.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf(*v * INV_SQRT2));
    }
}

/// Softmax of `x` in place.
#[inline(always)]
fn softmax(x: &mut [f32]) {
    let mut acc = [f32::MIN; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = acc[i].max(c[i]);
        }
    }
    for (i, v) in rest.iter().enumerate() {
        acc[i] = acc[i].max(*v);
    }
    let max = acc.iter().fold(f32::MIN, |m, &v| m.max(v));
    for v in x.iter_mut() {
        *v = exp(*v - max);
    }
    let inv = 1.0 / sum(x);
    for v in x.iter_mut() {
        *v *= inv;
    }
}

/// Work space of [`attention`] for sequences up to some length.
#[derive(Default)]
pub struct AttentionScratch {
    keys_t: Vec<f32>,
    values: Vec<f32>,
    scores: Vec<f32>,
}

/// Self-attention of one sequence of `len` tokens. `qkv` holds `len` rows of
/// `[q | k | v]` (3·heads·head_dim floats; heads side by side in each); `out` gets
/// `len` rows of the heads' contexts side by side.
#[inline(always)]
pub fn attention(
    qkv: &[f32],
    len: usize,
    heads: usize,
    head_dim: usize,
    out: &mut [f32],
    s: &mut AttentionScratch,
) {
    debug_assert_eq!(qkv.len(), len * 3 * heads * head_dim);
    debug_assert_eq!(out.len(), len * heads * head_dim);
    match head_dim {
        32 => attention_hd::<32>(qkv, len, heads, out, s),
        64 => attention_hd::<64>(qkv, len, heads, out, s),
        _ => attention_any(qkv, len, heads, head_dim, out, s),
    }
}

/// [`attention`] for a head size known at compile time. Keys are transposed and padded
/// to a multiple of 16 tokens (zeros, whose scores are never read), so each block of 16
/// scores is one register summed over the head's dimensions, and each context is
/// `HD` floats in registers summed over the tokens. (An earlier version computed 8
/// queries at once; LLVM turned its loops into gathers and scatters, 10x slower.)
#[inline(always)]
fn attention_hd<const HD: usize>(
    qkv: &[f32],
    len: usize,
    heads: usize,
    out: &mut [f32],
    s: &mut AttentionScratch,
) {
    let h = heads * HD;
    let lp = len.div_ceil(LANES) * LANES;
    let scale = 1.0 / (HD as f32).sqrt();
    s.keys_t.clear();
    s.keys_t.resize(HD * lp, 0.0);
    s.values.resize(len * HD, 0.0);
    s.scores.resize(lp, 0.0);
    for head in 0..heads {
        let q0 = head * HD;
        for j in 0..len {
            let row = &qkv[j * 3 * h..(j + 1) * 3 * h];
            for d in 0..HD {
                s.keys_t[d * lp + j] = row[h + q0 + d];
            }
            s.values[j * HD..(j + 1) * HD].copy_from_slice(&row[2 * h + q0..2 * h + q0 + HD]);
        }
        for i in 0..len {
            let q = &qkv[i * 3 * h + q0..i * 3 * h + q0 + HD];
            for jb in (0..lp).step_by(LANES) {
                let mut acc = [0f32; LANES];
                for (d, &qd) in q.iter().enumerate() {
                    let kd = &s.keys_t[d * lp + jb..d * lp + jb + LANES];
                    for l in 0..LANES {
                        acc[l] += qd * kd[l];
                    }
                }
                let dst = &mut s.scores[jb..jb + LANES];
                for l in 0..LANES {
                    dst[l] = acc[l] * scale;
                }
            }
            let scores = &mut s.scores[..len];
            softmax(scores);
            let mut ctx = [0f32; HD];
            for (j, &p) in scores.iter().enumerate() {
                let v = &s.values[j * HD..(j + 1) * HD];
                for d in 0..HD {
                    ctx[d] += p * v[d];
                }
            }
            out[i * h + q0..i * h + q0 + HD].copy_from_slice(&ctx);
        }
    }
}

/// [`attention`] for any head size.
fn attention_any(
    qkv: &[f32],
    len: usize,
    heads: usize,
    head_dim: usize,
    out: &mut [f32],
    s: &mut AttentionScratch,
) {
    let h = heads * head_dim;
    let scale = 1.0 / (head_dim as f32).sqrt();
    s.scores.resize(len, 0.0);
    for head in 0..heads {
        let q0 = head * head_dim;
        for i in 0..len {
            let q = &qkv[i * 3 * h + q0..i * 3 * h + q0 + head_dim];
            for j in 0..len {
                let k = &qkv[j * 3 * h + h + q0..j * 3 * h + h + q0 + head_dim];
                let mut dot = 0f32;
                for d in 0..head_dim {
                    dot += q[d] * k[d];
                }
                s.scores[j] = dot * scale;
            }
            softmax(&mut s.scores[..len]);
            let ctx = &mut out[i * h + q0..i * h + q0 + head_dim];
            ctx.fill(0.0);
            for j in 0..len {
                let p = s.scores[j];
                let v = &qkv[j * 3 * h + 2 * h + q0..j * 3 * h + 2 * h + q0 + head_dim];
                for d in 0..head_dim {
                    ctx[d] += p * v[d];
                }
            }
        }
    }
}

/// Mean of the rows of `x` (rows of `h`), L2-normalized (norm clamped at 1e-12, as
/// `torch.nn.functional.normalize` does).
#[inline(always)]
pub fn mean_pool_normalize(x: &[f32], h: usize) -> Vec<f32> {
    let rows = x.len() / h;
    let mut mean = vec![0f32; h];
    for row in x.chunks_exact(h) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    let inv = 1.0 / rows.max(1) as f32;
    for m in mean.iter_mut() {
        *m *= inv;
    }
    let norm = sum_sq_dev(&mean, 0.0).sqrt().max(1e-12);
    for m in mean.iter_mut() {
        *m /= norm;
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn erf_f64(x: f64) -> f64 {
        // Maclaurin series; for |x| < 3 accurate far beyond f32 precision.
        let mut term = x;
        let mut total = x;
        for n in 1..200 {
            term *= -x * x / n as f64;
            total += term / (2 * n + 1) as f64;
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn exp_is_accurate() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = f64::from(x).exp();
            let got = f64::from(exp(x));
            assert!(
                ((got - want) / want).abs() < 3e-7,
                "exp({x}) = {got}, want {want}"
            );
            x += 0.0137;
        }
        assert!(exp(-1000.0) < 1e-37);
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn erf_is_accurate() {
        let mut x = -2.99f32;
        while x < 2.99 {
            let want = erf_f64(f64::from(x));
            let got = f64::from(erf(x));
            assert!((got - want).abs() < 3e-7, "erf({x}) = {got}, want {want}");
            x += 0.001;
        }
        assert_eq!(erf(10.0), 1.0);
        assert_eq!(erf(-10.0), -1.0);
    }

    #[test]
    fn layer_norm_gives_zero_mean_unit_variance() {
        let mut x: Vec<f32> = (0..40).map(|i| (i * i) as f32 * 0.1).collect();
        layer_norm(&mut x, &[1.0; 20], &[0.0; 20], 1e-12);
        for row in x.chunks(20) {
            let mean: f32 = row.iter().sum::<f32>() / 20.0;
            let var: f32 = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 20.0;
            assert!(
                mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-4,
                "{mean} {var}"
            );
        }
    }

    #[test]
    fn attention_matches_a_direct_computation() {
        for (len, heads, hd) in [(5, 2, 3), (21, 2, 32), (3, 1, 64)] {
            check_attention(len, heads, hd);
        }
    }

    fn check_attention(len: usize, heads: usize, hd: usize) {
        let h = heads * hd;
        let qkv: Vec<f32> = (0..len * 3 * h)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) * 0.1)
            .collect();
        let mut out = vec![0f32; len * h];
        attention(
            &qkv,
            len,
            heads,
            hd,
            &mut out,
            &mut AttentionScratch::default(),
        );
        for head in 0..heads {
            for i in 0..len {
                let q = |d: usize| qkv[i * 3 * h + head * hd + d];
                let k = |j: usize, d: usize| qkv[j * 3 * h + h + head * hd + d];
                let v = |j: usize, d: usize| qkv[j * 3 * h + 2 * h + head * hd + d];
                let logits: Vec<f64> = (0..len)
                    .map(|j| {
                        (0..hd).map(|d| f64::from(q(d) * k(j, d))).sum::<f64>() / (hd as f64).sqrt()
                    })
                    .collect();
                let m = logits.iter().cloned().fold(f64::MIN, f64::max);
                let w: Vec<f64> = logits.iter().map(|l| (l - m).exp()).collect();
                let z: f64 = w.iter().sum();
                for d in 0..hd {
                    let want: f64 = (0..len).map(|j| w[j] / z * f64::from(v(j, d))).sum();
                    let got = out[i * h + head * hd + d];
                    assert!((f64::from(got) - want).abs() < 1e-5, "{got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn pooled_vectors_have_unit_length() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let v = mean_pool_normalize(&x, 3);
        let n: f32 = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-6);
        assert!(v[0] < v[1] && v[1] < v[2]);
        assert_eq!(mean_pool_normalize(&[0.0; 3], 3), vec![0.0; 3]);
    }
}
