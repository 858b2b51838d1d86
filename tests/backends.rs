//! Every engine the CPU has, run explicitly against the reference: all twelve value types, data patterns
//! that stress the block filter (random bits with NaN payloads and signed zeros, heavy ties, sorted both
//! ways, all equal, NaN-heavy), row lengths around every lane, unroll and threshold boundary, both
//! directions, K from 1 to n. Values are compared bit for bit, indices exactly. The data and the walks
//! over them are `cases` (tests/cases), which `emulated/` also runs for the AVX-512 engine on CPUs
//! without it.

mod cases;

use cases::{Bits, Check};
use topk_kernels::{Backend, Direction, Error, Request, TopK, View, ViewMut, bf16, f16, naive};

/// Runs the reference and then every engine on each case, and asserts identical outputs.
struct EveryEngine;

impl Check for EveryEngine {
    fn check<T: Bits>(&mut self, data: &[T], rows: usize, transposed: bool, k: usize, direction: Direction) {
        let n = data.len() / rows;
        let (sizes, axis, out) = cases::shapes(n, rows, transposed, k);
        let input = View::contiguous(data, sizes).unwrap();
        let zero = T::from_raw(0);
        let raw = |v: &[T]| v.iter().map(|x| x.raw()).collect::<Vec<_>>();
        let (mut want_v, mut want_i) = (vec![zero; rows * k], vec![0u64; rows * k]);
        naive::topk(Request {
            input,
            axis: axis as isize,
            k,
            direction,
            values: ViewMut::contiguous(&mut want_v, out).unwrap(),
            indices: ViewMut::contiguous(&mut want_i, out).unwrap(),
        })
        .unwrap();
        let want = (want_i, raw(&want_v));
        for backend in Backend::ALL.into_iter().filter(|&b| b != Backend::Naive) {
            let (mut got_v, mut got_i) = (vec![zero; rows * k], vec![u64::MAX; rows * k]);
            let mut plan = TopK::new(Request {
                input,
                axis: axis as isize,
                k,
                direction,
                values: ViewMut::contiguous(&mut got_v, out).unwrap(),
                indices: ViewMut::contiguous(&mut got_i, out).unwrap(),
            })
            .unwrap();
            let mut scratch = vec![0u64; plan.scratch_len()];
            let all = 0..plan.sequences();
            match plan.run_sequences(all, backend, &mut scratch) {
                Ok(()) => {}
                Err(Error::Backend { name }) => {
                    // Unavailable engines must refuse cleanly, and only those.
                    assert!(!backend.is_available(), "{name} is available but refused");
                    continue;
                }
                Err(e) => panic!("{}: {e}", backend.name()),
            }
            assert_eq!(
                (&got_i, &raw(&got_v)),
                (&want.0, &want.1),
                "{} {} n {n} rows {rows} transposed {transposed} k {k} {direction:?}",
                backend.name(),
                T::NAME
            );
        }
    }
}

