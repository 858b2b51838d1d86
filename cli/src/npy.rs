//! Reading and writing .npy files (NumPy's format, versions 1.0 to 3.0) for the 11 value types the
//! format and the library share.
//!
//! The header is a Python dict literal. It is read by a small parser written for it here, not by a
//! general one: a general parser took time doubling with each level of `[` or `{` nesting (a 200-byte
//! file kept it busy for minutes). This one reads every byte once, refuses nesting deeper than
//! [`MAX_DEPTH`] and headers longer than [`MAX_HEADER`], so any header is accepted or refused in time
//! linear in its length. The elements are converted from little-endian bytes here too, after the shape's
//! product and the data length have been checked, so a bad file is an error message, never a panic or a
//! huge allocation.
//!
//! Shared by the `topk` command line, the GPU crate's `topk_gpu` and the `npy` fuzz target (through
//! `#[path]`): it needs only `std` and `topk_kernels`.

use topk_kernels::{DataType, f16};

/// The longest header accepted, in bytes. NumPy writes 128 bytes or less for any array of these
/// dtypes, and its own reader refuses headers above 10,000 bytes unless told otherwise; a header longer
/// than this is refused from its length field, before it is parsed.
pub(crate) const MAX_HEADER: usize = 1 << 20;

/// The deepest nesting of brackets accepted in a header. A header of a supported dtype nests two levels
/// (the dict, the shape's tuple); structured dtypes nest a few more and are refused with their own
/// message, so this only has to be larger than those.
pub(crate) const MAX_DEPTH: usize = 16;

