//! NEON: four 32-bit or two 64-bit lanes per register (and eight 16-bit or sixteen 8-bit ones for
//! elements of those widths); compares give all-ones lanes. NEON has no `movemask`: `any` is a
//! horizontal max, and the bits (needed only when a lane passes) a weighted sum.

use core::arch::aarch64::*;

use crate::simd::vector::{MAX_LANES, Vector};

// The vectors below are only created inside the engine's functions above, which run only where NEON is
// present (the token's invariant): that is the precondition every intrinsic call below relies on.

#[derive(Clone, Copy)]
pub(crate) struct U32x4(uint32x4_t);

impl Vector for U32x4 {
    const LANES: usize = 4;
    type Mask = uint32x4_t;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: NEON is present (module invariant); the caller guarantees 16 writable bytes.
        unsafe { vst1q_u32(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        let lanes = [0u32, 1, 2, 3];
        // SAFETY: NEON is present (module invariant); `lanes` is 16 readable bytes.
        U32x4(unsafe { vld1q_u32(lanes.as_ptr()) })
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(self.0), byte_exchange(4 * m))) })
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vminq_u32(self.0, other.0) })
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vmaxq_u32(self.0, other.0) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        match size_of::<T>() {
            1 => {
                // Exactly four bytes: a wider load could leave the row.
                // SAFETY: the caller guarantees 4 readable bytes.
                let word = unsafe { ptr.cast::<u32>().read_unaligned() };
                // SAFETY: NEON is present (module invariant).
                U32x4(unsafe { vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(u64::from(word))))) })
            }
            // SAFETY: NEON is present (module invariant); the caller guarantees 8 readable bytes.
            2 => U32x4(unsafe { vmovl_u16(vld1_u16(ptr.cast())) }),
            // SAFETY: as above, 16 readable bytes.
            _ => U32x4(unsafe { vld1q_u32(ptr.cast()) }),
        }
    }
    const WIDENS_BF16: bool = true;
    #[inline(always)]
    unsafe fn load_bf16(ptr: *const u16) -> Self {
        // SAFETY: NEON is present (module invariant); the caller guarantees 8 readable bytes.
        U32x4(unsafe { vshll_n_u16::<16>(vld1_u16(ptr)) })
    }
    #[inline(always)]
    fn to_bf16(self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vshrq_n_u32::<16>(self.0) })
    }
    // 16-bit elements tested raw in eight 16-bit lanes, 8-bit integers in sixteen 8-bit lanes: NEON
    // compares both widths signed and unsigned, `any` is a horizontal maximum, and the bits a weighted
    // sum, as for the 32-bit lanes.
    const HALF_LANES: bool = true;
    #[inline(always)]
    unsafe fn load16(ptr: *const u16) -> Self {
        // SAFETY: NEON is present (module invariant); the caller guarantees 16 readable bytes.
        U32x4(unsafe { vreinterpretq_u32_u16(vld1q_u16(ptr)) })
    }
    #[inline(always)]
    fn lt16_signed(self, other: Self) -> u64 {
        other.gt16_signed(self)
    }
    #[inline(always)]
    fn gt16_signed(self, other: Self) -> u64 {
        bits16(gt16_signed_mask(self, other))
    }
    #[inline(always)]
    fn lt16(self, other: Self) -> u64 {
        other.gt16(self)
    }
    #[inline(always)]
    fn gt16(self, other: Self) -> u64 {
        bits16(gt16_mask(self, other))
    }
    #[inline(always)]
    fn gt16_signed_or_gt16(self, limit: Self, nan: Self) -> u64 {
        // SAFETY: NEON is present (module invariant).
        bits16(unsafe { vorrq_u16(gt16_signed_mask(self, limit), gt16_mask(self, nan)) })
    }
    #[inline(always)]
    fn lt16_or_gt16(self, limit: Self, nan: Self) -> u64 {
        // SAFETY: NEON is present (module invariant).
        bits16(unsafe { vorrq_u16(gt16_mask(limit, self), gt16_mask(self, nan)) })
    }
    #[inline(always)]
    fn any_gt16_signed(self, other: Self) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u16(gt16_signed_mask(self, other)) != 0 }
    }
    #[inline(always)]
    fn any_gt16(self, other: Self) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u16(gt16_mask(self, other)) != 0 }
    }
    #[inline(always)]
    fn max16_signed(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe {
            vreinterpretq_u32_s16(vmaxq_s16(vreinterpretq_s16_u32(self.0), vreinterpretq_s16_u32(other.0)))
        })
    }
    #[inline(always)]
    fn min16_signed(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe {
            vreinterpretq_u32_s16(vminq_s16(vreinterpretq_s16_u32(self.0), vreinterpretq_s16_u32(other.0)))
        })
    }
    #[inline(always)]
    fn max16(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe {
            vreinterpretq_u32_u16(vmaxq_u16(vreinterpretq_u16_u32(self.0), vreinterpretq_u16_u32(other.0)))
        })
    }
    #[inline(always)]
    fn min16(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe {
            vreinterpretq_u32_u16(vminq_u16(vreinterpretq_u16_u32(self.0), vreinterpretq_u16_u32(other.0)))
        })
    }
    const BYTE_LANES: bool = true;
    #[inline(always)]
    unsafe fn load8(ptr: *const u8) -> Self {
        // SAFETY: NEON is present (module invariant); the caller guarantees 16 readable bytes.
        U32x4(unsafe { vreinterpretq_u32_u8(vld1q_u8(ptr)) })
    }
    #[inline(always)]
    fn lt8_signed(self, other: Self) -> u64 {
        other.gt8_signed(self)
    }
    #[inline(always)]
    fn gt8_signed(self, other: Self) -> u64 {
        bits8(gt8_signed_mask(self, other))
    }
    #[inline(always)]
    fn lt8(self, other: Self) -> u64 {
        other.gt8(self)
    }
    #[inline(always)]
    fn gt8(self, other: Self) -> u64 {
        bits8(gt8_mask(self, other))
    }
    #[inline(always)]
    fn any_gt8_signed(self, other: Self) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u8(gt8_signed_mask(self, other)) != 0 }
    }
    #[inline(always)]
    fn any_gt8(self, other: Self) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u8(gt8_mask(self, other)) != 0 }
    }
    #[inline(always)]
    fn max8_signed(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vreinterpretq_u32_s8(vmaxq_s8(vreinterpretq_s8_u32(self.0), vreinterpretq_s8_u32(other.0))) })
    }
    #[inline(always)]
    fn min8_signed(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vreinterpretq_u32_s8(vminq_s8(vreinterpretq_s8_u32(self.0), vreinterpretq_s8_u32(other.0))) })
    }
    #[inline(always)]
    fn max8(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vreinterpretq_u32_u8(vmaxq_u8(vreinterpretq_u8_u32(self.0), vreinterpretq_u8_u32(other.0))) })
    }
    #[inline(always)]
    fn min8(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vreinterpretq_u32_u8(vminq_u8(vreinterpretq_u8_u32(self.0), vreinterpretq_u8_u32(other.0))) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vdupq_n_u32(value as u32) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vandq_u32(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { veorq_u32(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vceqq_u32(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcgtq_u32(self.0, other.0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcltq_u32(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcltq_s32(vreinterpretq_s32_u32(self.0), vreinterpretq_s32_u32(other.0)) }
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcgtq_s32(vreinterpretq_s32_u32(self.0), vreinterpretq_s32_u32(other.0)) }
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        opaque32(unsafe { vcleq_f32(vreinterpretq_f32_u32(self.0), vreinterpretq_f32_u32(limit.0)) })
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        opaque32(unsafe { vcltq_f32(vreinterpretq_f32_u32(self.0), vreinterpretq_f32_u32(limit.0)) })
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        opaque32(unsafe { vmvnq_u32(vcleq_f32(vreinterpretq_f32_u32(self.0), vreinterpretq_f32_u32(limit.0))) })
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // `fmax` returns a NaN where either is NaN.
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe {
            vreinterpretq_u32_f32(vmaxq_f32(vreinterpretq_f32_u32(self.0), vreinterpretq_f32_u32(other.0)))
        })
    }
    #[inline(always)]
    fn select(mask: uint32x4_t, yes: Self, no: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U32x4(unsafe { vbslq_u32(mask, yes.0, no.0) })
    }
    #[inline(always)]
    fn or_mask(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vorrq_u32(a, b) }
    }
    #[inline(always)]
    fn any(mask: uint32x4_t) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u32(mask) != 0 }
    }
    #[inline(always)]
    fn bits(mask: uint32x4_t) -> u64 {
        let weights = Self::splat(0).0;
        // SAFETY: NEON is present (module invariant).
        let weights = unsafe { vsetq_lane_u32::<1>(2, vsetq_lane_u32::<2>(4, vsetq_lane_u32::<3>(8, weights))) };
        // SAFETY: NEON is present (module invariant).
        let weights = unsafe { vsetq_lane_u32::<0>(1, weights) };
        // SAFETY: NEON is present (module invariant).
        u64::from(unsafe { vaddvq_u32(vandq_u32(mask, weights)) })
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut native = [0u32; 4];
        // SAFETY: NEON is present (module invariant); `native` is 16 writable bytes.
        unsafe { vst1q_u32(native.as_mut_ptr(), self.0) };
        let mut out = [0; MAX_LANES];
        for (out, lane) in out.iter_mut().zip(native) {
            *out = u64::from(lane);
        }
        out
    }
}

