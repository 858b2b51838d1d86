//! x86_64 engines: each file implements [`Vector`](crate::vector::Vector) on its ISA's registers, and
//! `simd_engine!` makes them an engine behind the ISA's capability token (`cpu.rs`).

pub(crate) mod avx2;
pub(crate) mod avx512;
