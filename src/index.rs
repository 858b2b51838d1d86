//! Index output types: `u32`, `u64` (DirectML) and `i32`, `i64` (ONNX, PyTorch).

mod sealed {
    pub trait Sealed {}
}

/// A type the position of a selected element is written as.
pub trait Index: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The largest position this type holds.
    const MAX_POSITION: u64;
    /// A short lowercase name: `u32`, `i64`, ...
    const NAME: &'static str;
    /// The position as this type; callers guarantee `pos <= MAX_POSITION` (checked in the plan).
    fn from_position(pos: usize) -> Self;
}

macro_rules! indices {
    ($($t:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Index for $t {
            const MAX_POSITION: u64 = $t::MAX as u64;
            const NAME: &'static str = stringify!($t);
            #[inline(always)]
            fn from_position(pos: usize) -> $t {
                debug_assert!(pos as u64 <= Self::MAX_POSITION, "position {pos} overflows {}", Self::NAME);
                pos as $t
            }
        }
    )*};
}
indices!(u32, u64, i32, i64);
