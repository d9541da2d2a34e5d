//! Int8 matrix multiplication for the linear layers: weights quantized once at load
//! (symmetric, one scale per output column) and packed for the kernel; activations
//! quantized per row on every call (symmetric, one scale per row).
//!
//! Why by hand: candle's quantized matmul (`QMatMul`, Q8_0) is a row-at-a-time dot
//! product loop meant for LLM decoding and runs slower than its fp32 GEMM on a batch;
//! the `gemm` crate has no integer types. The kernels here are small register tiles
//! over a panel layout made once at load, so nothing is repacked per call.
//!
//! Every kernel computes the same exact integer sums (no saturation is possible: see
//! each kernel), and the float epilogue is one shared function, so the vectors do not
//! depend on which kernel the CPU gets.

/// Columns per packed panel (four blocks of 16 int32 lanes).
pub const PANEL: usize = 64;
/// Rows per register tile.
pub const MR: usize = 6;
/// Largest quantized value; -128 is never produced, which keeps the AVX2 kernel's
/// sign trick and the VNNI kernel's +128 shift exact.
const QMAX: f32 = 127.0;

/// The integer kernel used on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// AVX-512 VNNI `vpdpbusd`: unsigned activations (shifted by 128) times signed
    /// weights, four products per 32-bit lane per instruction.
    #[cfg(target_arch = "x86_64")]
    Vnni512,
    /// AVX2: `vpmaddubsw` on |a| and sign(a)·w, then `vpmaddwd`.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Portable loops.
    Scalar,
}

impl Kernel {
    /// The fastest kernel this CPU runs. `CAIRN_INT8_KERNEL=avx2|scalar` picks a
    /// slower one (to compare them); a kernel the CPU lacks is never picked.
    pub fn detect() -> Kernel {
        let wanted = std::env::var("CAIRN_INT8_KERNEL").ok();
        Self::detect_with(wanted.as_deref())
    }

    fn detect_with(wanted: Option<&str>) -> Kernel {
        let available = Self::available();
        let pick = match wanted {
            Some(name) => available.iter().copied().find(|k| k.name() == name),
            None => None,
        };
        pick.unwrap_or(available[0])
    }

    /// Every kernel this CPU can run, fastest first.
    pub fn available() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut out = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vnni")
            {
                out.push(Kernel::Vnni512);
            }
            if is_x86_feature_detected!("avx2") {
                out.push(Kernel::Avx2);
            }
        }
        out.push(Kernel::Scalar);
        out
    }

    pub fn name(self) -> &'static str {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni512 => "vnni512",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
            Kernel::Scalar => "scalar",
        }
    }

    /// Whether activations are stored shifted to unsigned (`q + 128`).
    fn unsigned(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Vnni512 {
            return true;
        }
        false
    }
}

/// A linear layer `y = x·Wᵀ + b` with int8 weights.
pub struct QLinear {
    /// Output features.
    pub n: usize,
    /// Input features.
    pub k: usize,
    /// `k` rounded up to a multiple of 4 (the kernels take 4 bytes of a row at a time).
    kp: usize,
    /// Panels of [`PANEL`] columns; within a panel, for each group of 4 inputs, 4 blocks
    /// of 16 columns x 4 bytes (the byte order one `vpdpbusd` lane reads).
    packed: Vec<i8>,
    /// Per output column: weight scale.
    scale: Vec<f32>,
    /// Per output column: 128 x the sum of its quantized weights (undoes the unsigned
    /// shift of the VNNI kernel's activations).
    shift_comp: Vec<i32>,
    bias: Vec<f32>,
    kernel: Kernel,
}

impl std::fmt::Debug for QLinear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QLinear")
            .field("n", &self.n)
            .field("k", &self.k)
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