/// A parsed .npy file whose elements are still bytes.
pub(crate) struct Npy {
    pub(crate) dtype: DataType,
    pub(crate) shape: Vec<usize>,
    /// Column-major (`fortran_order: True`) data.
    pub(crate) fortran: bool,
    bytes: Vec<u8>,
    /// Where the data starts in `bytes`.
    data_start: usize,
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

/// The value type of a .npy type code: `kind` is `f`, `i` or `u`, `bytes` the element size.
pub(crate) fn from_npy(kind: u8, bytes: usize) -> Option<DataType> {
    Some(match (kind, bytes) {
        (b'f', 2) => DataType::F16,
        (b'f', 4) => DataType::F32,
        (b'f', 8) => DataType::F64,
        (b'i', 1) => DataType::I8,
        (b'i', 2) => DataType::I16,
        (b'i', 4) => DataType::I32,
        (b'i', 8) => DataType::I64,
        (b'u', 1) => DataType::U8,
        (b'u', 2) => DataType::U16,
        (b'u', 4) => DataType::U32,
        (b'u', 8) => DataType::U64,
        _ => return None,
    })
}

/// The supported type codes, for messages.
const SUPPORTED: &str = "<f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8";

/// An element type a .npy file can hold: its type code and its little-endian bytes.
pub(crate) trait NpyElement: Copy {
    /// The type code NumPy writes for it (`<f4`, `|u1`, ...).
    const DESCR: &'static str;
    /// The library's name for it.
    const DTYPE: DataType;
    /// The value of `bytes` (exactly the type's size), little-endian.
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends the value's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! npy_elements {
    ($($t:ty, $descr:literal, $dtype:ident;)*) => {$(
        impl NpyElement for $t {
            const DESCR: &'static str = $descr;
            const DTYPE: DataType = DataType::$dtype;
            fn from_le(bytes: &[u8]) -> Self {
                let mut array = [0u8; size_of::<$t>()];
                array.copy_from_slice(bytes);
                <$t>::from_le_bytes(array)
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
npy_elements! {
    f32, "<f4", F32;
    f64, "<f8", F64;
    i8, "|i1", I8;
    i16, "<i2", I16;
    i32, "<i4", I32;
    i64, "<i8", I64;
    u8, "|u1", U8;
    u16, "<u2", U16;
    u32, "<u4", U32;
    u64, "<u8", U64;
}

impl NpyElement for f16 {
    const DESCR: &'static str = "<f2";
    const DTYPE: DataType = DataType::F16;
    fn from_le(bytes: &[u8]) -> Self {
        f16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]]))
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
}

impl Npy {
    /// Parses `bytes` (a whole .npy file).
    pub(crate) fn parse(bytes: Vec<u8>) -> Result<Npy, String> {
        let (header, data_start) = header_bytes(&bytes)?;
        let header = Header::parse(header)?;
        let size = header.dtype.size();
        let elements = checked_elements(&header.shape, size)
            .ok_or_else(|| format!("the shape {:?} has too many elements", header.shape))?;
        let data = bytes.len() - data_start;
        if data != elements * size {
            return Err(format!(
                "the file holds {data} data bytes; shape {:?} of {} needs {}",
                header.shape,
                header.descr,
                elements * size
            ));
        }
        Ok(Npy {
            dtype: header.dtype,
            shape: header.shape,
            fortran: header.fortran,
            bytes,
            data_start,
        })
    }

    /// The elements in file order, as `T` (which must be `self.dtype`).
    pub(crate) fn elements<T: NpyElement>(&self) -> Result<Vec<T>, String> {
        if T::DTYPE != self.dtype {
            return Err(format!("the data is {}, not {}", self.dtype.name(), T::DTYPE.name()));
        }
        let data = &self.bytes[self.data_start..];
        let mut out = Vec::new();
        out.try_reserve_exact(data.len() / size_of::<T>())
            .map_err(|_| format!("cannot allocate {} bytes for the data", data.len()))?;
        out.extend(data.chunks_exact(size_of::<T>()).map(T::from_le));
        Ok(out)
    }
}

/// The header's text and where the data starts: the magic, the version and the header length checked.
fn header_bytes(bytes: &[u8]) -> Result<(&[u8], usize), String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".to_string());
    }
    let (header_len, start) = match (bytes[6], bytes[7]) {
        (1, 0) => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10usize),
        (2 | 3, 0) if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        (2 | 3, 0) => return Err("the .npy header is longer than the file".to_string()),
        (major, minor) => return Err(format!("unsupported .npy format version {major}.{minor}")),
    };
    if header_len > MAX_HEADER {
        return Err(format!(
            "the .npy header is {header_len} bytes; headers over {MAX_HEADER} bytes are refused"
        ));
    }
    let end = start
        .checked_add(header_len)
        .filter(|&end| end <= bytes.len())
        .ok_or("the .npy header is longer than the file")?;
    Ok((&bytes[start..end], end))
}

/// What the header says.
struct Header {
    /// The type code as written, for messages.
    descr: String,
    dtype: DataType,
    fortran: bool,
    shape: Vec<usize>,
}

impl Header {
    fn parse(text: &[u8]) -> Result<Header, String> {
        let mut parser = Parser { text, at: 0 };
        let value = parser.value(0)?;
        parser.skip_space();
        if parser.at != text.len() {
            return Err(parser.error("text after the header's dict"));
        }
        let Value::Dict(entries) = value else {
            return Err("the .npy header is not a dict".to_string());
        };
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        for (key, value) in entries {
            let slot = match key.as_str() {
                "descr" => &mut descr,
                "fortran_order" => &mut fortran,
                "shape" => &mut shape,
                _ => return Err(format!("unexpected key {key:?} in the .npy header")),
            };
            if slot.replace(value).is_some() {
                return Err(format!("the key {key:?} appears twice in the .npy header"));
            }
        }
        let missing = |key: &str| format!("the .npy header has no {key:?}");
        let (descr, dtype) = dtype(descr.ok_or_else(|| missing("descr"))?)?;
        let fortran = match fortran.ok_or_else(|| missing("fortran_order"))? {
            Value::Bool(b) => b,
            _ => return Err("'fortran_order' in the .npy header is not True or False".to_string()),
        };
        let Value::Seq { items, tuple: true } = shape.ok_or_else(|| missing("shape"))? else {
            return Err("'shape' in the .npy header is not a tuple".to_string());
        };
        if items.is_empty() || items.len() > 8 {
            return Err(format!(
                "the input has {} dimensions; 1 to 8 are supported",
                items.len()
            ));
        }
        let shape = items
            .into_iter()
            .map(|item| match item {
                Value::Int(size) => {
                    usize::try_from(size).map_err(|_| format!("dimension {size} of the shape is negative or too large"))
                }
                _ => Err("the shape holds something other than integers".to_string()),
            })
            .collect::<Result<Vec<usize>, String>>()?;
        Ok(Header {
            descr,
            dtype,
            fortran,
            shape,
        })
    }
}

