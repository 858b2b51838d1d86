//! The backend sweep of `tests/backends.rs` (its walks and seeds, `tests/cases`) as a freestanding x86_64
//! program, for the engine this machine's CPU lacks: built with AVX-512 enabled at compile time (what
//! `Backend::Avx512` needs without `std`), it runs every case on that engine and keeps a digest of each
//! output; `run.py` runs it on an emulated CPU that has AVX-512 (Bochs, through bochscpu) and compares
//! the digests with those of the `reference` build, which runs `naive::topk` natively.
//!
//! No C runtime, no system calls on the emulated CPU: `_start` is below, memory is a bump arena in
//! .bss, and the program ends on `hlt` with the address of its [`Report`] in `rax`. The reference build
//! runs under Linux and writes one line per case to stdout instead: `index digest description`.
#![no_std]
#![no_main]

extern crate alloc;

#[path = "../../tests/cases/mod.rs"]
mod cases;

use core::alloc::{GlobalAlloc, Layout};
use core::arch::{asm, global_asm};
use core::cell::UnsafeCell;
use core::fmt::Write;
use core::panic::PanicInfo;

use alloc::vec;
use cases::{Bits, Check};
#[cfg(not(feature = "reference"))]
use topk_kernels::{Backend, TopK};
use topk_kernels::{Direction, Request, View, ViewMut};

// The entry point: the stack aligned as the System V ABI wants it at a call, then `main`. Linux starts a
// process with `rsp` 16-byte aligned, not as after a call; `run.py` does the same.
global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "and rsp, -16",
    "call {main}",
    "ud2",
    main = sym main,
);

/// What the emulated run leaves for `run.py`, whose address is in `rax` at the final `hlt`.
#[repr(C)]
struct Report {
    /// [`MAGIC`] once the run ended (passed or panicked).
    magic: u64,
    /// Cases run.
    cases: u64,
    /// The address of `DIGESTS`: one `u64` per case, in order.
    digests: u64,
    /// Bytes of `message` used: the panic message, if the run panicked.
    message_len: u64,
    message: [u8; MESSAGE],
}

const MAGIC: u64 = u64::from_le_bytes(*b"topk-emu");
const MESSAGE: usize = 1024;
/// More than the walks' cases (79,288).
const MAX_CASES: usize = 1 << 18;

/// Statics the single thread of this program owns.
struct Owned<T>(UnsafeCell<T>);

// SAFETY: the program has one thread and no interrupt handlers; see `Owned::get`.
unsafe impl<T> Sync for Owned<T> {}

impl<T> Owned<T> {
    /// # Safety
    /// No other reference to the value may be live (single thread; callers do not hold it across calls
    /// that take it again).
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        // SAFETY: the caller's precondition.
        unsafe { &mut *self.0.get() }
    }
}

static REPORT: Owned<Report> = Owned(UnsafeCell::new(Report {
    magic: 0,
    cases: 0,
    digests: 0,
    message_len: 0,
    message: [0; MESSAGE],
}));
static DIGESTS: Owned<[u64; MAX_CASES]> = Owned(UnsafeCell::new([0; MAX_CASES]));

extern "C" fn main() -> ! {
    let mut digests = Digests { cases: 0 };
    cases::all(&mut digests);
    // SAFETY: single thread; no other reference to REPORT or DIGESTS is live.
    let report = unsafe { REPORT.get() };
    report.cases = digests.cases as u64;
    report.digests = DIGESTS.0.get() as u64;
    finish(0)
}

/// Ends the run: `hlt` for `run.py`, which runs the program in ring 0 and stops at it, or under Linux (the
/// reference build) exit with `status`.
fn finish(status: i32) -> ! {
    // SAFETY: single thread; no other reference to REPORT is live.
    let report = unsafe { REPORT.get() };
    report.magic = MAGIC;
    if cfg!(feature = "reference") {
        let message = &report.message[..report.message_len as usize];
        if !message.is_empty() {
            write(2, message);
            write(2, b"\n");
        }
        // SAFETY: `exit_group` takes one integer and does not return.
        unsafe { asm!("syscall", in("rax") 231, in("rdi") status, options(noreturn)) }
    }
    // SAFETY: `hlt` touches no memory, and run.py stops the emulated CPU there.
    unsafe { asm!("hlt", in("rax") REPORT.0.get(), options(noreturn, nostack)) }
}

