//! The crate's one error type.

use std::fmt;

use topk_kernels::{Error, Operand};

/// Everything that can go wrong on the GPU path. Nothing in this crate panics on a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuError {
    /// The request itself is wrong: the same errors as the CPU crate, with the same numbers.
    Request(Error),
    /// No adapter (no GPU and no software rasterizer such as lavapipe), or no backend compiled in.
    NoAdapter(String),
    /// The adapter refused the device.
    RequestDevice(String),
    /// The device's limits are below what the kernels need.
    Limits {
        /// Which limit.
        limit: &'static str,
        /// What the kernels need.
        needed: u64,
        /// What the device has.
        available: u64,
    },
    /// A buffer handed to [`TopKGpu::record`](crate::TopKGpu::record) cannot be used as it is.
    Buffer {
        /// The tensor the buffer holds.
        tensor: Operand,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A buffer the request needs is larger than the device can bind (or than 32-bit addressing).
    TooLarge {
        /// Which buffer.
        what: &'static str,
        /// Bytes needed.
        bytes: u64,
        /// Bytes allowed.
        max: u64,
    },
    /// wgpu reported a validation, out-of-memory or internal error.
    Wgpu(String),
    /// Waiting for the device failed (device lost, timeout).
    Poll(String),
    /// Mapping a read-back buffer failed.
    Map(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Request(e) => e.fmt(f),
            GpuError::NoAdapter(why) => write!(f, "no GPU adapter: {why}"),
            GpuError::RequestDevice(why) => write!(f, "the adapter refused a device: {why}"),
            GpuError::Limits {
                limit,
                needed,
                available,
            } => write!(f, "the device's {limit} is {available}; the kernels need {needed}"),
            GpuError::Buffer { tensor, problem } => write!(f, "the {tensor} buffer {problem}"),
            GpuError::TooLarge { what, bytes, max } => {
                write!(f, "the {what} needs {bytes} bytes; the device binds at most {max}")
            }
            GpuError::Wgpu(e) => write!(f, "wgpu error: {e}"),
            GpuError::Poll(e) => write!(f, "waiting for the GPU failed: {e}"),
            GpuError::Map(e) => write!(f, "reading back from the GPU failed: {e}"),
        }
    }
}

impl std::error::Error for GpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GpuError::Request(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for GpuError {
    fn from(e: Error) -> Self {
        GpuError::Request(e)
    }
}