/// What the epilogue does with `x·Wᵀ + b` before storing it.
#[derive(Clone, Copy)]
pub enum Epilogue<'a> {
    /// Store it.
    Bias,
    /// Store GELU of it.
    BiasGelu,
    /// Add this matrix (same shape as the output, row-major) to it.
    BiasResidual(&'a [f32]),
    /// Add `x·Wᵀ` (no bias) to what the output holds.
    Accumulate,
}

/// Rows quantized for a [`QLinear`] of input width `k`.
pub struct QRows {
    rows: usize,
    kp: usize,
    data: Vec<u8>,
    scale: Vec<f32>,
}

impl QRows {
    /// `x` minus what these rows represent (`x` being the `k`-wide rows they quantize).
    #[inline(always)]
    fn remainder(&self, x: &[f32], k: usize, unsigned: bool) -> Vec<f32> {
        let offset = if unsigned { 128 } else { 0 };
        let mut out = vec![0f32; x.len()];
        for i in 0..self.rows {
            let s = self.scale[i];
            let q = &self.data[i * self.kp..i * self.kp + k];
            for ((o, &v), &b) in out[i * k..(i + 1) * k]
                .iter_mut()
                .zip(&x[i * k..(i + 1) * k])
                .zip(q)
            {
                let qv = if unsigned {
                    i32::from(b) - offset
                } else {
                    i32::from(b as i8)
                };
                *o = v - qv as f32 * s;
            }
        }
        out
    }
}

impl QLinear {
    /// Quantizes `weight` (`n` rows of `k`, row-major, as stored by PyTorch) and packs it.
    pub fn new(weight: &[f32], bias: &[f32], n: usize, k: usize, kernel: Kernel) -> Self {
        assert_eq!(weight.len(), n * k, "weight shape");
        assert_eq!(bias.len(), n, "bias shape");
        let kp = k.div_ceil(4) * 4;
        let np = n.div_ceil(PANEL) * PANEL;
        let mut q = vec![0i8; np * kp];
        let mut scale = vec![0f32; n];
        let mut shift_comp = vec![0i32; n];
        for c in 0..n {
            let row = &weight[c * k..(c + 1) * k];
            let amax = row.iter().fold(0f32, |m, x| m.max(x.abs()));
            let s = if amax > 0.0 { amax / QMAX } else { 1.0 };
            scale[c] = s;
            let mut sum = 0i32;
            for (j, &w) in row.iter().enumerate() {
                let v = round_small((w / s).clamp(-QMAX, QMAX)) as i8;
                q[c * kp + j] = v;
                sum += i32::from(v);
            }
            shift_comp[c] = 128 * sum;
        }
        let mut packed = vec![0i8; np * kp];
        for p in 0..np / PANEL {
            for g in 0..kp / 4 {
                for col in 0..PANEL {
                    for i in 0..4 {
                        let dst = p * PANEL * kp + g * PANEL * 4 + col * 4 + i;
                        packed[dst] = q[(p * PANEL + col) * kp + g * 4 + i];
                    }
                }
            }
        }
        Self {
            n,
            k,
            kp,
            packed,
            scale,
            shift_comp,
            bias: bias.to_vec(),
            kernel,
        }
    }

    /// Quantizes `x` (`rows` rows of `k`) for this layer: one scale per row.
    #[inline(always)]
    pub fn quantize(&self, x: &[f32], rows: usize) -> QRows {
        quantize_rows(x, rows, self.k, self.kp, self.kernel.unsigned())
    }

