//! The value and index types named at run time, as a runtime holds them before it knows the Rust type,
//! and the macros that turn the name back into the type ([`with_data_type!`](crate::with_data_type),
//! [`with_index_type!`](crate::with_index_type)).

/// A value type named at run time: DirectML's tensor data types, each one [`Element`](crate::Element)
/// (whose `DATA_TYPE` it is). [`with_data_type!`](crate::with_data_type) runs generic code on the type
/// it names.
///
/// ```
/// use topk_kernels::{DataType, Element, with_data_type};
/// let dtype = DataType::from_name("bf16").unwrap();
/// assert_eq!(dtype, <topk_kernels::bf16 as Element>::DATA_TYPE);
/// assert_eq!(with_data_type!(dtype, T => size_of::<T>()), dtype.size());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `half::f16`.
    F16,
    /// `half::bf16`.
    Bf16,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
}

impl DataType {
    /// Every value type: floats, then signed, then unsigned integers, each by width.
    pub const ALL: [DataType; 12] = [
        DataType::F32,
        DataType::F64,
        DataType::F16,
        DataType::Bf16,
        DataType::I8,
        DataType::I16,
        DataType::I32,
        DataType::I64,
        DataType::U8,
        DataType::U16,
        DataType::U32,
        DataType::U64,
    ];

    /// The lowercase name, its type's [`Element::NAME`](crate::Element::NAME): `f32`, `bf16`, `u8`, ...
    pub const fn name(self) -> &'static str {
        match self {
            DataType::F32 => "f32",
            DataType::F64 => "f64",
            DataType::F16 => "f16",
            DataType::Bf16 => "bf16",
            DataType::I8 => "i8",
            DataType::I16 => "i16",
            DataType::I32 => "i32",
            DataType::I64 => "i64",
            DataType::U8 => "u8",
            DataType::U16 => "u16",
            DataType::U32 => "u32",
            DataType::U64 => "u64",
        }
    }

    /// The type whose [`name`](Self::name) is `name`.
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DataType::I8 | DataType::U8 => 1,
            DataType::F16 | DataType::Bf16 | DataType::I16 | DataType::U16 => 2,
            DataType::F32 | DataType::I32 | DataType::U32 => 4,
            DataType::F64 | DataType::I64 | DataType::U64 => 8,
        }
    }
}

/// An index type named at run time, each one [`Index`](crate::Index) (whose `INDEX_TYPE` it is).
/// [`with_index_type!`](crate::with_index_type) runs generic code on the type it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `u32` (DirectML).
    U32,
    /// `u64` (DirectML).
    U64,
    /// `i32`.
    I32,
    /// `i64` (ONNX, PyTorch).
    I64,
}

impl IndexType {
    /// Every index type.
    pub const ALL: [IndexType; 4] = [IndexType::U32, IndexType::U64, IndexType::I32, IndexType::I64];

    /// The lowercase name, its type's [`Index::NAME`](crate::Index::NAME).
    pub const fn name(self) -> &'static str {
        match self {
            IndexType::U32 => "u32",
            IndexType::U64 => "u64",
            IndexType::I32 => "i32",
            IndexType::I64 => "i64",
        }
    }

    /// The type whose [`name`](Self::name) is `name`.
    pub fn from_name(name: &str) -> Option<IndexType> {
        IndexType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per index.
    pub const fn size(self) -> usize {
        match self {
            IndexType::U32 | IndexType::I32 => 4,
            IndexType::U64 | IndexType::I64 => 8,
        }
    }

    /// The largest position it holds, its type's [`Index::MAX_POSITION`](crate::Index::MAX_POSITION).
    pub const fn max_position(self) -> u64 {
        match self {
            IndexType::U32 => u32::MAX as u64,
            IndexType::U64 => u64::MAX,
            IndexType::I32 => i32::MAX as u64,
            IndexType::I64 => i64::MAX as u64,
        }
    }
}

/// Evaluates `$body` with `$T` a type alias for the Rust type of the [`DataType`] `$data_type`: generic
/// code instantiated for each of the twelve types, chosen at run time.
///
/// ```
/// use topk_kernels::{DataType, Element, with_data_type};
/// let names: Vec<&str> = DataType::ALL.iter().map(|&d| with_data_type!(d, T => <T as Element>::NAME)).collect();
/// assert_eq!(names[..4], ["f32", "f64", "f16", "bf16"]);
/// ```
#[macro_export]
macro_rules! with_data_type {
    ($data_type:expr, $T:ident => $body:expr) => {
        match $data_type {
            $crate::DataType::F32 => $crate::with_data_type!(@ $T = f32, $body),
            $crate::DataType::F64 => $crate::with_data_type!(@ $T = f64, $body),
            $crate::DataType::F16 => $crate::with_data_type!(@ $T = $crate::f16, $body),
            $crate::DataType::Bf16 => $crate::with_data_type!(@ $T = $crate::bf16, $body),
            $crate::DataType::I8 => $crate::with_data_type!(@ $T = i8, $body),
            $crate::DataType::I16 => $crate::with_data_type!(@ $T = i16, $body),
            $crate::DataType::I32 => $crate::with_data_type!(@ $T = i32, $body),
            $crate::DataType::I64 => $crate::with_data_type!(@ $T = i64, $body),
            $crate::DataType::U8 => $crate::with_data_type!(@ $T = u8, $body),
            $crate::DataType::U16 => $crate::with_data_type!(@ $T = u16, $body),
            $crate::DataType::U32 => $crate::with_data_type!(@ $T = u32, $body),
            $crate::DataType::U64 => $crate::with_data_type!(@ $T = u64, $body),
        }
    };
    (@ $T:ident = $t:ty, $body:expr) => {{
        #[allow(dead_code)]
        type $T = $t;
        $body
    }};
}

/// Evaluates `$body` with `$I` a type alias for the Rust type of the [`IndexType`] `$index_type`.
///
/// ```
/// use topk_kernels::{Index, IndexType, with_index_type};
/// assert_eq!(with_index_type!(IndexType::I32, I => <I as Index>::MAX_POSITION), i32::MAX as u64);
/// ```
#[macro_export]
macro_rules! with_index_type {
    ($index_type:expr, $I:ident => $body:expr) => {
        match $index_type {
            $crate::IndexType::U32 => $crate::with_data_type!(@ $I = u32, $body),
            $crate::IndexType::U64 => $crate::with_data_type!(@ $I = u64, $body),
            $crate::IndexType::I32 => $crate::with_data_type!(@ $I = i32, $body),
            $crate::IndexType::I64 => $crate::with_data_type!(@ $I = i64, $body),
        }
    };
}

// The dispatch macros under this module's path too, for the layers above (which name no crate-root
// item; tests/layers.rs).
pub(crate) use {with_data_type, with_index_type};
