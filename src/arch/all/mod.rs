//! The portable backend: the generic algorithms over plain arrays that the compiler vectorises for
//! whatever the build targets (SSE2 on x86_64, NEON on aarch64, scalar code on a Cortex-M).

pub(crate) mod portable;