#[derive(Clone, Copy)]
pub(crate) struct U64x2(uint64x2_t);

impl Vector for U64x2 {
    const LANES: usize = 2;
    type Mask = uint64x2_t;

    #[inline(always)]
    unsafe fn store<T>(self, ptr: *mut T) {
        // SAFETY: NEON is present (module invariant); the caller guarantees 16 writable bytes.
        unsafe { vst1q_u64(ptr.cast(), self.0) }
    }
    #[inline(always)]
    fn iota() -> Self {
        let lanes = [0u64, 1];
        // SAFETY: NEON is present (module invariant); `lanes` is 16 readable bytes.
        U64x2(unsafe { vld1q_u64(lanes.as_ptr()) })
    }
    #[inline(always)]
    fn exchange(self, m: usize) -> Self {
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { vreinterpretq_u64_u8(vqtbl1q_u8(vreinterpretq_u8_u64(self.0), byte_exchange(8 * m))) })
    }

    #[inline(always)]
    unsafe fn load<T>(ptr: *const T) -> Self {
        debug_assert_eq!(size_of::<T>(), 8);
        // SAFETY: NEON is present (module invariant); the caller guarantees 16 readable bytes.
        U64x2(unsafe { vld1q_u64(ptr.cast()) })
    }
    #[inline(always)]
    fn splat(value: u64) -> Self {
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { vdupq_n_u64(value) })
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { vandq_u64(self.0, other.0) })
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { veorq_u64(self.0, other.0) })
    }
    #[inline(always)]
    fn eq(self, other: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vceqq_u64(self.0, other.0) }
    }
    #[inline(always)]
    fn gt(self, other: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcgtq_u64(self.0, other.0) }
    }
    #[inline(always)]
    fn lt(self, other: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcltq_u64(self.0, other.0) }
    }
    #[inline(always)]
    fn lt_signed(self, other: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcltq_s64(vreinterpretq_s64_u64(self.0), vreinterpretq_s64_u64(other.0)) }
    }
    #[inline(always)]
    fn gt_signed(self, other: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vcgtq_s64(vreinterpretq_s64_u64(self.0), vreinterpretq_s64_u64(other.0)) }
    }
    #[inline(always)]
    fn float_le(self, limit: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        opaque64(unsafe { vcleq_f64(vreinterpretq_f64_u64(self.0), vreinterpretq_f64_u64(limit.0)) })
    }
    #[inline(always)]
    fn float_lt(self, limit: Self) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        opaque64(unsafe { vcltq_f64(vreinterpretq_f64_u64(self.0), vreinterpretq_f64_u64(limit.0)) })
    }
    #[inline(always)]
    fn float_nle(self, limit: Self) -> uint64x2_t {
        // NEON has no 64-bit NOT: XOR with all ones.
        // SAFETY: NEON is present (module invariant).
        opaque64(unsafe {
            veorq_u64(
                vcleq_f64(vreinterpretq_f64_u64(self.0), vreinterpretq_f64_u64(limit.0)),
                vdupq_n_u64(u64::MAX),
            )
        })
    }
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        // `fmax` returns a NaN where either is NaN.
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe {
            vreinterpretq_u64_f64(vmaxq_f64(vreinterpretq_f64_u64(self.0), vreinterpretq_f64_u64(other.0)))
        })
    }
    #[inline(always)]
    fn select(mask: uint64x2_t, yes: Self, no: Self) -> Self {
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { vbslq_u64(mask, yes.0, no.0) })
    }
    #[inline(always)]
    fn or_mask(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
        // SAFETY: NEON is present (module invariant).
        unsafe { vorrq_u64(a, b) }
    }
    #[inline(always)]
    fn any(mask: uint64x2_t) -> bool {
        // SAFETY: NEON is present (module invariant).
        unsafe { vmaxvq_u32(vreinterpretq_u32_u64(mask)) != 0 }
    }
    #[inline(always)]
    fn bits(mask: uint64x2_t) -> u64 {
        // SAFETY: NEON is present (module invariant).
        let low = unsafe { vgetq_lane_u64::<0>(mask) };
        // SAFETY: NEON is present (module invariant).
        let high = unsafe { vgetq_lane_u64::<1>(mask) };
        (low & 1) | (high & 2)
    }
    #[inline(always)]
    fn lanes(self) -> [u64; MAX_LANES] {
        let mut out = [0; MAX_LANES];
        // SAFETY: NEON is present (module invariant); `out` has at least 16 writable bytes.
        unsafe { vst1q_u64(out.as_mut_ptr(), self.0) };
        out
    }
    #[inline(always)]
    fn partition_lanes(self, bits: u64) -> Self {
        // Two lanes: only "lane 1 set, lane 0 clear" changes the order, into a swap.
        let swap = if bits & 3 == 2 { u64::MAX } else { 0 };
        // SAFETY: NEON is present (module invariant).
        U64x2(unsafe { vbslq_u64(vdupq_n_u64(swap), vextq_u64::<1>(self.0, self.0), self.0) })
    }
}

