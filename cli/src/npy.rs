//! Reading and writing .npy files: `npyz` parses the header and converts the elements; this module
//! checks everything a hostile file could get wrong before `npyz` sees it (the shape's product, the
//! header and data lengths), so that a bad file is an error message, never a panic or a huge allocation.

use std::io::Write;

use npyz::{AutoSerialize, Deserialize, Endianness, NpyFile, TypeChar, WriteOptions, WriterBuilder};
use topk_kernels::DataType;

use crate::types::from_npy;

/// A parsed .npy file whose elements are still bytes.
pub(crate) struct Npy {
    pub(crate) dtype: DataType,
    pub(crate) shape: Vec<usize>,
    /// Column-major (`fortran_order: True`) data.
    pub(crate) fortran: bool,
    bytes: Vec<u8>,
}

/// The element count of `shape`, if it and the byte size of its elements fit in `isize` (Rust's
/// allocation limit), counting empty dimensions as 1 so that strides cannot overflow either.
pub(crate) fn checked_elements(shape: &[usize], element_size: usize) -> Option<usize> {
    let mut product = element_size.max(1);
    for &size in shape {
        product = product.checked_mul(size.max(1))?;
    }
    if product > isize::MAX as usize {
        return None;
    }
    Some(if shape.contains(&0) {
        0
    } else {
        product / element_size.max(1)
    })
}

impl Npy {
    /// Parses `bytes` (a whole .npy file).
    pub(crate) fn parse(bytes: Vec<u8>) -> Result<Npy, String> {
        let header_end = precheck(&bytes)?;
        let file = NpyFile::new(&bytes[..]).map_err(|e| {
            // npyz's parse errors quote the header over several lines; the first says what is wrong.
            let text = e.to_string();
            format!(
                "not a valid .npy file: {}",
                text.lines().next().unwrap_or_default().trim()
            )
        })?;
        let npyz::DType::Plain(type_str) = file.dtype() else {
            let descr = file.dtype().descr();
            return Err(format!(
                "unsupported dtype {descr}: structured and sub-array dtypes are not supported"
            ));
        };
        let descr = type_str.to_string();
        let kind = match type_str.type_char() {
            TypeChar::Float => 'f',
            TypeChar::Int => 'i',
            TypeChar::Uint => 'u',
            _ => 'x',
        };
        let size = type_str.num_bytes().unwrap_or(0);
        let Some(dtype) = from_npy(kind, size) else {
            return Err(format!(
                "unsupported dtype {descr}: expected one of <f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8"
            ));
        };
        if type_str.endianness() == Endianness::Big && size > 1 {
            return Err(format!(
                "unsupported dtype {descr}: big-endian data; save it little-endian"
            ));
        }
        if file.header().uses_pickled_array() {
            return Err(format!("unsupported dtype {descr}: pickled objects"));
        }
        let shape = file
            .shape()
            .iter()
            .map(|&s| usize::try_from(s))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| "the shape does not fit this machine's address space".to_string())?;
        if shape.is_empty() || shape.len() > 8 {
            return Err(format!(
                "the input has {} dimensions; 1 to 8 are supported",
                shape.len()
            ));
        }
        let fortran = file.order() == npyz::Order::Fortran;
        let elements = checked_elements(&shape, size).ok_or("the shape's element count overflows")?;
        let data = bytes.len() - header_end;
        if data != elements * size {
            return Err(format!(
                "the file holds {data} data bytes; shape {shape:?} of {descr} needs {}",
                elements * size
            ));
        }
        Ok(Npy {
            dtype,
            shape,
            fortran,
            bytes,
        })
    }

    /// The elements in file order, as `T` (which must be `self.dtype`).
    pub(crate) fn elements<T: Deserialize>(&self) -> Result<Vec<T>, String> {
        let file = NpyFile::new(&self.bytes[..]).map_err(|e| format!("not a valid .npy file: {e}"))?;
        file.into_vec::<T>().map_err(|e| format!("cannot read the data: {e}"))
    }
}

/// Checks the parts of the header that `npyz` trusts: the magic, the header length, and the shape's
/// product (which `npyz` multiplies without overflow checks). Returns where the data starts.
fn precheck(bytes: &[u8]) -> Result<usize, String> {
    let not_npy = || "not a .npy file (no \\x93NUMPY magic)".to_string();
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(not_npy());
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        major => return Err(format!("unsupported .npy format version {major}")),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&end| end <= bytes.len())
        .ok_or("the .npy header is longer than the file")?;
    let header = String::from_utf8_lossy(&bytes[start..end]);
    // The shape is the only tuple of the header dict: `'shape': (2, 3), `. Anything malformed here
    // is left to npyz to report; only a product that overflows is stopped here.
    if let Some(at) = header.find("'shape'") {
        let rest = &header[at..];
        if let (Some(open), Some(close)) = (rest.find('('), rest.find(')'))
            && open < close
        {
            let mut shape = Vec::new();
            for part in rest[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let digits = part.trim_end_matches('L');
                match digits.parse::<u64>().ok().and_then(|s| usize::try_from(s).ok()) {
                    Some(size) => shape.push(size),
                    None if digits.chars().all(|c| c.is_ascii_digit()) => {
                        return Err(format!("dimension {digits} of the shape is too large"));
                    }
                    None => return Err(format!("invalid shape entry {part:?} in the .npy header")),
                }
            }
            if checked_elements(&shape, 1).is_none() {
                return Err(format!("the shape {shape:?} has too many elements"));
            }
        }
    }
    Ok(end)
}

/// A C-order .npy file of `shape` holding `data`, in memory.
pub(crate) fn encode<T: AutoSerialize>(shape: &[usize], data: &[T]) -> Result<Vec<u8>, String> {
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let mut bytes = Vec::new();
    let fail = |e: std::io::Error| format!("cannot encode the output: {e}");
    let mut writer = WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut bytes)
        .begin_nd()
        .map_err(fail)?;
    writer.extend(data.iter()).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(bytes)
}

/// Writes `files` (path, contents) so that either all exist afterwards or none of them does: each goes
/// to a temporary file beside its target first, and the renames happen only after every write worked.
pub(crate) fn write_all_or_none(files: &[(&std::path::Path, &[u8])]) -> Result<(), String> {
    let temporary = |path: &std::path::Path| {
        let mut name = std::ffi::OsString::from(".");
        name.push(path.file_name().unwrap_or_default());
        name.push(format!(".{}.tmp", std::process::id()));
        path.with_file_name(name)
    };
    let temps: Vec<_> = files.iter().map(|(path, _)| temporary(path)).collect();
    let remove_temps = || {
        for temp in &temps {
            let _ = std::fs::remove_file(temp);
        }
    };
    for ((path, contents), temp) in files.iter().zip(&temps) {
        let written = std::fs::File::create(temp).and_then(|mut file| {
            file.write_all(contents)?;
            file.sync_all()
        });
        if let Err(e) = written {
            remove_temps();
            return Err(format!("cannot write {}: {e}", path.display()));
        }
    }
    for (i, ((path, _), temp)) in files.iter().zip(&temps).enumerate() {
        if let Err(e) = std::fs::rename(temp, path) {
            // Undo the renames already done, so that no output is left behind.
            for (done, _) in &files[..i] {
                let _ = std::fs::remove_file(done);
            }
            remove_temps();
            return Err(format!("cannot write {}: {e}", path.display()));
        }
    }
    Ok(())
}
