//! AVX-512F and BW: sixteen 32-bit or eight 64-bit lanes; compares give `k` mask registers, which are
//! the bits.
//!
//! Keys live in 32/64-bit lanes (8/16-bit elements are widened by `vpmovzx{b,w}d`), and F has the
//! unsigned compares and mask blends of those widths. BW adds the 16-bit compares that test f16 rows on
//! their raw bits, 32 to a register (converting them to f32 first leaves the scan bound by the
//! conversions, not by memory); every AVX-512 CPU but the Xeon Phi has it.

use core::arch::x86_64::*;

use crate::simd::vector::{MAX_LANES, Vector};

// The vectors below are only created inside the engine's functions above, which run only on a CPU with
// AVX-512F and AVX-512BW (the token's invariant): that is the precondition every intrinsic call below
// relies on.

/// The `vfixupimm` table that takes the source lane where it is a NaN (class 0 QNaN, class 1 SNaN:
/// response 1, the source) and keeps the destination lane for every other class (response 0).
const NAN_TAKES_SOURCE: i32 = 0x11;

#[derive(Clone, Copy)]
pub(crate) struct U32x16(__m512i);

impl Vector for U32x16 {
    const LANES: usize = 16;
    type Mask = __mmask16;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 64 writable bytes.
        unsafe { _mm512_storeu_si512(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0) })
    }
    const COMPRESSES: bool = true;
    const FOLDS_FLOATS: bool = true;
    #[inline(always)]
    fn compress(self, bits: u64) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_maskz_compress_epi32(bits as __mmask16, self.0) })
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_add_epi32(self.0, other.0) })
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        let index = Self::iota().xor(Self::splat(m as u64));
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_permutexvar_epi32(index.0, self.0) })
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_min_epu32(self.0, other.0) })
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_max_epu32(self.0, other.0) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        match size_of::<T>() {
            // SAFETY: AVX-512F is present (module invariant); the caller guarantees 16 readable bytes.
            1 => U32x16(unsafe { _mm512_cvtepu8_epi32(_mm_loadu_si128(ptr.cast())) }),
            // SAFETY: as above, 32 readable bytes.
            2 => U32x16(unsafe { _mm512_cvtepu16_epi32(_mm256_loadu_si256(ptr.cast())) }),
            // SAFETY: as above, 64 readable bytes.
            _ => U32x16(unsafe { _mm512_loadu_si512(ptr.cast()) }),
        }
    }
    const CONVERTS_HALF: bool = true;
    #[inline(always)]
    unsafe fn load_half(ptr: *const u16) -> Self {
        // SAFETY: AVX-512F (which has `vcvtph2ps` on 512 bits) is present (module invariant); the caller
        // guarantees 32 readable bytes.
        U32x16(unsafe { _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256(ptr.cast()))) })
    }
    #[inline(always)]
    fn to_half(self) -> Self {
        // SAFETY: AVX-512F (which has `vcvtps2ph` on 512 bits) is present (module invariant).
        U32x16(unsafe {
            _mm512_cvtepu16_epi32(_mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_castsi512_ps(self.0),
            ))
        })
    }
    const WIDENS_BF16: bool = true;
    #[inline(always)]
    unsafe fn load_bf16(ptr: *const u16) -> Self {
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 32 readable bytes.
        U32x16(unsafe { _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm256_loadu_si256(ptr.cast()))) })
    }
    #[inline(always)]
    fn to_bf16(self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_srli_epi32::<16>(self.0) })
    }
    const HALF_LANES: bool = true;
    #[inline(always)]
    unsafe fn load16(ptr: *const u16) -> Self {
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 64 readable bytes.
        U32x16(unsafe { _mm512_loadu_si512(ptr.cast()) })
    }
    #[inline(always)]
    fn lt16_signed(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        u64::from(unsafe { _mm512_cmplt_epi16_mask(self.0, other.0) })
    }
    #[inline(always)]
    fn gt16_signed(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        u64::from(unsafe { _mm512_cmpgt_epi16_mask(self.0, other.0) })
    }
    #[inline(always)]
    fn lt16(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        u64::from(unsafe { _mm512_cmplt_epu16_mask(self.0, other.0) })
    }
    #[inline(always)]
    fn gt16(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        u64::from(unsafe { _mm512_cmpgt_epu16_mask(self.0, other.0) })
    }
    #[inline(always)]
    fn max16_signed(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_max_epi16(self.0, other.0) })
    }
    #[inline(always)]
    fn min16_signed(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_min_epi16(self.0, other.0) })
    }
    #[inline(always)]
    fn max16(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_max_epu16(self.0, other.0) })
    }
    #[inline(always)]
    fn min16(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_min_epu16(self.0, other.0) })
    }
    const BYTE_LANES: bool = true;
    #[inline(always)]
    unsafe fn load8(ptr: *const u8) -> Self {
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 64 readable bytes.
        U32x16(unsafe { _mm512_loadu_si512(ptr.cast()) })
    }
    #[inline(always)]
    fn lt8_signed(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        unsafe { _mm512_cmplt_epi8_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt8_signed(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        unsafe { _mm512_cmpgt_epi8_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn lt8(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        unsafe { _mm512_cmplt_epu8_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt8(self, other: Self) -> u64 {
        // SAFETY: AVX-512BW is present (module invariant).
        unsafe { _mm512_cmpgt_epu8_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn max8_signed(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_max_epi8(self.0, other.0) })
    }
    #[inline(always)]
    fn min8_signed(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_min_epi8(self.0, other.0) })
    }
    #[inline(always)]
    fn max8(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_max_epu8(self.0, other.0) })
    }
    #[inline(always)]
    fn min8(self, other: Self) -> Self {
        // SAFETY: AVX-512BW is present (module invariant).
        U32x16(unsafe { _mm512_min_epu8(self.0, other.0) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_set1_epi32(value as u32 as i32) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_and_si512(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_xor_si512(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpeq_epu32_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpgt_epu32_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmplt_epu32_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmplt_epi32_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpgt_epi32_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(limit.0)) }
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(limit.0)) }
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> __mmask16 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(limit.0)) }
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // `vmaxps` returns `other` where either is NaN; the fix-up then takes `self` where it is a NaN
        // (table: QNaN and SNaN → the source, every other class → the destination).
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe {
            let (x, y) = (_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(other.0));
            _mm512_castps_si512(_mm512_fixupimm_ps::<0>(
                _mm512_max_ps(x, y),
                x,
                _mm512_set1_epi32(NAN_TAKES_SOURCE),
            ))
        })
    }
    #[inline(always)]
    fn float_min(self, other: Self) -> Self {
        // `vminps` returns `other` where either is NaN, as the trait's default does.
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_castps_si512(_mm512_min_ps(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(other.0))) })
    }
    #[inline(always)]
    fn select(mask: __mmask16, yes: Self, no: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U32x16(unsafe { _mm512_mask_blend_epi32(mask, no.0, yes.0) })
    }
    #[inline(always)]
    fn or_mask(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    fn any(mask: __mmask16) -> bool {
        mask != 0
    }
    #[inline(always)]
    fn bits(mask: __mmask16) -> u64 {
        u64::from(mask)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut native = [0u32; 16];
        // SAFETY: AVX-512F is present (module invariant); `native` is 64 writable bytes.
        unsafe { _mm512_storeu_si512(native.as_mut_ptr().cast(), self.0) };
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(native) {
            *out = u64::from(lane);
        }
        out
    }
}