/// The 16-bit lanes where `a > b`, signed, as a mask.
#[inline(always)]
fn gt16_signed_mask(a: U32x4, b: U32x4) -> uint16x8_t {
    // SAFETY: NEON is present (module invariant).
    unsafe { vcgtq_s16(vreinterpretq_s16_u32(a.0), vreinterpretq_s16_u32(b.0)) }
}

/// The 16-bit lanes where `a > b`, unsigned, as a mask.
#[inline(always)]
fn gt16_mask(a: U32x4, b: U32x4) -> uint16x8_t {
    // SAFETY: NEON is present (module invariant).
    unsafe { vcgtq_u16(vreinterpretq_u16_u32(a.0), vreinterpretq_u16_u32(b.0)) }
}

/// The 8-bit lanes where `a > b`, signed, as a mask.
#[inline(always)]
fn gt8_signed_mask(a: U32x4, b: U32x4) -> uint8x16_t {
    // SAFETY: NEON is present (module invariant).
    unsafe { vcgtq_s8(vreinterpretq_s8_u32(a.0), vreinterpretq_s8_u32(b.0)) }
}

/// The 8-bit lanes where `a > b`, unsigned, as a mask.
#[inline(always)]
fn gt8_mask(a: U32x4, b: U32x4) -> uint8x16_t {
    // SAFETY: NEON is present (module invariant).
    unsafe { vcgtq_u8(vreinterpretq_u8_u32(a.0), vreinterpretq_u8_u32(b.0)) }
}