/// The type code and the value type of the header's `descr`, or why it is not supported.
fn dtype(descr: Value) -> Result<(String, DataType), String> {
    let code = match descr {
        Value::Str(code) => code,
        Value::Seq { .. } => {
            return Err("unsupported dtype: structured and sub-array dtypes are not supported".to_string());
        }
        _ => return Err("'descr' in the .npy header is not a type code".to_string()),
    };
    let unsupported = |why: &str| format!("unsupported dtype {code}: {why}");
    let bytes = code.as_bytes();
    let (order, rest) = match bytes.first() {
        Some(&c @ (b'<' | b'>' | b'|' | b'=')) => (Some(c), &bytes[1..]),
        _ => (None, bytes),
    };
    let size = match rest {
        [_, digits @ ..] if !digits.is_empty() && digits.len() <= 2 && digits.iter().all(u8::is_ascii_digit) => {
            digits.iter().fold(0usize, |a, &d| a * 10 + usize::from(d - b'0'))
        }
        _ => 0,
    };
    let Some(dtype) = rest.first().and_then(|&kind| from_npy(kind, size)) else {
        return Err(unsupported(&format!("expected one of {SUPPORTED}")));
    };
    match order {
        _ if size == 1 => {}
        Some(b'<') => {}
        Some(b'>') => return Err(unsupported("big-endian data; save it little-endian")),
        _ => return Err(unsupported("no byte order; save it little-endian ('<')")),
    }
    Ok((code, dtype))
}

/// A Python literal, as far as .npy headers use them.
enum Value {
    Dict(Vec<(String, Value)>),
    Seq { items: Vec<Value>, tuple: bool },
    Str(String),
    Int(i128),
    Bool(bool),
    None,
}

