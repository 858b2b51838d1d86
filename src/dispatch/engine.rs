//! The engine a call runs: [`Backend`], the caller's choice by name; [`Engine`], a backend resolved on
//! this CPU (a SIMD one holds the `simd::cpu` token that proves the CPU has its instructions), which
//! runs a [`Kernel`].

use crate::dispatch::isa::{self, Kernel};
#[cfg(simd)]
use crate::simd::cpu;

/// The engine that selects within each sequence. All give identical results, and all count 8- and 16-bit
/// keys instead of filtering them when K is a large part of the row (docs/DESIGN.md, the strategy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The fastest engine this CPU has for the request's shape. With `std`, the environment variable
    /// `TOPK_MAX_ISA=avx2` or `=portable`, read once, keeps the engines above it out of the choice and
    /// makes them unavailable.
    Auto,
    /// The reference of [`crate::api::naive`]: O(n·K), no scratch.
    Naive,
    /// The threshold filter, one element at a time.
    Scalar,
    /// The block threshold filter on the `wide` crate's vectors (SSE2 or NEON). On targets without
    /// SIMD engines (neither x86_64 nor aarch64), where those vectors are arrays, the scalar engine's
    /// algorithms, which execute fewer instructions there.
    Portable,
    /// The block threshold filter on AVX2 registers (x86_64).
    Avx2,
    /// The block threshold filter on AVX-512F registers (x86_64).
    Avx512,
    /// The block threshold filter on NEON registers (aarch64).
    Neon,
}

impl Backend {
    /// Every backend, in the order of the command line's `--backend`.
    pub const ALL: [Backend; 7] = [
        Backend::Auto,
        Backend::Naive,
        Backend::Scalar,
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ];

    /// The lowercase name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Naive => "naive",
            Backend::Scalar => "scalar",
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// The backend named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Whether this CPU and build can run the backend (`Auto`, `Naive`, `Scalar` and `Portable` always
    /// can). [`TopK::run_sequences`](crate::TopK::run_sequences) answers [`Error::Backend`](crate::Error::Backend)
    /// for one that cannot.
    ///
    /// ```
    /// use topk_kernels::Backend;
    /// assert!(Backend::Portable.is_available());
    /// assert!(!(Backend::Avx2.is_available() && Backend::Neon.is_available()));
    /// ```
    pub fn is_available(self) -> bool {
        match self {
            Backend::Auto | Backend::Naive => true,
            concrete => Engine::new(concrete).is_some(),
        }
    }

    /// The concrete engine `Auto` stands for on this CPU (the widest SIMD it has, else `Portable`);
    /// others stand for themselves.
    pub fn resolve(self) -> Backend {
        match self {
            Backend::Auto => [Backend::Avx512, Backend::Avx2, Backend::Neon]
                .into_iter()
                .find(|b| b.is_available())
                .unwrap_or(Backend::Portable),
            other => other,
        }
    }
}

/// A concrete engine, resolved (and its CPU support checked) once per call.
#[derive(Clone, Copy)]
pub(crate) enum Engine {
    Scalar,
    Portable,
    #[cfg(simd_x86)]
    Avx2(cpu::Avx2),
    #[cfg(simd_x86)]
    Avx512(cpu::Avx512),
    #[cfg(simd_arm)]
    Neon(cpu::Neon),
}

impl Engine {
    /// The engine behind a concrete backend (not `Auto`, not `Naive`), if this CPU and build have it.
    pub(crate) fn new(backend: Backend) -> Option<Engine> {
        match backend {
            Backend::Scalar => Some(Engine::Scalar),
            Backend::Portable => Some(Engine::Portable),
            #[cfg(simd_x86)]
            Backend::Avx2 => cpu::Avx2::new().map(Engine::Avx2),
            #[cfg(simd_x86)]
            Backend::Avx512 => cpu::Avx512::new().map(Engine::Avx512),
            #[cfg(simd_arm)]
            Backend::Neon => cpu::Neon::new().map(Engine::Neon),
            _ => None,
        }
    }

    /// The widest engine this CPU has (what `Backend::Auto` stands for).
    pub(crate) fn widest() -> Engine {
        Engine::new(Backend::Auto.resolve()).unwrap_or(Engine::Portable)
    }

    /// Runs `kernel` on this engine's vectors (the scalar engine's: the portable ones, which its
    /// algorithms do not use).
    #[inline(always)]
    pub(crate) fn run<K: Kernel>(self, kernel: K) -> K::Output {
        match self {
            Engine::Scalar | Engine::Portable => isa::enter_portable(kernel),
            #[cfg(simd_x86)]
            Engine::Avx2(token) => token.run(kernel),
            #[cfg(simd_x86)]
            Engine::Avx512(token) => token.run(kernel),
            #[cfg(simd_arm)]
            Engine::Neon(token) => token.run(kernel),
        }
    }

    /// Whether this engine's vectors are 512 bits wide (AVX-512's): 16-bit keys are counted from a
    /// larger K there (`kernels::count::suits`).
    pub(crate) fn wide(self) -> bool {
        #[cfg(simd_x86)]
        if let Engine::Avx512(_) = self {
            return true;
        }
        false
    }

    /// Whether this engine reads sequences side by side (every engine with vectors).
    pub(crate) fn has_vectors(self) -> bool {
        !matches!(self, Engine::Scalar)
    }

    /// Whether this is one of the SIMD registers' engines (AVX2, AVX-512, NEON), whose kernels take the
    /// paths the portable lanes leave out.
    #[cfg(test)]
    pub(crate) fn is_simd(self) -> bool {
        !matches!(self, Engine::Scalar | Engine::Portable)
    }
}
