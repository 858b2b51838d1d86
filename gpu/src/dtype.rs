//! The value and index types as the shader sees them.

use topk_kernels::{Element, Index};

/// A value type as the shader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
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

impl Dtype {
    /// Every value type.
    pub const ALL: [Dtype; 12] = [
        Dtype::F32,
        Dtype::F64,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
    ];

    /// The lowercase name (the CPU crate's `Element::NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The `Dtype` of an [`Element`].
    pub fn of<T: Element>() -> Option<Dtype> {
        Dtype::from_name(T::NAME)
    }

    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
        }
    }

    /// (kind, bits of +inf in the high word): kind 0 unsigned, 1 signed, 2 float.
    pub(crate) fn kind(self) -> (u32, u32) {
        match self {
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => (0, 0),
            Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64 => (1, 0),
            Dtype::F16 => (2, 0x7C00),
            Dtype::Bf16 => (2, 0x7F80),
            Dtype::F32 => (2, 0x7F80_0000),
            Dtype::F64 => (2, 0x7FF0_0000),
        }
    }
}

/// An index type as the shader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
}

impl IndexType {
    /// Every index type.
    pub const ALL: [IndexType; 4] = [IndexType::U32, IndexType::U64, IndexType::I32, IndexType::I64];

    /// The lowercase name (the CPU crate's `Index::NAME`).
    pub fn name(self) -> &'static str {
        match self {
            IndexType::U32 => "u32",
            IndexType::U64 => "u64",
            IndexType::I32 => "i32",
            IndexType::I64 => "i64",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<IndexType> {
        IndexType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The `IndexType` of an [`Index`].
    pub fn of<I: Index>() -> Option<IndexType> {
        IndexType::from_name(I::NAME)
    }

    /// Bytes per index.
    pub fn bytes(self) -> u32 {
        match self {
            IndexType::U32 | IndexType::I32 => 4,
            IndexType::U64 | IndexType::I64 => 8,
        }
    }

    /// The largest position the type holds.
    pub fn max_position(self) -> u64 {
        match self {
            IndexType::U32 => u32::MAX.into(),
            IndexType::U64 => u64::MAX,
            IndexType::I32 => i32::MAX as u64,
            IndexType::I64 => i64::MAX as u64,
        }
    }
}