/// A recursive-descent parser over the header's bytes that never goes back: each byte is looked at a
/// bounded number of times, and the recursion is at most [`MAX_DEPTH`] deep.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("invalid .npy header: {what} at byte {}", self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace() || c == 0x0b) {
            self.at += 1;
        }
    }

    /// Skips spaces, then consumes `c` if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        let found = self.peek() == Some(c);
        self.at += usize::from(found);
        found
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_space();
        let Some(c) = self.peek() else {
            return Err(self.error("unexpected end"));
        };
        if matches!(c, b'{' | b'[' | b'(') {
            if depth >= MAX_DEPTH {
                return Err(self.error(&format!("brackets nested more than {MAX_DEPTH} deep")));
            }
            self.at += 1;
            return match c {
                b'{' => self.dict(depth + 1),
                b'[' => self
                    .seq(b']', depth + 1)
                    .map(|(items, _)| Value::Seq { items, tuple: false }),
                _ => self.parenthesised(depth + 1),
            };
        }
        match c {
            b'\'' | b'"' => self.string().map(Value::Str),
            b'u' | b'U' if matches!(self.text.get(self.at + 1), Some(b'\'' | b'"')) => {
                self.at += 1;
                self.string().map(Value::Str)
            }
            b'0'..=b'9' | b'-' | b'+' => self.int().map(Value::Int),
            _ => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
                    self.at += 1;
                }
                match &self.text[start..self.at] {
                    b"True" => Ok(Value::Bool(true)),
                    b"False" => Ok(Value::Bool(false)),
                    b"None" => Ok(Value::None),
                    _ => {
                        self.at = start;
                        Err(self.error("unexpected character"))
                    }
                }
            }
        }
    }

    /// The entries of a dict whose `{` has been consumed.
    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        let mut entries = Vec::new();
        loop {
            if self.eat(b'}') {
                return Ok(Value::Dict(entries));
            }
            let Value::Str(key) = self.value(depth)? else {
                return Err(self.error("a dict key that is not a string"));
            };
            if !self.eat(b':') {
                return Err(self.error("expected ':'"));
            }
            entries.push((key, self.value(depth)?));
            if !self.eat(b',') {
                if self.eat(b'}') {
                    return Ok(Value::Dict(entries));
                }
                return Err(self.error("expected ',' or '}'"));
            }
        }
    }

    /// The items up to `close` (whose opening bracket has been consumed), and whether a comma was seen.
    fn seq(&mut self, close: u8, depth: usize) -> Result<(Vec<Value>, bool), String> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            if self.eat(close) {
                return Ok((items, comma));
            }
            items.push(self.value(depth)?);
            if self.eat(b',') {
                comma = true;
            } else if self.eat(close) {
                return Ok((items, comma));
            } else {
                return Err(self.error(&format!("expected ',' or '{}'", close as char)));
            }
        }
    }

    /// `()` and `(a,)` are tuples; `(a)` is `a`.
    fn parenthesised(&mut self, depth: usize) -> Result<Value, String> {
        let (mut items, comma) = self.seq(b')', depth)?;
        Ok(match items.pop() {
            Some(only) if items.is_empty() && !comma => only,
            Some(last) => {
                items.push(last);
                Value::Seq { items, tuple: true }
            }
            None => Value::Seq { items, tuple: true },
        })
    }

    /// A quoted string (escapes kept as Python keeps unknown ones: backslash and character).
    fn string(&mut self) -> Result<String, String> {
        let quote = self.text[self.at];
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => return Err(self.error("an unterminated string")),
                Some(c) if c == quote => {
                    self.at += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    let Some(&next) = self.text.get(self.at + 1) else {
                        return Err(self.error("an unterminated string"));
                    };
                    if !matches!(next, b'\\' | b'\'' | b'"') {
                        out.push(b'\\');
                    }
                    out.push(next);
                    self.at += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// A decimal integer: optional sign, digits with single `_` between them, an optional Python 2 `L`.
    fn int(&mut self) -> Result<i128, String> {
        let negative = match self.peek() {
            Some(b'-') => true,
            Some(b'+') => false,
            _ => {
                return self.digits();
            }
        };
        self.at += 1;
        self.skip_space();
        let magnitude = self.digits()?;
        Ok(if negative { -magnitude } else { magnitude })
    }

    fn digits(&mut self) -> Result<i128, String> {
        let start = self.at;
        let mut value: i128 = 0;
        let mut last_was_digit = false;
        while let Some(c) = self.peek() {
            match c {
                b'0'..=b'9' => {
                    value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(i128::from(c - b'0')))
                        .ok_or_else(|| self.error("an integer too large"))?;
                    last_was_digit = true;
                }
                b'_' if last_was_digit => last_was_digit = false,
                _ => break,
            }
            self.at += 1;
        }
        if !last_was_digit {
            self.at = start;
            return Err(self.error("expected an integer"));
        }
        if matches!(self.peek(), Some(b'L' | b'l')) {
            self.at += 1;
        }
        if self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.') {
            return Err(self.error("expected an integer"));
        }
        Ok(value)
    }
}