/// One test per type: `per_type! { walk; name: type, seed; .. }` runs `cases::walk::<type>(seed, ..)`
/// with every engine (`cases::all` runs the same walks with the same seeds, for `emulated/`).
macro_rules! per_type {
    ($walk:ident; $($name:ident: $t:ty, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            cases::$walk::<$t>($seed, &mut EveryEngine);
        }
    )*};
}
per_type! {
    sweep;
    sweep_f32: f32, 1;
    sweep_f64: f64, 2;
    sweep_f16: f16, 3;
    sweep_bf16: bf16, 4;
    sweep_u8: u8, 5;
    sweep_i8: i8, 6;
    sweep_u16: u16, 7;
    sweep_i16: i16, 8;
    sweep_u32: u32, 9;
    sweep_i32: i32, 10;
    sweep_u64: u64, 11;
    sweep_i64: i64, 12;
}
per_type! {
    sides;
    sides_f32: f32, 21;
    sides_f64: f64, 22;
    sides_f16: f16, 23;
    sides_bf16: bf16, 24;
    sides_u8: u8, 25;
    sides_i8: i8, 26;
    sides_u16: u16, 27;
    sides_i16: i16, 28;
    sides_u32: u32, 29;
    sides_i32: i32, 30;
    sides_u64: u64, 31;
    sides_i64: i64, 32;
}
per_type! {
    tiny;
    tiny_f32: f32, 41;
    tiny_f64: f64, 42;
    tiny_f16: f16, 43;
    tiny_bf16: bf16, 44;
    tiny_u8: u8, 45;
    tiny_i8: i8, 46;
    tiny_u16: u16, 47;
    tiny_i16: i16, 48;
    tiny_u32: u32, 49;
    tiny_i32: i32, 50;
    tiny_u64: u64, 51;
    tiny_i64: i64, 52;
}
per_type! {
    long;
    long_rows_f32: f32, 21;
    long_rows_f64: f64, 22;
    long_rows_u8: u8, 23;
    long_rows_i16: i16, 24;
    long_rows_bf16: bf16, 25;
    long_rows_i64: i64, 26;
    // f16 takes its own paths on the x86 engines: its raw bits in 16-bit lanes for the scans, converted
    // to f32 for the bounds.
    long_rows_f16: f16, 27;
}
per_type! {
    chunked;
    chunked_u8: u8, 61;
    chunked_i8: i8, 62;
    chunked_u16: u16, 63;
    chunked_i16: i16, 64;
    chunked_f16: f16, 65;
    chunked_bf16: bf16, 66;
}
per_type! {
    counted;
    counted_u8: u8, 41;
    counted_i8: i8, 42;
    counted_u16: u16, 43;
    counted_i16: i16, 44;
    counted_f16: f16, 45;
    counted_bf16: bf16, 46;
}
per_type! {
    bisected;
    bisected_u8: u8, 51;
    bisected_i8: i8, 52;
    bisected_u16: u16, 53;
    bisected_i16: i16, 54;
    bisected_f16: f16, 55;
    bisected_bf16: bf16, 56;
}

#[test]
#[cfg_attr(miri, ignore = "65536-element rows")]
fn every_f16_bit_pattern() {
    cases::every_f16_bit_pattern(29, &mut EveryEngine);
}

#[test]
fn availability_matches_the_cpu() {
    assert!(Backend::Portable.is_available() && Backend::Scalar.is_available());
    let auto = Backend::Auto.resolve();
    assert!(auto.is_available() && auto != Backend::Auto && auto != Backend::Naive);
    // TOPK_MAX_ISA caps the engines (the test command runs the suite under each cap); without `std`
    // the crate reads no environment.
    let cap = std::env::var("TOPK_MAX_ISA").ok().filter(|_| cfg!(feature = "std"));
    let portable_only = cap.as_deref() == Some("portable");
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    {
        assert_eq!(Backend::Neon.is_available(), !portable_only);
        assert!(!Backend::Avx2.is_available());
        assert_eq!(
            auto,
            if portable_only {
                Backend::Portable
            } else {
                Backend::Neon
            }
        );
    }
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        assert!(!Backend::Neon.is_available());
        // With `std` detected at run time, without it fixed by the compile-time target features.
        let (has_avx2, has_avx512) = if cfg!(feature = "std") {
            (
                std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c"),
                std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw"),
            )
        } else {
            (
                cfg!(all(
                    target_feature = "popcnt",
                    target_feature = "avx2",
                    target_feature = "f16c"
                )),
                cfg!(all(
                    target_feature = "popcnt",
                    target_feature = "avx512f",
                    target_feature = "avx512bw"
                )),
            )
        };
        let avx2 = has_avx2 && !portable_only;
        let avx512 = has_avx512 && !portable_only && cap.as_deref() != Some("avx2");
        assert_eq!(Backend::Avx2.is_available(), avx2);
        assert_eq!(Backend::Avx512.is_available(), avx512);
        let widest = if avx512 {
            Backend::Avx512
        } else if avx2 {
            Backend::Avx2
        } else {
            Backend::Portable
        };
        assert_eq!(auto, widest);
    }
    let _ = portable_only; // other targets, and miri, check neither
    for backend in Backend::ALL {
        assert_eq!(Backend::from_name(backend.name()), Some(backend));
    }
}
