//! The portable backend: the generic algorithms on the `wide` crate's vectors, which use what the build
//! targets has (SSE2 on x86_64, NEON on aarch64, plain arrays, scalar code, on a Cortex-M).

pub(crate) mod portable;
