//! Index output types: `u32`, `u64` (DirectML) and `i32`, `i64` (ONNX, PyTorch).

use crate::types::data_type::IndexType;

mod sealed {
    pub trait Sealed {}
}

/// A type the position of a selected element is written as.
pub trait Index: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The type's name at run time.
    const INDEX_TYPE: IndexType;
    /// The largest position this type holds.
    const MAX_POSITION: u64 = Self::INDEX_TYPE.max_position();
    /// A short lowercase name: `u32`, `i64`, ... (its `INDEX_TYPE`'s name).
    const NAME: &'static str = Self::INDEX_TYPE.name();
    /// The position as this type; callers guarantee `pos <= MAX_POSITION` (checked in the plan).
    fn from_position(pos: usize) -> Self;
}

macro_rules! indices {
    ($($t:ident: $x:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Index for $t {
            const INDEX_TYPE: IndexType = IndexType::$x;
            #[inline(always)]
            fn from_position(pos: usize) -> $t {
                debug_assert!(pos as u64 <= Self::MAX_POSITION, "position {pos} overflows {}", Self::NAME);
                pos as $t
            }
        }
    )*};
}
indices!(u32: U32, u64: U64, i32: I32, i64: I64);
