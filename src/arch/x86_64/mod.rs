//! x86_64 engines, each a capability token (`new()` checks the CPU) around one `#[target_feature]`
//! function that instantiates the generic algorithms with its vectors.

pub(crate) mod avx2;
pub(crate) mod avx512;
