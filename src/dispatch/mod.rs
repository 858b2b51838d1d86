//! Layer 4, strategy and dispatch: which engine and which kernel a request gets, and the one way in to
//! the kernels on an engine ([`isa::Kernel`]).
//!
//! - [`engine`]: [`Backend`](engine::Backend), the caller's choice by name, resolved on this CPU into an
//!   [`Engine`](engine::Engine) (a SIMD one holds the token that proves the CPU has its instructions);
//! - [`isa`]: what makes each instruction set's vectors an engine (its `#[target_feature]` entry);
//! - [`select`]: the entries the walk and the accumulator select through, erasing the value type once;
//! - [`strategy`]: which algorithm a request gets.

pub(crate) mod engine;
pub(crate) mod isa;
pub(crate) mod select;
pub(crate) mod strategy;

#[cfg(test)]
mod tests;