    /// [`Self::quantize`] then [`Self::forward`], with the activations quantized in two
    /// passes: `x ≈ s₁·q₁ + s₂·q₂`, `q₂` quantizing what `q₁` left (about 14 bits in
    /// all, for twice the integer work).
    #[inline(always)]
    pub fn forward_two_pass(
        &self,
        x: &[f32],
        rows: usize,
        out: &mut [f32],
        epilogue: Epilogue<'_>,
    ) {
        let q1 = self.quantize(x, rows);
        let rest = q1.remainder(x, self.k, self.kernel.unsigned());
        let q2 = self.quantize(&rest, rows);
        self.forward(&q1, out, Epilogue::Bias);
        self.forward(&q2, out, Epilogue::Accumulate);
        match epilogue {
            Epilogue::Bias | Epilogue::Accumulate => {}
            Epilogue::BiasGelu => super::ops::gelu_in_place(out),
            Epilogue::BiasResidual(res) => {
                for (d, s) in out.iter_mut().zip(res) {
                    *d += s;
                }
            }
        }
    }

    /// `out = epilogue(x·Wᵀ + b)`, `out` being `x.rows` rows of `n`.
    #[inline(always)]
    pub fn forward(&self, x: &QRows, out: &mut [f32], epilogue: Epilogue<'_>) {
        assert_eq!(x.kp, self.kp, "input width");
        assert_eq!(out.len(), x.rows * self.n, "output shape");
        if let Epilogue::BiasResidual(r) = epilogue {
            assert_eq!(r.len(), out.len(), "residual shape");
        }
        let mut tile = [0i32; MR * PANEL];
        let panels = self.n.div_ceil(PANEL);
        for p in 0..panels {
            let b = &self.packed[p * PANEL * self.kp..(p + 1) * PANEL * self.kp];
            let c0 = p * PANEL;
            let cols = PANEL.min(self.n - c0);
            for r0 in (0..x.rows).step_by(MR) {
                let r = MR.min(x.rows - r0);
                let a = &x.data[r0 * self.kp..(r0 + r) * self.kp];
                self.tile(a, r, b, &mut tile);
                self.epilogue(&tile, x, r0, r, c0, cols, out, epilogue);
            }
        }
    }

