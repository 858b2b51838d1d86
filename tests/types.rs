//! The value and index types named at run time agree with the Rust types.

use topk_kernels::{DataType, Element, Index, IndexType, with_data_type, with_index_type};

/// The last segment of the Rust type's path: `f32`, `bf16` (`half::bfloat::bf16`), ...
fn short_name<T>() -> &'static str {
    core::any::type_name::<T>().rsplit("::").next().unwrap_or_default()
}

/// The macros and the traits map each type name and each type to the other, and the names, sizes
/// and largest positions are the Rust types'.
#[test]
fn run_time_types_agree_with_their_types() {
    for d in DataType::ALL {
        with_data_type!(d, T => {
            assert_eq!(T::DATA_TYPE, d);
            assert_eq!(d.name(), short_name::<T>());
            assert_eq!(d.size(), size_of::<T>());
        });
        assert_eq!(DataType::from_name(d.name()), Some(d));
    }
    for x in IndexType::ALL {
        with_index_type!(x, I => {
            assert_eq!(I::INDEX_TYPE, x);
            assert_eq!(x.name(), short_name::<I>());
            assert_eq!(x.size(), size_of::<I>());
            #[allow(clippy::unnecessary_cast)] // u64 is one of the four
            let max = <I>::MAX as u64;
            assert_eq!(x.max_position(), max);
        });
        assert_eq!(IndexType::from_name(x.name()), Some(x));
    }
    assert_eq!(DataType::from_name("f8"), None);
    assert_eq!(IndexType::from_name("u16"), None);
}
