//! The selection engines. Each takes one validated sequence and reports the positions of its first K
//! elements in order; `topk.rs` does everything around that (validation, walking sequences, writing).

pub(crate) mod scalar;
