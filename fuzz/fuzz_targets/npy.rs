//! The command line's .npy reader (`cli/src/npy.rs`, shared with `topk_gpu`): any bytes must be an `Ok`
//! or an `Err` within [`TIME_BOUND`], never a panic, a hang or a huge allocation; an accepted file's
//! data must hold exactly its shape's elements, read back bit for bit after `encode` writes them again.
//!
//! The first byte picks how the rest is read: an even byte takes it as a whole file (the seeds' deep
//! nesting and broken headers start here); an odd one builds a file from arbitrary parts (version,
//! type code of all 11 supported dtypes and some others, shape, order, key order, quotes, spacing,
//! nested junk, data length off by a little), so that every dtype's data path is reached at once, and
//! a well-formed header of a supported dtype is known to be accepted.
#![no_main]

use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use topk_kernels::{DataType, f16};

#[allow(dead_code)]
#[path = "../../cli/src/npy.rs"]
mod npy;

use npy::{Npy, NpyElement};

/// The longest a parse may take: every byte of the header is read once, so any input of the sizes
/// libFuzzer makes parses in microseconds; the bound stays far above that for unoptimised builds on a
/// busy machine, and far below what a parser that goes back over nested values takes.
const TIME_BOUND: Duration = Duration::from_secs(1);

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        check(rest.to_vec(), None);
    } else if let Ok(built) = Built::arbitrary_take_rest(Unstructured::new(rest)) {
        let (bytes, expected) = built.file();
        check(bytes, expected);
    }
});

/// Parses `bytes` within the time bound; `expected` is the dtype and shape of a file known to be valid.
fn check(bytes: Vec<u8>, expected: Option<(DataType, Vec<usize>, bool)>) {
    let start = Instant::now();
    let parsed = Npy::parse(bytes.clone());
    let took = start.elapsed();
    assert!(took < TIME_BOUND, "parsing {} bytes took {took:?}", bytes.len());
    match (&parsed, &expected) {
        (Ok(npy), Some((dtype, shape, fortran))) => {
            assert_eq!((npy.dtype, &npy.shape, npy.fortran), (*dtype, shape, *fortran));
        }
        (Err(e), Some(_)) => panic!("a valid file was refused: {e}"),
        (Err(e), None) => assert!(!e.is_empty() && !e.contains('\n'), "{e:?}"),
        (Ok(_), None) => {}
    }
    let Ok(npy) = parsed else {
        return;
    };
    match npy.dtype {
        DataType::F16 => round_trip::<f16>(&npy, &bytes),
        DataType::F32 => round_trip::<f32>(&npy, &bytes),
        DataType::F64 => round_trip::<f64>(&npy, &bytes),
        DataType::I8 => round_trip::<i8>(&npy, &bytes),
        DataType::I16 => round_trip::<i16>(&npy, &bytes),
        DataType::I32 => round_trip::<i32>(&npy, &bytes),
        DataType::I64 => round_trip::<i64>(&npy, &bytes),
        DataType::U8 => round_trip::<u8>(&npy, &bytes),
        DataType::U16 => round_trip::<u16>(&npy, &bytes),
        DataType::U32 => round_trip::<u32>(&npy, &bytes),
        DataType::U64 => round_trip::<u64>(&npy, &bytes),
        DataType::Bf16 => panic!("bf16 has no .npy type code"),
    }
}

/// The elements are the file's last bytes, in order; written again and read back, they are the same.
fn round_trip<T: NpyElement>(npy: &Npy, file: &[u8]) {
    assert!(
        npy.elements::<u8>().is_err() || T::DTYPE == DataType::U8,
        "a wrong type was accepted"
    );
    let elements: Vec<T> = npy.elements().expect("the file's own dtype");
    let count: usize = npy.shape.iter().product();
    assert_eq!(elements.len(), count);
    let data = &file[file.len() - count * size_of::<T>()..];
    let mut bytes = Vec::new();
    for &x in &elements {
        x.put_le(&mut bytes);
    }
    assert_eq!(bytes, data, "the elements are not the data bytes");
    let again = Npy::parse(npy::encode(&npy.shape, &elements).expect("encode")).expect("its own output");
    assert_eq!(
        (again.dtype, &again.shape, again.fortran),
        (npy.dtype, &npy.shape, false)
    );
    let mut back = Vec::new();
    for x in again.elements::<T>().expect("its own dtype") {
        x.put_le(&mut back);
    }
    assert_eq!(back, bytes);
}