/// A C-order .npy file (version 1.0) of `shape` holding `data`, in memory.
pub(crate) fn encode<T: NpyElement>(shape: &[usize], data: &[T]) -> Result<Vec<u8>, String> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {tuple}, }}",
        T::DESCR
    );
    // NumPy pads the header with spaces and a newline so that the data starts at a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.extend(std::iter::repeat_n(' ', unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let header_len = u16::try_from(header.len()).map_err(|_| "the output's header is too long".to_string())?;
    let mut bytes = Vec::new();
    let total = data
        .len()
        .checked_mul(size_of::<T>())
        .and_then(|d| d.checked_add(10 + header.len()))
        .ok_or("the output is too large")?;
    bytes
        .try_reserve_exact(total)
        .map_err(|_| format!("cannot allocate {total} bytes for an output"))?;
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&header_len.to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for &x in data {
        x.put_le(&mut bytes);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &[u8], data: &[u8]) -> Vec<u8> {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header);
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn numpy_headers_parse() {
        for (header, shape, fortran, dtype) in [
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                vec![2, 3],
                false,
                DataType::F32,
            ),
            (
                "{'descr': '|u1', 'fortran_order': True, 'shape': (6,), }\n",
                vec![6],
                true,
                DataType::U8,
            ),
            (
                "{\"shape\": (1L, 6L), \"descr\": \"<i2\", \"fortran_order\": False}",
                vec![1, 6],
                false,
                DataType::I16,
            ),
            (
                "{'descr':'<f2','fortran_order':False,'shape':(3,2)}",
                vec![3, 2],
                false,
                DataType::F16,
            ),
            (
                "{'descr': '<u8', 'fortran_order': False, 'shape': ((6),), }",
                vec![6],
                false,
                DataType::U64,
            ),
        ] {
            let size = dtype.size();
            let bytes = file(header.as_bytes(), &vec![0u8; 6 * size]);
            let npy = Npy::parse(bytes).unwrap_or_else(|e| panic!("{header}: {e}"));
            assert_eq!((npy.shape, npy.fortran, npy.dtype), (shape, fortran, dtype), "{header}");
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        for (header, message) in [
            ("{'descr': '<f4', 'fortran_order': False}", "no \"shape\""),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }",
                "not a tuple",
            ),
            ("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "True or False"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "negative"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                "0 dimensions",
            ),
            (
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                "big-endian",
            ),
            (
                "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                "unsupported dtype |b1",
            ),
            (
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                "structured",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                "unexpected key",
            ),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                "twice",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x",
                "text after",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }",
                "expected an integer",
            ),
            (
                "{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }",
                "expected ','",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999999999999999999,)}",
                "too large",
            ),
        ] {
            let error = Npy::parse(file(header.as_bytes(), &[0; 8])).err().unwrap_or_default();
            assert!(error.contains(message), "{header}: {error}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_in_linear_time() {
        for open in ["[", "{'a':", "(", "(1,"] {
            let depth = 30_000;
            let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': ".to_string();
            header.push_str(&open.repeat(depth));
            let start = std::time::Instant::now();
            let error = Npy::parse(file(header.as_bytes(), &[0; 4])).err().unwrap_or_default();
            assert!(error.contains("nested more than"), "{open}: {error}");
            assert!(start.elapsed().as_secs_f64() < 1.0, "{open}: {:?}", start.elapsed());
        }
    }

    #[test]
    fn encode_round_trips() {
        let data = [1.5f32, -0.0, f32::NAN, 7.0, 8.0, 9.0];
        for shape in [vec![6], vec![2, 3], vec![1, 1, 1, 1, 1, 1, 2, 3], vec![0, 4]] {
            let count = shape.iter().product::<usize>();
            let bytes = encode(&shape, &data[..count]).unwrap();
            let header_end = 10 + usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
            assert_eq!(header_end % 64, 0);
            let npy = Npy::parse(bytes).unwrap();
            assert_eq!(
                (npy.shape.clone(), npy.fortran, npy.dtype),
                (shape, false, DataType::F32)
            );
            let back: Vec<f32> = npy.elements().unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&back), bits(&data[..count]));
        }
    }
}
