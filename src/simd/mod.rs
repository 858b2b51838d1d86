//! Layer 2, vectors: the [`Vector`](vector::Vector) vocabulary every kernel is written in, its
//! implementation for each instruction set, and which of them this CPU has ([`cpu`]).

pub(crate) mod cpu;
pub(crate) mod portable;
pub(crate) mod vector;

#[cfg(simd_x86)]
pub(crate) mod avx2;
#[cfg(simd_x86)]
pub(crate) mod avx512;
#[cfg(simd_arm)]
pub(crate) mod neon;
