//! The private SIMD vocabulary every engine's algorithm is written in (memchr's `src/vector.rs`).
//!
//! A [`Vector`] is a register of unsigned lanes, 32 or 64 bits wide: keys of 8-, 16- and 32-bit types
//! travel zero-extended in 32-bit lanes (one lane width for six types, and the widening load is one
//! instruction on every ISA), 64-bit types in 64-bit lanes. Every method is `#[inline(always)]` in the
//! impls and none carries `#[target_feature]`: the ISA's single `#[target_feature]` wrapper around the
//! generic body is what lets the intrinsics inline (see `arch/x86_64`, `arch/aarch64`).

/// The most lanes a vector has (AVX-512, 32-bit lanes).
pub(crate) const MAX_LANES: usize = 16;

/// A register of `LANES` unsigned lanes (32- or 64-bit), with the few operations the kernels use.
pub(crate) trait Vector: Copy {
    /// Number of lanes.
    const LANES: usize;
    /// The result of a lane-wise comparison.
    type Mask: Copy;

    /// Loads `LANES` consecutive elements of `T`, each zero-extended to a lane.
    ///
    /// # Safety
    /// `ptr` is valid for reading `LANES` elements of `T` (no alignment needed), and `T` is a plain
    /// integer or float type of 1, 2 or 4 bytes for 32-bit lanes, 8 bytes for 64-bit lanes.
    unsafe fn load<T>(ptr: *const T) -> Self;
    /// Whether [`load_half`](Self::load_half) converts: 32-bit lanes on an ISA with an f16 → f32
    /// instruction (F16C, AVX-512F).
    const CONVERTS_HALF: bool = false;
    /// Loads `LANES` IEEE binary16 values, each converted to the bits of the f32 of the same value (exact:
    /// every f16 is an f32, NaN stays NaN). Called only where [`CONVERTS_HALF`](Self::CONVERTS_HALF); the
    /// default loads the raw bits.
    ///
    /// # Safety
    /// `ptr` is valid for reading `LANES` `u16`s (no alignment needed).
    #[inline(always)]
    unsafe fn load_half(ptr: *const u16) -> Self {
        // SAFETY: the caller's precondition, for a 2-byte integer type.
        unsafe { Self::load(ptr) }
    }
    /// The binary16 bits of f32 lanes that hold f16 values ([`load_half`](Self::load_half) undone: exact),
    /// zero-extended. Called only where [`CONVERTS_HALF`](Self::CONVERTS_HALF); the default returns the
    /// lanes as they are, which `load_half`'s default left raw.
    #[inline(always)]
    fn to_half(self) -> Self {
        self
    }
    /// Whether [`load_bf16`](Self::load_bf16) widens: 32-bit lanes of the SIMD engines (a shift, no
    /// conversion instruction needed).
    const WIDENS_BF16: bool = false;
    /// Loads `LANES` bfloat16 values, each widened to the bits of the f32 of the same value (its bits
    /// shifted up 16: exact, NaN stays NaN). Called only where [`WIDENS_BF16`](Self::WIDENS_BF16); the
    /// default loads the raw bits.
    ///
    /// # Safety
    /// `ptr` is valid for reading `LANES` `u16`s (no alignment needed).
    #[inline(always)]
    unsafe fn load_bf16(ptr: *const u16) -> Self {
        // SAFETY: the caller's precondition, for a 2-byte integer type.
        unsafe { Self::load(ptr) }
    }
    /// The bfloat16 bits of f32 lanes that hold bf16 values ([`load_bf16`](Self::load_bf16) undone),
    /// zero-extended. Called only where [`WIDENS_BF16`](Self::WIDENS_BF16); the default returns the
    /// lanes as they are.
    #[inline(always)]
    fn to_bf16(self) -> Self {
        self
    }
    /// Whether the register also has `2 · LANES` 16-bit lanes with the compares below (AVX-512BW, AVX2, NEON):
    /// rows of 16-bit elements (f16, bf16, i16, u16) are then tested on their raw bits, with no conversion
    /// or widening (`arch::generic::lanes`'s `in_16_bit_lanes`).
    const HALF_LANES: bool = false;
    /// Loads `2 · LANES` `u16`s into 16-bit lanes, unchanged. Called only where
    /// [`HALF_LANES`](Self::HALF_LANES); the default loads through [`load`](Self::load).
    ///
    /// # Safety
    /// `ptr` is valid for reading `2 · LANES` `u16`s (no alignment needed).
    #[inline(always)]
    unsafe fn load16(ptr: *const u16) -> Self {
        // SAFETY: the caller's precondition covers `LANES` u16s, the most `load` reads.
        unsafe { Self::load(ptr) }
    }
    /// 16-bit lanes where `self < other`, signed, as bits (bit `i` for lane `i`, `2 · LANES` of them).
    /// The default (never used: see [`HALF_LANES`](Self::HALF_LANES)) sets every lane, which a lane test
    /// may always do.
    #[inline(always)]
    fn lt16_signed(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 2 * Self::LANES)
    }
    /// 16-bit lanes where `self > other`, signed (as [`lt16_signed`](Self::lt16_signed)).
    #[inline(always)]
    fn gt16_signed(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 2 * Self::LANES)
    }
    /// 16-bit lanes where `self < other`, unsigned (as [`lt16_signed`](Self::lt16_signed)).
    #[inline(always)]
    fn lt16(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 2 * Self::LANES)
    }
    /// 16-bit lanes where `self > other`, unsigned (as [`lt16_signed`](Self::lt16_signed)).
    #[inline(always)]
    fn gt16(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 2 * Self::LANES)
    }
    /// `self.gt16_signed(limit) | self.gt16(nan)`: where masks take several instructions to become
    /// bits (AVX2), the two masks are combined first.
    #[inline(always)]
    fn gt16_signed_or_gt16(self, limit: Self, nan: Self) -> u64 {
        self.gt16_signed(limit) | self.gt16(nan)
    }
    /// `self.lt16(limit) | self.gt16(nan)`, as [`gt16_signed_or_gt16`](Self::gt16_signed_or_gt16).
    #[inline(always)]
    fn lt16_or_gt16(self, limit: Self, nan: Self) -> u64 {
        self.lt16(limit) | self.gt16(nan)
    }
    /// Whether any 16-bit lane has `self > other`, signed: [`gt16_signed`](Self::gt16_signed) with no
    /// bits to gather (the f16 scan's test of its folded registers).
    #[inline(always)]
    fn any_gt16_signed(self, other: Self) -> bool {
        self.gt16_signed(other) != 0
    }
    /// Whether any 16-bit lane has `self > other`, unsigned (as [`any_gt16_signed`](Self::any_gt16_signed)).
    #[inline(always)]
    fn any_gt16(self, other: Self) -> bool {
        self.gt16(other) != 0
    }
    /// Lane-wise maximum of 16-bit lanes, signed: the f16 scan folds its registers with these before
    /// one compare. Called only where [`HALF_LANES`](Self::HALF_LANES); the default returns `self`,
    /// whose compares above pass every lane anyway.
    #[inline(always)]
    fn max16_signed(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise minimum of 16-bit lanes, signed (as [`max16_signed`](Self::max16_signed)).
    #[inline(always)]
    fn min16_signed(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise maximum of 16-bit lanes, unsigned (as [`max16_signed`](Self::max16_signed)).
    #[inline(always)]
    fn max16(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise minimum of 16-bit lanes, unsigned (as [`max16_signed`](Self::max16_signed)).
    #[inline(always)]
    fn min16(self, _other: Self) -> Self {
        self
    }
    /// Whether the register also has `4 · LANES` 8-bit lanes with the compares below (AVX-512BW, AVX2, NEON):
    /// rows of 8-bit integers are then tested on their raw bits, not zero-extended into wider lanes
    /// (`arch::generic::lanes`'s `in_8_bit_lanes`). The defaults are never used where this is false.
    const BYTE_LANES: bool = false;
    /// Loads `4 · LANES` bytes into 8-bit lanes, unchanged. Called only where
    /// [`BYTE_LANES`](Self::BYTE_LANES); the default loads through [`load`](Self::load).
    ///
    /// # Safety
    /// `ptr` is valid for reading `4 · LANES` bytes (no alignment needed).
    #[inline(always)]
    unsafe fn load8(ptr: *const u8) -> Self {
        // SAFETY: the caller's precondition covers `LANES` bytes, the most `load` reads of `u8`.
        unsafe { Self::load(ptr) }
    }
    /// 8-bit lanes where `self < other`, signed, as bits (bit `i` for lane `i`, `4 · LANES` of them).
    /// The default sets every lane, which a lane test may always do.
    #[inline(always)]
    fn lt8_signed(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 4 * Self::LANES)
    }
    /// 8-bit lanes where `self > other`, signed (as [`lt8_signed`](Self::lt8_signed)).
    #[inline(always)]
    fn gt8_signed(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 4 * Self::LANES)
    }
    /// 8-bit lanes where `self < other`, unsigned (as [`lt8_signed`](Self::lt8_signed)).
    #[inline(always)]
    fn lt8(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 4 * Self::LANES)
    }
    /// 8-bit lanes where `self > other`, unsigned (as [`lt8_signed`](Self::lt8_signed)).
    #[inline(always)]
    fn gt8(self, _other: Self) -> u64 {
        u64::MAX >> (64 - 4 * Self::LANES)
    }
    /// Whether any 8-bit lane has `self > other`, signed, with no bits to gather.
    #[inline(always)]
    fn any_gt8_signed(self, other: Self) -> bool {
        self.gt8_signed(other) != 0
    }
    /// Whether any 8-bit lane has `self > other`, unsigned.
    #[inline(always)]
    fn any_gt8(self, other: Self) -> bool {
        self.gt8(other) != 0
    }
    /// Lane-wise maximum of 8-bit lanes, signed (the scan's fold, as
    /// [`max16_signed`](Self::max16_signed)); the default returns `self`.
    #[inline(always)]
    fn max8_signed(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise minimum of 8-bit lanes, signed (as [`max8_signed`](Self::max8_signed)).
    #[inline(always)]
    fn min8_signed(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise maximum of 8-bit lanes, unsigned (as [`max8_signed`](Self::max8_signed)).
    #[inline(always)]
    fn max8(self, _other: Self) -> Self {
        self
    }
    /// Lane-wise minimum of 8-bit lanes, unsigned (as [`max8_signed`](Self::max8_signed)).
    #[inline(always)]
    fn min8(self, _other: Self) -> Self {
        self
    }
    /// Every lane set to `value` (truncated to the lane width).
    fn splat(value: u64) -> Self;
    /// Lane-wise `self & other`.
    fn and(self, other: Self) -> Self;
    /// Lane-wise `self ^ other`.
    fn xor(self, other: Self) -> Self;
    /// Lanes where `self == other`.
    fn eq(self, other: Self) -> Self::Mask;
    /// Lanes where `self > other`, unsigned.
    fn gt(self, other: Self) -> Self::Mask;
    /// Lanes where `self < other`, unsigned.
    fn lt(self, other: Self) -> Self::Mask;
    /// Lanes where `self < other`, read as two's complement integers of the lane's width. The default
    /// biases both by the sign bit and compares unsigned; the SIMD ISAs compare signed in one instruction.
    #[inline(always)]
    fn lt_signed(self, other: Self) -> Self::Mask {
        // Every impl is its register alone: its size over its lanes is the lane's width.
        let sign = Self::splat(1 << (8 * size_of::<Self>() / Self::LANES - 1));
        self.xor(sign).lt(other.xor(sign))
    }
    /// Lanes where `self > other`, signed (as [`lt_signed`](Self::lt_signed)).
    #[inline(always)]
    fn gt_signed(self, other: Self) -> Self::Mask {
        other.lt_signed(self)
    }
    /// Lanes whose bits, read as IEEE floats of the lane's width, are `<= limit`'s (false for NaN).
    fn float_le(self, limit: Self) -> Self::Mask;
    /// Lanes whose bits, read as IEEE floats of the lane's width, are `< limit`'s (false for NaN).
    fn float_lt(self, limit: Self) -> Self::Mask;
    /// Lanes whose bits, read as IEEE floats of the lane's width, are not `<= limit`'s (true for NaN).
    fn float_nle(self, limit: Self) -> Self::Mask;
    /// Lane-wise, reading the bits as IEEE floats of the lane's width: the larger, and a NaN where either
    /// is NaN (the better of the two in `docs/CONTRACT.md` §2's `Decreasing` order, up to which NaN). The
    /// default compares and blends (two compares, an or and a blend); the ISAs with a maximum that can
    /// keep the NaN take one or two instructions.
    #[inline(always)]
    fn float_max(self, other: Self) -> Self {
        Self::select(Self::or_mask(other.float_lt(self), self.float_nle(self)), self, other)
    }
    /// [`float_max`](Self::float_max) of the three, `acc` last (a fold's accumulator: only the last
    /// steps wait for it). A NaN where any is NaN, whose bits may be any NaN's (every NaN keys the same).
    #[inline(always)]
    fn float_max3(self, other: Self, acc: Self) -> Self {
        self.float_max(other).float_max(acc)
    }
    /// Lane-wise, reading the bits as IEEE floats of the lane's width: `self` where it is below `other`,
    /// `other` otherwise (so where either is NaN: a fold into an accumulator that is never NaN skips the
    /// NaNs). x86's `minps` does exactly this.
    #[inline(always)]
    fn float_min(self, other: Self) -> Self {
        Self::select(self.float_lt(other), self, other)
    }
    /// Whether the hot loop tests a float block by folding its vectors with
    /// [`float_max`](Self::float_max) or [`float_min`](Self::float_min) and comparing once, rather than
    /// comparing each vector and or-ing the masks: where masks are registers of their own, whose
    /// instructions bound the loop (AVX-512).
    const FOLDS_FLOATS: bool = false;
    /// `yes` in the lanes of `mask`, `no` elsewhere.
    fn select(mask: Self::Mask, yes: Self, no: Self) -> Self;
    /// Lanes set in either mask.
    fn or_mask(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// Whether any lane of `mask` is set.
    fn any(mask: Self::Mask) -> bool;
    /// The mask as bits: bit `i` set iff lane `i` is.
    fn bits(mask: Self::Mask) -> u64;
    /// The lanes, zero-extended, in the first `LANES` entries.
    fn lanes(self) -> [u64; MAX_LANES];

    /// Whether the filter's hot paths are worth compiling in several copies (one per float test, two
    /// blocks a branch, the guessed cap of long rows): true for SIMD registers. The portable lanes keep
    /// one generic copy: they are what firmware links, and the copies would take the firmware image far
    /// over its flash budget.
    const SPECIALIZE: bool = true;

    // What the sorting networks of `arch::generic::network` need.

    /// Stores the `LANES` lanes at their own width (4 or 8 bytes each).
    ///
    /// # Safety
    /// `ptr` is valid for writing `LANES` elements of `T` (no alignment needed), and `T` is the unsigned
    /// integer of the lane's width.
    unsafe fn store<T>(self, ptr: *mut T);
    /// Lane `i` holds `i`.
    fn iota() -> Self;
    /// Lane `i` of the result is lane `i ^ m` of `self` (`m < LANES`; a constant after inlining, so that
    /// the ISA can pick a fixed shuffle).
    fn exchange(self, m: usize) -> Self;
    /// Lane-wise unsigned minimum.
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Self::select(self.gt(other), other, self)
    }
    /// Lane-wise unsigned maximum.
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Self::select(self.gt(other), self, other)
    }

    // What short rows collect with, where the ISA compresses (AVX-512, and AVX2 by tables).

    /// Whether [`compress`](Self::compress), [`add`](Self::add) and
    /// [`store_positions`](Self::store_positions) are a few instructions with no branch (AVX-512's
    /// `vpcompressd` and `vpcompressq`; on AVX2 a table of `vpermd` indices per mask): short rows then
    /// collect the positions that pass with no branch per element.
    const COMPRESSES: bool = false;
    /// Stores the `LANES` lanes, each truncated to 32 bits, at `out`. The default stores 32-bit lanes as
    /// they are, and others through memory.
    ///
    /// # Safety
    /// `out` is valid for writing `LANES` u32s (no alignment needed).
    #[inline(always)]
    unsafe fn store_positions(self, out: *mut u32) {
        if size_of::<Self>() == 4 * Self::LANES {
            // SAFETY: the register is LANES u32s, which `out` has room for (the caller's precondition).
            unsafe { self.store(out) }
        } else {
            for (i, &lane) in self.lanes().iter().enumerate().take(Self::LANES) {
                // SAFETY: i < LANES (the caller's precondition).
                unsafe { out.add(i).write_unaligned(lane as u32) };
            }
        }
    }
    /// The lanes whose bit is set in `bits` first, in lane order; the others unspecified. The default is
    /// [`partition_lanes`](Self::partition_lanes).
    #[inline(always)]
    fn compress(self, bits: u64) -> Self {
        self.partition_lanes(bits)
    }
    /// Whether the K-th smallest lane of two vectors is found by counting every lane's rank rather than
    /// by the sorting network (see `network::kth_by_ranks`): set for AVX2's eight 32-bit lanes.
    const RANKS_PAIRS: bool = false;
    /// The numbers of the lanes set in `bits` plus `vector · LANES` (`vector` below 4: a block's vector),
    /// first, in order: [`iota`](Self::iota) compressed and moved to the block's vector. AVX2's compress
    /// tables hold exactly these, so there it is a table's entry, no permute and no add.
    #[inline(always)]
    fn compress_iota(bits: u64, vector: usize) -> Self {
        Self::iota()
            .compress(bits)
            .add(Self::splat((vector * Self::LANES) as u64))
    }
    /// Lane-wise wrapping `self + other`. The default goes through memory (only engines that
    /// [compress](Self::COMPRESSES) call it, and override it).
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        let (a, b) = (self.lanes(), other.lanes());
        Self::from_lanes(core::array::from_fn(|i| a[i].wrapping_add(b[i])))
    }
    /// The vector whose lane `i` is `lanes[i]` (truncated to the lane width): [`lanes`](Self::lanes)
    /// undone, through memory.
    #[inline(always)]
    fn from_lanes(lanes: [u64; MAX_LANES]) -> Self {
        if size_of::<Self>() == 8 * Self::LANES {
            // SAFETY: `lanes` holds MAX_LANES >= LANES u64s, the lane width.
            unsafe { Self::load(lanes.as_ptr()) }
        } else {
            let narrow = lanes.map(|lane| lane as u32);
            // SAFETY: `narrow` holds MAX_LANES >= LANES u32s, the lane width.
            unsafe { Self::load(narrow.as_ptr()) }
        }
    }

    // What the partition of `arch::generic::partition` needs.

    /// The lanes whose bit is set in `bits` first, then the others, each group in lane order (bits from
    /// `LANES` on are ignored). The default goes through memory: the lanes, written in their new order
    /// into a stack array, loaded back (the partition runs on 64-bit lanes; any width is right here).
    #[inline(always)]
    fn partition_lanes(self, bits: u64) -> Self {
        let lanes = self.lanes();
        let bits = bits & (u64::MAX >> (64 - Self::LANES));
        let mut out = [0u64; MAX_LANES];
        let (mut set, mut clear) = (0, bits.count_ones() as usize);
        for (i, &lane) in lanes.iter().enumerate().take(Self::LANES) {
            let bit = (bits >> i & 1) as usize;
            if let Some(slot) = out.get_mut(if bit == 1 { set } else { clear }) {
                *slot = lane;
            }
            set += bit;
            clear += 1 - bit;
        }
        Self::from_lanes(out)
    }
}

/// Asks the CPU to bring the cache line at `ptr` closer (a hint: no effect on what any load returns,
/// and no fault for any address). A no-op where the ISA's hint is not available on stable Rust.
#[inline(always)]
pub(crate) fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault; SSE is in x86-64's baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// [`prefetch`] of every 64-byte cache line that `elements` lie on.
#[inline(always)]
pub(crate) fn prefetch_all<T>(elements: &[T]) {
    let (start, bytes) = (elements.as_ptr().cast::<u8>(), size_of_val(elements));
    for offset in (0..bytes).step_by(64) {
        prefetch(start.wrapping_add(offset));
    }
    // The last byte's line, which the steps miss where the elements do not start a line.
    if let Some(last) = bytes.checked_sub(1) {
        prefetch(start.wrapping_add(last));
    }
}
