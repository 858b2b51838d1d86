//! AVX2: eight 32-bit or four 64-bit lanes; compares give all-ones lanes, `movemask` gives the bits.
//!
//! AVX2 compares are signed only, so the unsigned ones bias both sides by the sign bit first.

use core::arch::x86_64::*;

use crate::simd::vector::{MAX_LANES, Vector};

// The vectors below are only created inside the engine's functions above, which run only on a CPU with
// AVX2 and F16C (the token's invariant): that is the precondition every intrinsic call below relies on.

#[derive(Clone, Copy)]
pub(crate) struct U32x8(__m256i);

impl Vector for U32x8 {
    const LANES: usize = 8;
    type Mask = __m256i;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 32 writable bytes.
        unsafe { _mm256_storeu_si256(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7) })
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        let index = Self::iota().xor(Self::splat(m as u64));
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_permutevar8x32_epi32(self.0, index.0) })
    }
    // AVX2 has no compress instruction: a table of `vpermd` indices per 8-bit mask stands in (a load, a
    // widening and the permute), which is what lets short rows collect without a branch per lane.
    const COMPRESSES: bool = true;
    #[inline(always)]
    fn compress(self, bits: u64) -> Self {
        let indices = COMPRESS[usize::from(bits as u8)];
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe {
            let indices = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(indices as i64));
            _mm256_permutevar8x32_epi32(self.0, indices)
        })
    }
    const RANKS_PAIRS: bool = true;
    // f16 tested on its raw bits in sixteen 16-bit lanes: AVX2 compares them signed only, so the unsigned
    // compares bias both sides by the sign bit (the limit's bias is hoisted out of a loop), and the
    // lanes' bits come from the bytes of the masks packed.
    const HALF_LANES: bool = true;
    #[inline(always)]
    unsafe fn load16(ptr: *const u16) -> Self {
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 32 readable bytes.
        U32x8(unsafe { _mm256_loadu_si256(ptr.cast()) })
    }
    #[inline(always)]
    fn lt16_signed(self, other: Self) -> u64 {
        other.gt16_signed(self)
    }
    #[inline(always)]
    fn gt16_signed(self, other: Self) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        bits16(unsafe { _mm256_cmpgt_epi16(self.0, other.0) })
    }
    #[inline(always)]
    fn lt16(self, other: Self) -> u64 {
        other.gt16(self)
    }
    #[inline(always)]
    fn gt16(self, other: Self) -> u64 {
        bits16(gt16_mask(self.0, other.0))
    }
    #[inline(always)]
    fn gt16_signed_or_gt16(self, limit: Self, nan: Self) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        bits16(unsafe { _mm256_or_si256(_mm256_cmpgt_epi16(self.0, limit.0), gt16_mask(self.0, nan.0)) })
    }
    #[inline(always)]
    fn lt16_or_gt16(self, limit: Self, nan: Self) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        bits16(unsafe { _mm256_or_si256(gt16_mask(limit.0, self.0), gt16_mask(self.0, nan.0)) })
    }
    #[inline(always)]
    fn any_gt16_signed(self, other: Self) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            let above = _mm256_cmpgt_epi16(self.0, other.0);
            _mm256_testz_si256(above, above) == 0
        }
    }
    #[inline(always)]
    fn any_gt16(self, other: Self) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            // Nonzero exactly in the lanes where self > other, unsigned.
            let excess = _mm256_subs_epu16(self.0, other.0);
            _mm256_testz_si256(excess, excess) == 0
        }
    }
    #[inline(always)]
    fn max16_signed(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_max_epi16(self.0, other.0) })
    }
    #[inline(always)]
    fn min16_signed(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_min_epi16(self.0, other.0) })
    }
    #[inline(always)]
    fn max16(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_max_epu16(self.0, other.0) })
    }
    #[inline(always)]
    fn min16(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_min_epu16(self.0, other.0) })
    }
    // 8-bit integers tested raw in thirty-two 8-bit lanes; the unsigned compares through a saturating
    // subtraction (nonzero exactly where `self > other`), the bits from one byte mask.
    const BYTE_LANES: bool = true;
    #[inline(always)]
    unsafe fn load8(ptr: *const u8) -> Self {
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 32 readable bytes.
        U32x8(unsafe { _mm256_loadu_si256(ptr.cast()) })
    }
    #[inline(always)]
    fn lt8_signed(self, other: Self) -> u64 {
        other.gt8_signed(self)
    }
    #[inline(always)]
    fn gt8_signed(self, other: Self) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        u64::from(unsafe { _mm256_movemask_epi8(_mm256_cmpgt_epi8(self.0, other.0)) } as u32)
    }
    #[inline(always)]
    fn lt8(self, other: Self) -> u64 {
        other.gt8(self)
    }
    #[inline(always)]
    fn gt8(self, other: Self) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        let not_above = unsafe {
            let excess = _mm256_subs_epu8(self.0, other.0);
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(excess, _mm256_setzero_si256()))
        };
        u64::from(!(not_above as u32))
    }
    #[inline(always)]
    fn any_gt8_signed(self, other: Self) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            let above = _mm256_cmpgt_epi8(self.0, other.0);
            _mm256_testz_si256(above, above) == 0
        }
    }
    #[inline(always)]
    fn any_gt8(self, other: Self) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            let excess = _mm256_subs_epu8(self.0, other.0);
            _mm256_testz_si256(excess, excess) == 0
        }
    }
    #[inline(always)]
    fn max8_signed(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_max_epi8(self.0, other.0) })
    }
    #[inline(always)]
    fn min8_signed(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_min_epi8(self.0, other.0) })
    }
    #[inline(always)]
    fn max8(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_max_epu8(self.0, other.0) })
    }
    #[inline(always)]
    fn min8(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_min_epu8(self.0, other.0) })
    }
    #[inline(always)]
    fn compress_iota(bits: u64, vector: usize) -> Self {
        debug_assert!(vector < COMPRESS_AT.len());
        let indices = COMPRESS_AT[vector % COMPRESS_AT.len()][usize::from(bits as u8)];
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(indices as i64)) })
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_add_epi32(self.0, other.0) })
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_min_epu32(self.0, other.0) })
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_max_epu32(self.0, other.0) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        match size_of::<T>() {
            // SAFETY: AVX2 is present (module invariant); the caller guarantees 8 readable bytes.
            1 => U32x8(unsafe { _mm256_cvtepu8_epi32(_mm_loadl_epi64(ptr.cast())) }),
            // SAFETY: as above, 16 readable bytes.
            2 => U32x8(unsafe { _mm256_cvtepu16_epi32(_mm_loadu_si128(ptr.cast())) }),
            // SAFETY: as above, 32 readable bytes.
            _ => U32x8(unsafe { _mm256_loadu_si256(ptr.cast()) }),
        }
    }
    const CONVERTS_HALF: bool = true;
    #[inline(always)]
    unsafe fn load_half(ptr: *const u16) -> Self {
        // SAFETY: F16C is present with AVX2 (module invariant: the token checks both); the caller
        // guarantees 16 readable bytes.
        U32x8(unsafe { _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(ptr.cast()))) })
    }
    #[inline(always)]
    fn to_half(self) -> Self {
        // SAFETY: F16C is present with AVX2 (module invariant: the token checks both).
        U32x8(unsafe {
            _mm256_cvtepu16_epi32(_mm256_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(_mm256_castsi256_ps(
                self.0,
            )))
        })
    }
    const WIDENS_BF16: bool = true;
    #[inline(always)]
    unsafe fn load_bf16(ptr: *const u16) -> Self {
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 16 readable bytes.
        U32x8(unsafe { _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(_mm_loadu_si128(ptr.cast()))) })
    }
    #[inline(always)]
    fn to_bf16(self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_srli_epi32::<16>(self.0) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_set1_epi32(value as u32 as i32) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_and_si256(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_xor_si256(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpeq_epi32(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> __m256i {
        let bias = Self::splat(1 << 31);
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpgt_epi32(self.xor(bias).0, other.xor(bias).0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> __m256i {
        other.gt(self)
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpgt_epi32(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> __m256i {
        other.gt_signed(self)
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(
                _mm256_castsi256_ps(self.0),
                _mm256_castsi256_ps(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(
                _mm256_castsi256_ps(self.0),
                _mm256_castsi256_ps(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_NLE_UQ>(
                _mm256_castsi256_ps(self.0),
                _mm256_castsi256_ps(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // `vmaxps` returns `other` where either is NaN; the blend then takes `self` where it is one. Three
        // instructions where the trait's default takes four, and on a fold only the maximum and the blend
        // wait for the accumulator (`other`).
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe {
            let (x, y) = (_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(other.0));
            _mm256_castps_si256(_mm256_blendv_ps(
                _mm256_max_ps(x, y),
                x,
                _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x),
            ))
        })
    }
    #[inline(always)]
    fn float_max3(self, other: Self, acc: Self) -> Self {
        // `vmaxps` returns its second operand where either is NaN, so the second keeps a NaN of `acc`;
        // one unordered compare finds a NaN in either of the other two, and its all-ones lanes or-ed in
        // are a NaN. Four instructions for two vectors, where `float_max` twice takes six
        // (`benches/instructions.py` counts them on `moe4096x256_k8`).
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe {
            let (x, y) = (_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(other.0));
            let most = _mm256_max_ps(_mm256_max_ps(x, y), _mm256_castsi256_ps(acc.0));
            _mm256_castps_si256(_mm256_or_ps(most, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, y)))
        })
    }
    #[inline(always)]
    fn select(mask: __m256i, yes: Self, no: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U32x8(unsafe { _mm256_blendv_epi8(no.0, yes.0, mask) })
    }
    #[inline(always)]
    fn or_mask(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn any(mask: __m256i) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_testz_si256(mask, mask) == 0 }
    }
    #[inline(always)]
    fn bits(mask: __m256i) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        u64::from(unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(mask)) } as u8)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut native = [0u32; 8];
        // SAFETY: AVX2 is present (module invariant); `native` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(native.as_mut_ptr().cast(), self.0) };
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(native) {
            *out = u64::from(lane);
        }
        out
    }
}

/// 16-bit lanes where `a > b`, unsigned, as a mask: both biased by the sign bit, then compared signed.
#[inline(always)]
fn gt16_mask(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: only called from the vectors' methods above, which run with AVX2 (module invariant).
    unsafe {
        let sign = _mm256_set1_epi16(i16::MIN);
        _mm256_cmpgt_epi16(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign))
    }
}

/// The 16 lanes of a 16-bit compare's mask as bits: the lanes saturated to bytes (each 128-bit half's
/// eight, twice), the halves' first copies brought together, then one byte mask.
#[inline(always)]
fn bits16(mask: __m256i) -> u64 {
    // SAFETY: only called from the vectors' methods above, which run with AVX2 (module invariant).
    unsafe {
        let bytes = _mm256_permute4x64_epi64::<0b1101_1000>(_mm256_packs_epi16(mask, mask));
        u64::from(_mm256_movemask_epi8(bytes) as u16)
    }
}

/// For each 8-bit mask, the lanes whose bit is set, in order, one byte each from the lowest (the rest 0):
/// [`U32x8::compress`]'s `vpermd` indices.
const COMPRESS: [u64; 256] = {
    let mut table = [0; 256];
    let mut bits = 0;
    while bits < 256 {
        let (mut at, mut lane) = (0, 0);
        while lane < 8 {
            if bits >> lane & 1 == 1 {
                table[bits] |= (lane as u64) << (8 * at);
                at += 1;
            }
            lane += 1;
        }
        bits += 1;
    }
    table
};

/// [`COMPRESS`] for each vector of a block of four: every byte moved by the vector's eight lanes (at
/// most 7 + 24: no byte carries into the next), so that a compressed vector's positions are the entry
/// plus the block's first position, one add where they would take two.
const COMPRESS_AT: [[u64; 256]; 4] = {
    let mut tables = [COMPRESS; 4];
    let mut vector = 1;
    while vector < 4 {
        let mut bits = 0;
        while bits < 256 {
            tables[vector][bits] += 0x0808_0808_0808_0808 * vector as u64;
            bits += 1;
        }
        vector += 1;
    }
    tables
};

/// For each 4-bit mask, the `vpermd` indices that put the 64-bit lanes whose bit is set first, then the
/// others (64-bit lane `j` is 32-bit lanes `2j` and `2j + 1`).
const PARTITION: [[i32; 8]; 16] = {
    let mut table = [[0; 8]; 16];
    let mut bits = 0;
    while bits < 16 {
        let mut at = 0;
        let mut pass = 0;
        while pass < 2 {
            let mut lane: usize = 0;
            while lane < 4 {
                // The set lanes in the first pass, the clear ones in the second.
                if (bits >> lane & 1) ^ pass == 1 {
                    table[bits][2 * at] = 2 * lane as i32;
                    table[bits][2 * at + 1] = 2 * lane as i32 + 1;
                    at += 1;
                }
                lane += 1;
            }
            pass += 1;
        }
        bits += 1;
    }
    table
};

#[derive(Clone, Copy)]
pub(crate) struct U64x4(__m256i);

impl Vector for U64x4 {
    const LANES: usize = 4;
    type Mask = __m256i;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 32 writable bytes.
        unsafe { _mm256_storeu_si256(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_setr_epi64x(0, 1, 2, 3) })
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        // Moved as pairs of 32-bit lanes: 32-bit lane j takes lane j ^ 2m.
        let index = U32x8::iota().xor(U32x8::splat(2 * m as u64));
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_permutevar8x32_epi32(self.0, index.0) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        debug_assert_eq!(size_of::<T>(), 8);
        // SAFETY: AVX2 is present (module invariant); the caller guarantees 32 readable bytes.
        U64x4(unsafe { _mm256_loadu_si256(ptr.cast()) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_set1_epi64x(value as i64) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_and_si256(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_xor_si256(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpeq_epi64(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> __m256i {
        let bias = Self::splat(1 << 63);
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpgt_epi64(self.xor(bias).0, other.xor(bias).0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> __m256i {
        other.gt(self)
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_cmpgt_epi64(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> __m256i {
        other.gt_signed(self)
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LE_OQ>(
                _mm256_castsi256_pd(self.0),
                _mm256_castsi256_pd(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LT_OQ>(
                _mm256_castsi256_pd(self.0),
                _mm256_castsi256_pd(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe {
            _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_NLE_UQ>(
                _mm256_castsi256_pd(self.0),
                _mm256_castsi256_pd(limit.0),
            ))
        }
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // `vmaxpd` returns `other` where either is NaN; the blend then takes `self` where it is one. Three
        // instructions where the trait's default takes four, and on a fold only the maximum and the blend
        // wait for the accumulator (`other`).
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe {
            let (x, y) = (_mm256_castsi256_pd(self.0), _mm256_castsi256_pd(other.0));
            _mm256_castpd_si256(_mm256_blendv_pd(
                _mm256_max_pd(x, y),
                x,
                _mm256_cmp_pd::<_CMP_UNORD_Q>(x, x),
            ))
        })
    }
    #[inline(always)]
    fn select(mask: __m256i, yes: Self, no: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_blendv_epi8(no.0, yes.0, mask) })
    }
    #[inline(always)]
    fn or_mask(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn any(mask: __m256i) -> bool {
        // SAFETY: AVX2 is present (module invariant).
        unsafe { _mm256_testz_si256(mask, mask) == 0 }
    }
    #[inline(always)]
    fn bits(mask: __m256i) -> u64 {
        // SAFETY: AVX2 is present (module invariant).
        u64::from(unsafe { _mm256_movemask_pd(_mm256_castsi256_pd(mask)) } as u8)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        // SAFETY: AVX2 is present (module invariant); `out` has at least 32 writable bytes.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) };
        out
    }
    // Compress is the partition's table (the lanes not set follow, which compress leaves unspecified).
    const COMPRESSES: bool = true;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_add_epi64(self.0, other.0) })
    }
    #[inline(always)]
    unsafe fn store_positions(self, out: *mut u32) {
        // SAFETY: AVX2 is present (module invariant); `out` has room for 4 u32s (the caller's
        // precondition). The low halves of the four lanes, gathered into the low 16 bytes.
        unsafe {
            let low = _mm256_permutevar8x32_epi32(self.0, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
            _mm_storeu_si128(out.cast(), _mm256_castsi256_si128(low));
        }
    }
    #[inline(always)]
    fn compress_iota(bits: u64, vector: usize) -> Self {
        // The table's first four lanes for the low four bits, as for eight lanes, each byte moved by the
        // vector's four lanes (at most 3 + 12: no byte carries into the next).
        let indices = COMPRESS[(bits & 15) as usize] + 0x0404_0404_0404_0404 * (vector as u64 % 4);
        // SAFETY: AVX2 is present (module invariant).
        U64x4(unsafe { _mm256_cvtepu8_epi64(_mm_cvtsi64_si128(indices as i64)) })
    }
    #[inline(always)]
    fn partition_lanes(self, bits: u64) -> Self {
        let index = &PARTITION[(bits & 15) as usize];
        // SAFETY: AVX2 is present (module invariant); `index` is 32 readable bytes.
        U64x4(unsafe { _mm256_permutevar8x32_epi32(self.0, _mm256_loadu_si256(index.as_ptr().cast())) })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// `float_max3`'s four instructions give what `float_max` twice gives, a NaN for any NaN (of either
    /// sign, in any of the three), on every triple of edge values.
    #[test]
    fn float_max3_is_float_max_twice() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        // SAFETY: AVX2 was detected just above.
        unsafe { check_float_max3() }
    }

    #[target_feature(enable = "avx2,f16c,popcnt")]
    fn check_float_max3() {
        let edges = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE / 2.0,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7F80_0001),
        ];
        let lanes = |v: [f32; 3]| {
            let mut lanes = [0u64; MAX_LANES];
            for (lane, value) in lanes.iter_mut().zip(v.iter().cycle()) {
                *lane = u64::from(value.to_bits());
            }
            U32x8::from_lanes(lanes)
        };
        for &a in &edges {
            for &b in &edges {
                for &c in &edges {
                    // Each lane holds one order of the three.
                    let (x, y, z) = (lanes([a, b, c]), lanes([b, c, a]), lanes([c, a, b]));
                    let (three, twice) = (x.float_max3(y, z).lanes(), x.float_max(y).float_max(z).lanes());
                    for (lane, (&got, &want)) in three.iter().zip(&twice).take(8).enumerate() {
                        let (got, want) = (f32::from_bits(got as u32), f32::from_bits(want as u32));
                        assert!(
                            got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                            "{a} {b} {c} lane {lane}: {got} against {want}"
                        );
                    }
                }
            }
        }
    }
}