/// Writes `bytes` to the file descriptor `fd` (the reference build, under Linux).
fn write(fd: u64, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let written: i64;
        // SAFETY: `write` reads `bytes.len()` bytes from `bytes`, which are readable.
        unsafe {
            asm!("syscall", inlateout("rax") 1i64 => written, in("rdi") fd, in("rsi") bytes.as_ptr(),
                 in("rdx") bytes.len(), lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        if written <= 0 {
            return;
        }
        bytes = &bytes[written as usize..];
    }
}

/// Digests each case's output into `DIGESTS`, and in the reference build prints it.
struct Digests {
    cases: usize,
}

impl Check for Digests {
    fn check<T: Bits>(&mut self, data: &[T], rows: usize, transposed: bool, k: usize, direction: Direction) {
        let n = data.len() / rows;
        let (sizes, axis, out) = cases::shapes(n, rows, transposed, k);
        let input = View::contiguous(data, sizes).expect("a contiguous input");
        let (mut values, mut indices) = (vec![T::from_raw(0); rows * k], vec![u64::MAX; rows * k]);
        let values_out = ViewMut::contiguous(&mut values, out).expect("a contiguous output");
        let indices_out = ViewMut::contiguous(&mut indices, out).expect("a contiguous output");
        let request = Request {
            input,
            axis: axis as isize,
            k,
            direction,
            values: values_out,
            indices: indices_out,
        };
        #[cfg(feature = "reference")]
        topk_kernels::naive::topk(request).expect("the reference runs");
        #[cfg(not(feature = "reference"))]
        {
            let mut plan = TopK::new(request).expect("a valid request");
            let mut scratch = vec![0u64; plan.scratch_len()];
            let all = 0..plan.sequences();
            if let Err(error) = plan.run_sequences(all, Backend::Avx512, &mut scratch) {
                panic!("case {}: the AVX-512 engine: {error}", self.cases);
            }
        }
        // FNV-1a over the indices and the values' raw bits.
        let mut digest = 0xCBF2_9CE4_8422_2325u64;
        for word in indices.iter().copied().chain(values.iter().map(|v| v.raw())) {
            digest = (digest ^ word).wrapping_mul(0x0000_0100_0000_01B3);
        }
        // SAFETY: single thread; no other reference to DIGESTS is live.
        let slot = unsafe { DIGESTS.get() }.get_mut(self.cases);
        *slot.expect("MAX_CASES covers the walks") = digest;
        if cfg!(feature = "reference") {
            let mut line = Line::default();
            let _ = writeln!(
                line,
                "{} {digest:016x} {} n {n} rows {rows} transposed {transposed} k {k} {direction:?}",
                self.cases,
                T::NAME
            );
            write(1, &line.bytes[..line.len]);
        }
        self.cases += 1;
    }
}

/// A line of text on the stack.
struct Line {
    bytes: [u8; 256],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            bytes: [0; 256],
            len: 0,
        }
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.bytes.len() - self.len;
        let take = s.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    // SAFETY: single thread; the panic unwinds nothing, and no other reference to REPORT is live here.
    let report = unsafe { REPORT.get() };
    let mut line = Line::default();
    let _ = write!(line, "{info}");
    let len = line.len.min(MESSAGE);
    report.message[..len].copy_from_slice(&line.bytes[..len]);
    report.message_len = len as u64;
    finish(101)
}

/// Bytes of the bump arena: the largest case (every f16 bit pattern, twice) takes well under 1 MiB.
const ARENA_BYTES: usize = 32 << 20;

/// A bump allocator over .bss that frees the last block only: the cases free their outputs and scratch
/// in the reverse order of their allocation, and the walks their data; what else is freed (a few small
/// vectors per walk) stays taken.
struct Arena {
    bytes: UnsafeCell<[u8; ARENA_BYTES]>,
    used: UnsafeCell<usize>,
}

// SAFETY: the program has one thread and no interrupt handlers.
unsafe impl Sync for Arena {}

// SAFETY: `alloc` returns a block of `layout.size()` bytes aligned to `layout.align()` that no live
// allocation overlaps (blocks below `used` are live or leaked, and `used` only moves back over the last
// block when that block is freed), or null.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single thread; `used` is not borrowed elsewhere.
        let used = unsafe { &mut *self.used.get() };
        let base = self.bytes.get() as usize;
        let start = (base + *used).next_multiple_of(layout.align());
        let end = start + layout.size();
        if end > base + ARENA_BYTES {
            return core::ptr::null_mut();
        }
        *used = end - base;
        start as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: single thread; `used` is not borrowed elsewhere.
        let used = unsafe { &mut *self.used.get() };
        let base = self.bytes.get() as usize;
        if ptr as usize + layout.size() == base + *used {
            *used = ptr as usize - base;
        }
    }
}

#[global_allocator]
static ARENA: Arena = Arena {
    bytes: UnsafeCell::new([0; ARENA_BYTES]),
    used: UnsafeCell::new(0),
};

// The C library functions the compiler calls (no libc is linked): string instructions, which LLVM does
// not turn back into calls to these functions.

/// # Safety
/// As C's `memcpy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller's precondition: `n` bytes readable at `src`, writable at `dst`.
    unsafe { asm!("rep movsb", inout("rcx") n => _, inout("rdi") dst => _, inout("rsi") src => _, options(nostack)) };
    dst
}

/// # Safety
/// As C's `memmove`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize).wrapping_sub(src as usize) >= n {
        // SAFETY: `dst` does not start inside `src..src + n`: a forward copy reads each byte before
        // writing over it.
        return unsafe { memcpy(dst, src, n) };
    }
    // Backwards, from the last byte, with the direction flag set and cleared again.
    // SAFETY: the caller's precondition; both last bytes lie inside their blocks since n > 0 here.
    unsafe {
        asm!("std", "rep movsb", "cld", inout("rcx") n => _, inout("rdi") dst.add(n - 1) => _,
             inout("rsi") src.add(n - 1) => _, options(nostack));
    }
    dst
}

/// # Safety
/// As C's `memset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut u8, value: i32, n: usize) -> *mut u8 {
    // SAFETY: the caller's precondition: `n` bytes writable at `dst`.
    unsafe { asm!("rep stosb", inout("rcx") n => _, inout("rdi") dst => _, in("al") value as u8, options(nostack)) };
    dst
}

/// # Safety
/// As C's `memcmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: the caller's precondition: `n` bytes readable at both. Volatile: a plain loop could be
        // compiled back into a call to this function.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// # Safety
/// As C's `bcmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the same precondition.
    unsafe { memcmp(a, b, n) }
}

/// Named by the unwinding tables of the prebuilt `core` and `alloc`; never called, since a panic here
/// aborts (`panic = "abort"`) through the handler above.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