/// For each 8-bit mask, the source lane of each lane of the result, a byte each (lane 0 in the low byte):
/// the lanes whose bit is set first, then the others.
const PARTITION: [u64; 256] = {
    let mut table = [0; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut at = 0;
        let mut pass = 0;
        while pass < 2 {
            let mut lane: usize = 0;
            while lane < 8 {
                // The set lanes in the first pass, the clear ones in the second.
                if (bits >> lane & 1) ^ pass == 1 {
                    table[bits] |= (lane as u64) << (8 * at);
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
pub(crate) struct U64x8(__m512i);

impl Vector for U64x8 {
    const LANES: usize = 8;
    type Mask = __mmask8;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 64 writable bytes.
        unsafe { _mm512_storeu_si512(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0) })
    }
    const COMPRESSES: bool = true;
    const FOLDS_FLOATS: bool = true;
    #[inline(always)]
    fn compress(self, bits: u64) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_maskz_compress_epi64(bits as __mmask8, self.0) })
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_add_epi64(self.0, other.0) })
    }
    #[inline(always)]
    unsafe fn store_positions(self, out: *mut u32) {
        // SAFETY: AVX-512F is present (module invariant); `out` has room for 8 u32s (the caller's
        // precondition), the 32 bytes of the narrowed lanes.
        unsafe { _mm256_storeu_si256(out.cast(), _mm512_cvtepi64_epi32(self.0)) }
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        let index = Self::iota().xor(Self::splat(m as u64));
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_permutexvar_epi64(index.0, self.0) })
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_min_epu64(self.0, other.0) })
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_max_epu64(self.0, other.0) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        debug_assert_eq!(size_of::<T>(), 8);
        // SAFETY: AVX-512F is present (module invariant); the caller guarantees 64 readable bytes.
        U64x8(unsafe { _mm512_loadu_si512(ptr.cast()) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_set1_epi64(value as i64) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_and_si512(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_xor_si512(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpeq_epu64_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpgt_epu64_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmplt_epu64_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmplt_epi64_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmpgt_epi64_mask(self.0, other.0) }
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(_mm512_castsi512_pd(self.0), _mm512_castsi512_pd(limit.0)) }
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_castsi512_pd(self.0), _mm512_castsi512_pd(limit.0)) }
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> __mmask8 {
        // SAFETY: AVX-512F is present (module invariant).
        unsafe { _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(_mm512_castsi512_pd(self.0), _mm512_castsi512_pd(limit.0)) }
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // As U32x16's.
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe {
            let (x, y) = (_mm512_castsi512_pd(self.0), _mm512_castsi512_pd(other.0));
            _mm512_castpd_si512(_mm512_fixupimm_pd::<0>(
                _mm512_max_pd(x, y),
                x,
                _mm512_set1_epi64(NAN_TAKES_SOURCE.into()),
            ))
        })
    }
    #[inline(always)]
    fn float_min(self, other: Self) -> Self {
        // As U32x16's.
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_castpd_si512(_mm512_min_pd(_mm512_castsi512_pd(self.0), _mm512_castsi512_pd(other.0))) })
    }
    #[inline(always)]
    fn select(mask: __mmask8, yes: Self, no: Self) -> Self {
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe { _mm512_mask_blend_epi64(mask, no.0, yes.0) })
    }
    #[inline(always)]
    fn or_mask(a: __mmask8, b: __mmask8) -> __mmask8 {
        a | b
    }
    #[inline(always)]
    fn any(mask: __mmask8) -> bool {
        mask != 0
    }
    #[inline(always)]
    fn bits(mask: __mmask8) -> u64 {
        u64::from(mask)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        // SAFETY: AVX-512F is present (module invariant); `out` has at least 64 writable bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) };
        out
    }
    #[inline(always)]
    fn partition_lanes(self, bits: u64) -> Self {
        // One `vpermq`: the eight source lanes of the mask's order, a byte each, broadcast and shifted so
        // that lane i's low three bits are byte i (`vpermq` reads no more). Compressing the set lanes and
        // expanding the compressed clear ones above them (`vpcompressq`, `vpexpandq`, register forms)
        // takes three instructions of two micro-ops on the shuffle port, which slows the whole partition
        // (`benches/sorters.rs`, "partition select").
        let packed = PARTITION[(bits & 0xFF) as usize];
        // SAFETY: AVX-512F is present (module invariant).
        U64x8(unsafe {
            let shifts = _mm512_set_epi64(56, 48, 40, 32, 24, 16, 8, 0);
            let index = _mm512_srlv_epi64(_mm512_set1_epi64(packed as i64), shifts);
            _mm512_permutexvar_epi64(index, self.0)
        })
    }
}