/// A mask of eight 16-bit lanes as bits (bit `i` for lane `i`): each lane's weight kept where it is
/// set, then summed across.
#[inline(always)]
fn bits16(mask: uint16x8_t) -> u64 {
    const WEIGHTS: [u16; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
    // SAFETY: NEON is present (module invariant); `WEIGHTS` is 16 readable bytes.
    u64::from(unsafe { vaddvq_u16(vandq_u16(mask, vld1q_u16(WEIGHTS.as_ptr()))) })
}

/// A mask of sixteen 8-bit lanes as bits (bit `i` for lane `i`): each half's weights summed across,
/// the high half's sum the high byte.
#[inline(always)]
fn bits8(mask: uint8x16_t) -> u64 {
    const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
    // SAFETY: NEON is present (module invariant); `WEIGHTS` is 16 readable bytes.
    let (low, high) = unsafe {
        let weighted = vandq_u8(mask, vld1q_u8(WEIGHTS.as_ptr()));
        (vaddv_u8(vget_low_u8(weighted)), vaddv_u8(vget_high_u8(weighted)))
    };
    u64::from(low) | u64::from(high) << 8
}

/// The `vqtbl1q_u8` index that moves byte `i` to byte `i ^ m`: lane exchanges at any lane width.
#[inline(always)]
fn byte_exchange(m: usize) -> uint8x16_t {
    let bytes: [u8; 16] = core::array::from_fn(|i| (i ^ m) as u8);
    // SAFETY: NEON is present (module invariant); `bytes` is 16 readable bytes.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

// Float compare masks pass through an empty `asm!` that LLVM cannot see into. Otherwise, in the
// filter's hot loop, it rewrote "any of these lanes below the limit" as "the minimum of the lanes
// (FMINNM) below the limit" (rustc 1.95), which is wrong when a lane is a signalling NaN: FMINNM then
// gives NaN, and the other lanes' passes were lost (f32 rows with a NaN and -inf, `Increasing`, under
// qemu; an unoptimised build was right). LLVM's float semantics leave signalling NaNs unspecified; this
// crate's are exact for every bit pattern.

/// `mask`, opaque to the optimiser.
#[inline(always)]
fn opaque32(mut mask: uint32x4_t) -> uint32x4_t {
    // SAFETY: an empty instruction template (a comment): the register is left as it is.
    unsafe { core::arch::asm!("/* {0:v} */", inout(vreg) mask, options(pure, nomem, nostack, preserves_flags)) };
    mask
}

/// `mask`, opaque to the optimiser.
#[inline(always)]
fn opaque64(mut mask: uint64x2_t) -> uint64x2_t {
    // SAFETY: an empty instruction template (a comment): the register is left as it is.
    unsafe { core::arch::asm!("/* {0:v} */", inout(vreg) mask, options(pure, nomem, nostack, preserves_flags)) };
    mask
}