    #[inline(always)]
    fn tile(&self, a: &[u8], r: usize, b: &[i8], tile: &mut [i32; MR * PANEL]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Kernel::available` only offers this kernel when the CPU has
            // AVX-512 F/BW/VNNI; `a` holds `r` rows of `kp` bytes and `b` one panel.
            Kernel::Vnni512 => unsafe { x86::tile_vnni512(a, r, self.kp, b, tile) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for AVX2.
            Kernel::Avx2 => unsafe { x86::tile_avx2(a, r, self.kp, b, tile) },
            Kernel::Scalar => tile_scalar(a, r, self.kp, b, tile),
        }
    }

    /// Integer sums of one tile to floats: the same operations, in the same order,
    /// whichever kernel made the sums.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn epilogue(
        &self,
        tile: &[i32; MR * PANEL],
        x: &QRows,
        r0: usize,
        r: usize,
        c0: usize,
        cols: usize,
        out: &mut [f32],
        epilogue: Epilogue<'_>,
    ) {
        let unsigned = self.kernel.unsigned();
        let scale = &self.scale[c0..c0 + cols];
        let comp = &self.shift_comp[c0..c0 + cols];
        let bias = &self.bias[c0..c0 + cols];
        for i in 0..r {
            let sa = x.scale[r0 + i];
            let sums = &tile[i * PANEL..i * PANEL + cols];
            let at = (r0 + i) * self.n + c0;
            let dst = &mut out[at..at + cols];
            if let Epilogue::Accumulate = epilogue {
                for j in 0..cols {
                    let sum = if unsigned { sums[j] - comp[j] } else { sums[j] };
                    dst[j] += sum as f32 * (sa * scale[j]);
                }
                continue;
            }
            for j in 0..cols {
                let sum = if unsigned { sums[j] - comp[j] } else { sums[j] };
                dst[j] = sum as f32 * (sa * scale[j]) + bias[j];
            }
            match epilogue {
                Epilogue::Bias | Epilogue::Accumulate => {}
                Epilogue::BiasGelu => super::ops::gelu_in_place(dst),
                Epilogue::BiasResidual(res) => {
                    for (d, s) in dst.iter_mut().zip(&res[at..at + cols]) {
                        *d += s;
                    }
                }
            }
        }
    }
}

/// `x.round_ties_even()` for `|x| <= 2^22`, by adding and taking away 1.5 * 2^23: the
/// sum has no fraction bits left, so IEEE round-to-nearest-even does the rounding. Loading
/// the model quantizes ~10M weights outside the SIMD entry points, where
/// `round_ties_even` is a call to libm's `rintf` per weight (SSE2 has no rounding
/// instruction); this vectorizes.
#[inline]
fn round_small(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23
    (x + MAGIC) - MAGIC
}

/// Symmetric per-row quantization: `q = round(x / s)`, `s = max|x| / 127`.
#[inline(always)]
fn quantize_rows(x: &[f32], rows: usize, k: usize, kp: usize, unsigned: bool) -> QRows {
    assert_eq!(x.len(), rows * k, "input shape");
    // Padding bytes must count as zero: 128 when shifted.
    let zero = if unsigned { 128u8 } else { 0u8 };
    let mut data = vec![zero; rows * kp];
    let mut scale = vec![0f32; rows];
    for i in 0..rows {
        let row = &x[i * k..(i + 1) * k];
        let amax = super::ops::max_abs(row);
        let s = if amax > 0.0 { amax / QMAX } else { 1.0 };
        let inv = 1.0 / s;
        scale[i] = s;
        let dst = &mut data[i * kp..i * kp + k];
        let offset = if unsigned { 128.0 } else { 0.0 };
        for (d, &v) in dst.iter_mut().zip(row) {
            let q = (v * inv).round_ties_even().clamp(-QMAX, QMAX) + offset;
            // Unsigned: 1..=255 as u8. Signed: -127..=127, stored as its two's
            // complement byte.
            *d = (q as i32) as u8;
        }
    }
    QRows {
        rows,
        kp,
        data,
        scale,
    }
}

/// Reference kernel: `tile[i][c] = Σ_k a[i][k]·b[c][k]` over the panel layout.
fn tile_scalar(a: &[u8], r: usize, kp: usize, b: &[i8], tile: &mut [i32; MR * PANEL]) {
    tile.fill(0);
    for i in 0..r {
        let row = &a[i * kp..(i + 1) * kp];
        let acc = &mut tile[i * PANEL..(i + 1) * PANEL];
        for g in 0..kp / 4 {
            let bg = &b[g * PANEL * 4..(g + 1) * PANEL * 4];
            let av = &row[g * 4..g * 4 + 4];
            for (c, out) in acc.iter_mut().enumerate() {
                let mut s = 0i32;
                for t in 0..4 {
                    s += i32::from(av[t] as i8) * i32::from(bg[c * 4 + t]);
                }
                *out += s;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MR, PANEL};
    use std::arch::x86_64::*;

    /// One tile with AVX-512 VNNI. `a` holds unsigned activations (`q + 128`, in
    /// 1..=255), so each `vpdpbusd` lane adds four products of at most 255·127 to its
    /// int32 sum; with `kp` ≤ 2^16 the sum cannot overflow.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn tile_vnni512(
        a: &[u8],
        r: usize,
        kp: usize,
        b: &[i8],
        tile: &mut [i32; MR * PANEL],
    ) {
        match r {
            1 => vnni_rows::<1>(a, kp, b, tile),
            2 => vnni_rows::<2>(a, kp, b, tile),
            3 => vnni_rows::<3>(a, kp, b, tile),
            4 => vnni_rows::<4>(a, kp, b, tile),
            5 => vnni_rows::<5>(a, kp, b, tile),
            _ => vnni_rows::<6>(a, kp, b, tile),
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn vnni_rows<const R: usize>(
        a: &[u8],
        kp: usize,
        b: &[i8],
        tile: &mut [i32; MR * PANEL],
    ) {
        debug_assert!(a.len() >= R * kp && b.len() >= PANEL * kp);
        let mut acc = [[_mm512_setzero_si512(); 4]; R];
        let ap = a.as_ptr();
        let bp = b.as_ptr();
        for g in 0..kp / 4 {
            // SAFETY: g*256+256 <= PANEL*kp and i*kp+g*4+4 <= R*kp (checked above).
            let bg = bp.add(g * PANEL * 4);
            let b0 = _mm512_loadu_si512(bg as *const _);
            let b1 = _mm512_loadu_si512(bg.add(64) as *const _);
            let b2 = _mm512_loadu_si512(bg.add(128) as *const _);
            let b3 = _mm512_loadu_si512(bg.add(192) as *const _);
            for (i, row) in acc.iter_mut().enumerate() {
                let word = (ap.add(i * kp + g * 4) as *const i32).read_unaligned();
                let av = _mm512_set1_epi32(word);
                row[0] = _mm512_dpbusd_epi32(row[0], av, b0);
                row[1] = _mm512_dpbusd_epi32(row[1], av, b1);
                row[2] = _mm512_dpbusd_epi32(row[2], av, b2);
                row[3] = _mm512_dpbusd_epi32(row[3], av, b3);
            }
        }
        let out = tile.as_mut_ptr();
        for (i, row) in acc.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                _mm512_storeu_si512(out.add(i * PANEL + j * 16) as *mut _, *v);
            }
        }
    }

    /// One tile with AVX2. `a` holds signed activations in -127..=127: `vpmaddubsw`
    /// multiplies |a| (unsigned) by sign(a)·w and adds pairs, at most 2·127·127 =
    /// 32,258, inside i16, so it never saturates.
    #[target_feature(enable = "avx2")]
    pub unsafe fn tile_avx2(a: &[u8], r: usize, kp: usize, b: &[i8], tile: &mut [i32; MR * PANEL]) {
        debug_assert!(a.len() >= r * kp && b.len() >= PANEL * kp);
        let mut i = 0;
        while i < r {
            let rows = (r - i).min(2);
            for blk in 0..4 {
                if rows == 2 {
                    avx2_block::<2>(a.as_ptr().add(i * kp), kp, b.as_ptr(), blk, tile, i);
                } else {
                    avx2_block::<1>(a.as_ptr().add(i * kp), kp, b.as_ptr(), blk, tile, i);
                }
            }
            i += rows;
        }
    }

    /// `R` rows x one block of 16 columns.
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_block<const R: usize>(
        a: *const u8,
        kp: usize,
        b: *const i8,
        blk: usize,
        tile: &mut [i32; MR * PANEL],
        row0: usize,
    ) {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        for g in 0..kp / 4 {
            let bg = b.add(g * PANEL * 4 + blk * 64);
            let b0 = _mm256_loadu_si256(bg as *const _);
            let b1 = _mm256_loadu_si256(bg.add(32) as *const _);
            for (i, row) in acc.iter_mut().enumerate() {
                let word = (a.add(i * kp + g * 4) as *const i32).read_unaligned();
                let av = _mm256_set1_epi32(word);
                let abs = _mm256_sign_epi8(av, av);
                let s0 = _mm256_sign_epi8(b0, av);
                let s1 = _mm256_sign_epi8(b1, av);
                let p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, s0), ones);
                let p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, s1), ones);
                row[0] = _mm256_add_epi32(row[0], p0);
                row[1] = _mm256_add_epi32(row[1], p1);
            }
        }
        let out = tile.as_mut_ptr();
        for (i, row) in acc.iter().enumerate() {
            let at = (row0 + i) * PANEL + blk * 16;
            _mm256_storeu_si256(out.add(at) as *mut _, row[0]);
            _mm256_storeu_si256(out.add(at + 8) as *mut _, row[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_small_is_round_ties_even_over_the_quantized_range() {
        // Every tie (n + 0.5), and a dense sweep of the range weights are rounded in.
        for n in -260..260 {
            let tie = n as f32 + 0.5;
            assert_eq!(round_small(tie), tie.round_ties_even(), "{tie}");
        }
        let mut x = -QMAX - 1.0;
        while x <= QMAX + 1.0 {
            for y in [
                x,
                f32::from_bits(x.to_bits() + 1),
                f32::from_bits(x.to_bits().wrapping_sub(1)),
            ] {
                assert_eq!(round_small(y), y.round_ties_even(), "{y}");
            }
            x += 0.001;
        }
        assert_eq!(round_small(-0.4), 0.0);
        assert_eq!(round_small(-0.6), -1.0);
    }

    /// Deterministic values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 23) as f32) - 1.0
            })
            .collect()
    }

    fn reference(x: &[f32], w: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut out = vec![0f32; m * n];
        for i in 0..m {
            for c in 0..n {
                let dot: f64 = (0..k)
                    .map(|j| f64::from(x[i * k + j]) * f64::from(w[c * k + j]))
                    .sum();
                out[i * n + c] = dot as f32 + b[c];
            }
        }
        out
    }

    #[test]
    fn every_kernel_gives_the_same_result_close_to_fp32() {
        // Odd sizes: partial tiles, a partial panel, k not a multiple of 4.
        for &(m, n, k) in &[(1, 16, 4), (7, 70, 37), (13, 128, 384), (6, 64, 1536)] {
            let x = values(m * k, 1 + m as u64);
            let w: Vec<f32> = values(n * k, 2 + n as u64)
                .iter()
                .map(|v| v * 0.1)
                .collect();
            let b = values(n, 3);
            let want = reference(&x, &w, &b, m, n, k);
            let mut first: Option<Vec<f32>> = None;
            for kernel in Kernel::available() {
                let lin = QLinear::new(&w, &b, n, k, kernel);
                let q = lin.quantize(&x, m);
                let mut out = vec![0f32; m * n];
                lin.forward(&q, &mut out, Epilogue::Bias);
                // Quantization error: well under 2% of the largest output.
                let top = want.iter().fold(0f32, |a, v| a.max(v.abs()));
                for (g, e) in out.iter().zip(&want) {
                    assert!(
                        (g - e).abs() < 0.02 * top,
                        "{kernel:?} {m}x{n}x{k}: {g} vs {e}"
                    );
                }
                match &first {
                    None => first = Some(out),
                    Some(f) => assert_eq!(f, &out, "{kernel:?} differs from the first kernel"),
                }
            }
        }
    }

    /// Integers in -127..=127 (as f32) with one ±127 in each row of `k`: per-row
    /// symmetric quantization then has scale 1 and keeps every value as it is.
    fn integer_rows(rows: usize, k: usize, seed: u64) -> Vec<f32> {
        let mut v: Vec<f32> = values(rows * k, seed)
            .iter()
            .map(|x| (x * 127.0).round().clamp(-127.0, 127.0))
            .collect();
        for r in 0..rows {
            v[r * k + (r * 7) % k] = if r % 2 == 0 { 127.0 } else { -127.0 };
        }
        v
    }

    #[test]
    fn integer_sums_equal_a_naive_reference() {
        // Random int8 matrices, exactly representable: every kernel's output must be
        // the naive integer dot product plus the bias, bit for bit. Sizes cover
        // partial row tiles, partial panels, k % 4 != 0 and the model's shapes.
        for &(m, n, k) in &[
            (1, 1, 1),
            (5, 17, 3),
            (6, 64, 384),
            (11, 130, 385),
            (20, 384, 1536),
            (7, 1152, 384),
        ] {
            let x = integer_rows(m, k, 10 + m as u64);
            let w = integer_rows(n, k, 20 + n as u64);
            let b: Vec<f32> = values(n, 30).iter().map(|v| (v * 8.0).round()).collect();
            for kernel in Kernel::available() {
                let lin = QLinear::new(&w, &b, n, k, kernel);
                let q = lin.quantize(&x, m);
                let mut out = vec![0f32; m * n];
                lin.forward(&q, &mut out, Epilogue::Bias);
                for i in 0..m {
                    for c in 0..n {
                        let dot: i64 = (0..k)
                            .map(|j| x[i * k + j] as i64 * w[c * k + j] as i64)
                            .sum();
                        let want = dot as i32 as f32 + b[c];
                        assert_eq!(out[i * n + c], want, "{kernel:?} {m}x{n}x{k} at ({i}, {c})");
                    }
                }
            }
        }
    }

    #[test]
    fn two_pass_activations_are_closer_to_fp32_and_kernel_independent() {
        let (m, n, k) = (9, 130, 384);
        let x = values(m * k, 41);
        let w: Vec<f32> = values(n * k, 42).iter().map(|v| v * 0.1).collect();
        let b = values(n, 43);
        let res = values(m * n, 44);
        let want: Vec<f32> = reference(&x, &w, &b, m, n, k)
            .iter()
            .zip(&res)
            .map(|(v, r)| v + r)
            .collect();
        let err = |got: &[f32]| -> f64 {
            got.iter()
                .zip(&want)
                .map(|(g, e)| f64::from(g - e).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        let mut first: Option<Vec<f32>> = None;
        for kernel in Kernel::available() {
            let lin = QLinear::new(&w, &b, n, k, kernel);
            let mut one = vec![0f32; m * n];
            lin.forward(&lin.quantize(&x, m), &mut one, Epilogue::BiasResidual(&res));
            let mut two = vec![0f32; m * n];
            lin.forward_two_pass(&x, m, &mut two, Epilogue::BiasResidual(&res));
            // What is left is the weights' error: the activations' is ~1/127 of it.
            assert!(
                err(&two) < 0.8 * err(&one),
                "{kernel:?}: {} vs {}",
                err(&two),
                err(&one)
            );
            match &first {
                None => first = Some(two),
                Some(f) => assert_eq!(f, &two, "{kernel:?} differs from the first kernel"),
            }
        }
    }

    #[test]
    fn residual_and_gelu_epilogues() {
        let (m, n, k) = (3, 64, 8);
        let x = values(m * k, 5);
        let w = values(n * k, 6);
        let b = values(n, 7);
        let res = values(m * n, 8);
        let lin = QLinear::new(&w, &b, n, k, Kernel::Scalar);
        let q = lin.quantize(&x, m);
        let mut plain = vec![0f32; m * n];
        lin.forward(&q, &mut plain, Epilogue::Bias);
        let mut with_res = vec![0f32; m * n];
        lin.forward(&q, &mut with_res, Epilogue::BiasResidual(&res));
        let mut gelu = vec![0f32; m * n];
        lin.forward(&q, &mut gelu, Epilogue::BiasGelu);
        for i in 0..m * n {
            assert_eq!(with_res[i], plain[i] + res[i]);
            let mut g = [plain[i]];
            crate::int8::ops::gelu_in_place(&mut g);
            assert_eq!(gelu[i], g[0]);
        }
    }

    #[test]
    fn zero_rows_and_weights_are_exact_zeros() {
        let lin = QLinear::new(&[0.0; 32], &[0.5; 4], 4, 8, Kernel::detect());
        let q = lin.quantize(&[0.0; 16], 2);
        let mut out = vec![1f32; 8];
        lin.forward(&q, &mut out, Epilogue::Bias);
        assert_eq!(out, vec![0.5; 8]);
    }

    #[test]
    fn unknown_kernel_names_fall_back_to_the_fastest() {
        assert_eq!(Kernel::detect_with(Some("nope")), Kernel::available()[0]);
        assert_eq!(Kernel::detect_with(Some("scalar")), Kernel::Scalar);
    }
}
