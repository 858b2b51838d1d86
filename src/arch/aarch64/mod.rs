//! aarch64 engines.

pub(crate) mod neon;