/// Type codes: the 11 supported, then some that must be refused.
const CODES: [&str; 20] = [
    "<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", ">f4", "|b1", "<c8", "<U3", "|O",
    "=f4", "<f16", "<M8[ns]", ">i8",
];

/// A file from parts.
#[derive(Arbitrary, Debug)]
struct Built {
    version: u8,
    code: u8,
    shape: Vec<u8>,
    fortran: bool,
    /// Which of the six orders of the three keys.
    key_order: u8,
    double_quotes: bool,
    /// Spaces after each `:` and `,`, and padding after the dict.
    spacing: u8,
    padding: u8,
    trailing_comma: bool,
    /// Python 2's `L` after each dimension.
    long_ints: bool,
    /// An extra entry `'x': ` followed by this many opening brackets of `junk_kind` (and as many
    /// closing ones when `junk_closed`): always refused, nested deep or not.
    junk_depth: Option<u16>,
    junk_kind: u8,
    junk_closed: bool,
    /// Added to or taken from the data length.
    data_delta: i8,
    data: Vec<u8>,
}

impl Built {
    /// The file, and what it must parse as when it is valid.
    fn file(&self) -> (Vec<u8>, Option<(DataType, Vec<usize>, bool)>) {
        let code = CODES[usize::from(self.code) % CODES.len()];
        // At most 5^4 * 2^5 elements, so that an execution stays short.
        let shape: Vec<usize> = self
            .shape
            .iter()
            .take(9)
            .enumerate()
            .map(|(i, &s)| usize::from(s % if i < 4 { 5 } else { 2 }))
            .collect();
        let q = if self.double_quotes { '"' } else { '\'' };
        let space = " ".repeat(usize::from(self.spacing % 3));
        let dims: Vec<String> = shape
            .iter()
            .map(|s| format!("{s}{}", if self.long_ints { "L" } else { "" }))
            .collect();
        let tuple = match dims.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", dims.join(&format!(",{space}"))),
        };
        let order = if self.fortran { "True" } else { "False" };
        let entries = [
            format!("{q}descr{q}:{space}{q}{code}{q}"),
            format!("{q}fortran_order{q}:{space}{order}"),
            format!("{q}shape{q}:{space}{tuple}"),
        ];
        let permutations = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let mut parts: Vec<String> = permutations[usize::from(self.key_order) % 6]
            .iter()
            .map(|&i| entries[i].clone())
            .collect();
        if let Some(depth) = self.junk_depth {
            let (open, close) =
                [("[", "]"), ("{'a':", "}"), ("(", ",)"), ("(1,", ")")][usize::from(self.junk_kind) % 4];
            let depth = usize::from(depth % 2048);
            let closing = if self.junk_closed {
                close.repeat(depth)
            } else {
                String::new()
            };
            parts.push(format!("{q}x{q}:{space}{}0{closing}", open.repeat(depth)));
        }
        let mut header = format!(
            "{{{}{}}}",
            parts.join(&format!(",{space}")),
            if self.trailing_comma { ", " } else { "" }
        );
        header.push_str(&" ".repeat(usize::from(self.padding % 80)));
        header.push('\n');
        let mut bytes = b"\x93NUMPY".to_vec();
        let version = 1 + self.version % 3;
        bytes.extend_from_slice(&[version, 0]);
        if version == 1 {
            bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        bytes.extend_from_slice(header.as_bytes());
        let dtype = npy_dtype(code);
        let size = dtype.map_or(4, DataType::size);
        let count: usize = shape.iter().product();
        let length = (count * size).saturating_add_signed(isize::from(self.data_delta));
        bytes.extend((0..length).map(|i| self.data.get(i % self.data.len().max(1)).copied().unwrap_or(i as u8)));
        let valid =
            dtype.is_some() && (1..=8).contains(&shape.len()) && self.junk_depth.is_none() && self.data_delta == 0;
        (bytes, valid.then(|| (dtype.expect("checked"), shape, self.fortran)))
    }
}

/// The dtype of a supported little-endian (or one-byte) type code.
fn npy_dtype(code: &str) -> Option<DataType> {
    let index = CODES.iter().position(|&c| c == code)?;
    [
        DataType::F16,
        DataType::F32,
        DataType::F64,
        DataType::I8,
        DataType::I16,
        DataType::I32,
        DataType::I64,
        DataType::U8,
        DataType::U16,
        DataType::U32,
        DataType::U64,
    ]
    .get(index)
    .copied()
}
