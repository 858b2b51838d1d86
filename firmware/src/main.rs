//! A bare-metal Cortex-M4F image (`thumbv7em-none-eabihf`) that runs topk-kernels without `std`, an
//! allocator or a runtime crate: a reset vector, a panic handler and three calls to `topk_on_stack`.
//!
//! It exists to prove, in CI, that the kernel crate builds, links and runs on a microcontroller, and to
//! measure what it costs in flash (`arm-none-eabi-size`; the budget is in ci/robustness.sh) and in
//! stack. Build: `cargo build --release --target thumbv7em-none-eabihf` in this folder.
//!
//! With the `qemu` feature the image also paints the free RAM below the stack before the example and
//! finds the lowest word the example overwrote after it (the stack's high-water mark), then reports
//! both results through Arm semihosting and exits: `ci/robustness.sh` runs it on QEMU's Netduino Plus 2
//! (an STM32F405, Cortex-M4F). Without a debugger or an emulator to answer it, a semihosting call stops
//! the core, so the plain image leaves it out. The `bench` feature adds, before the report, the SysTick
//! ticks of a few requests on the scalar and portable engines (BENCHMARKS.md has the command).
#![no_std]
#![no_main]

use core::hint::black_box;
use core::panic::PanicInfo;

use topk_kernels::{Direction, Error, Request, View, ViewMut, topk_on_stack};

/// The reset handler, in the slot after the initial stack pointer (which `link.x` writes).
#[unsafe(link_section = ".vector_table.reset")]
#[unsafe(no_mangle)]
pub static VECTOR_TABLE: [unsafe extern "C" fn() -> !; 1] = [reset];

/// Where the core starts: enable the FPU, initialise RAM, run the example, then idle (a debugger reads
/// `PASSED`), or with `qemu`, report and exit.
///
/// # Safety
/// Only the hardware calls it, once, out of reset, with the stack pointer from the vector table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reset() -> ! {
    // SAFETY: the first code to run, before any floating-point instruction.
    unsafe { enable_fpu() };
    // SAFETY: nothing has read .data or .bss yet.
    unsafe { init_ram() };
    // SAFETY: .bss is initialised, and nothing lives below this frame yet.
    #[cfg(feature = "qemu")]
    unsafe {
        qemu::paint_stack()
    };
    let passed = matches!(example(), Ok(true));
    #[cfg(feature = "bench")]
    bench::run();
    // SAFETY: single-threaded, no interrupts enabled: nothing else touches PASSED.
    unsafe { core::ptr::addr_of_mut!(PASSED).write_volatile(passed as u32) };
    // SAFETY: painted above, and the example has returned; QEMU answers the semihosting calls.
    #[cfg(feature = "qemu")]
    unsafe {
        qemu::report(passed, qemu::stack_used())
    };
    #[cfg(not(feature = "qemu"))]
    loop {
        core::hint::spin_loop();
    }
}

/// 1 once the example ran and matched its expected output (in .bss, so 0 until then).
static mut PASSED: u32 = 0;

/// Gives the FPU's coprocessors (CP10, CP11) full access: they are off out of reset, and the hard-float
/// ABI's first floating-point instruction would fault (what cortex-m-rt's reset handler does for
/// `eabihf` targets).
///
/// # Safety
/// Call before any floating-point instruction, in privileged mode (as out of reset).
unsafe fn enable_fpu() {
    /// The Coprocessor Access Control Register of the System Control Block.
    const CPACR: *mut u32 = 0xE000_ED88 as *mut u32;
    // SAFETY: CPACR is a word-aligned register of every Cortex-M4F, writable in privileged mode.
    unsafe { CPACR.write_volatile(CPACR.read_volatile() | 0xF << 20) };
    // SAFETY: barriers only: the next instruction sees the new access rights.
    unsafe { core::arch::asm!("dsb", "isb", options(nomem, nostack, preserves_flags)) };
}

/// Copies .data from flash and zeroes .bss (what cortex-m-rt's reset handler does).
///
/// # Safety
/// Call once, before anything reads a static; the symbols come from `link.x`.
unsafe fn init_ram() {
    unsafe extern "C" {
        static mut _sdata: u32;
        static mut _edata: u32;
        static _sidata: u32;
        static mut _sbss: u32;
        static mut _ebss: u32;
    }
    let mut dst = &raw mut _sdata;
    let mut src = &raw const _sidata;
    while dst < &raw mut _edata {
        // SAFETY: [_sdata, _edata) is RAM and [_sidata, ..) its image in flash, both word-aligned (link.x).
        unsafe { dst.write_volatile(src.read_volatile()) };
        // SAFETY: both stay within (or one past) their sections, as the loop bound checks.
        unsafe { (dst, src) = (dst.add(1), src.add(1)) };
    }
    let mut bss = &raw mut _sbss;
    while bss < &raw mut _ebss {
        // SAFETY: [_sbss, _ebss) is word-aligned RAM (link.x).
        unsafe { bss.write_volatile(0) };
        // SAFETY: stays within (or one past) .bss, as the loop bound checks.
        unsafe { bss = bss.add(1) };
    }
}

/// The three calls: the 4 largest of 16 f32 logits, the 3 smallest of each row of a 4x8 u8 image, and
/// the 64 largest of 1000 pseudo-random f32 (the portable engine's candidate buffer, its compactions and
/// its sort). `black_box` keeps the optimiser from computing the answers at build time.
fn example() -> Result<bool, Error> {
    let logits: [f32; 16] = black_box([
        0.5,
        -1.0,
        3.25,
        0.0,
        7.5,
        2.0,
        f32::NEG_INFINITY,
        3.25,
        -0.0,
        1.5,
        6.0,
        -2.5,
        0.75,
        7.5,
        4.0,
        1.0,
    ]);
    let (mut values, mut indices) = ([0.0f32; 4], [0u32; 4]);
    topk_on_stack::<4, _, _, 1>(Request {
        input: View::contiguous(&logits, [16])?,
        axis: 0,
        k: 4,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [4])?,
        indices: ViewMut::contiguous(&mut indices, [4])?,
    })?;
    let f32_ok = black_box(values) == [7.5, 7.5, 6.0, 4.0] && black_box(indices) == [4, 13, 10, 14];

    let pixels: [u8; 32] = black_box([
        9, 3, 7, 3, 0, 255, 12, 4, //
        1, 1, 1, 1, 1, 1, 1, 1, //
        200, 100, 50, 25, 12, 6, 3, 1, //
        0, 255, 0, 255, 0, 255, 0, 255,
    ]);
    let (mut smallest, mut positions) = ([0u8; 12], [0u32; 12]);
    topk_on_stack::<3, _, _, 2>(Request {
        input: View::contiguous(&pixels, [4, 8])?,
        axis: 1,
        k: 3,
        direction: Direction::Increasing,
        values: ViewMut::contiguous(&mut smallest, [4, 3])?,
        indices: ViewMut::contiguous(&mut positions, [4, 3])?,
    })?;
    let u8_ok = black_box(smallest) == [0, 3, 3, 1, 1, 1, 1, 3, 6, 0, 0, 0]
        && black_box(positions) == [4, 1, 3, 0, 1, 2, 7, 6, 5, 0, 2, 4];
    Ok(f32_ok && u8_ok && long_row_ok()?)
}

/// The 64 largest of 1000 f32 from a linear congruential generator (4096 possible values: ties), checked
/// against the definition rather than a stored answer: each value is the input's at its index, in
/// order (ties by ascending index), and nothing left out beats the last one kept.
#[inline(never)]
fn long_row_ok() -> Result<bool, Error> {
    const N: usize = 1000;
    const K: usize = 64;
    let mut row = [0.0f32; N];
    let mut state = black_box(0x2545_f491u32);
    for x in &mut row {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // 2^12 distinct values: ties among the 1000.
        *x = (state >> 20) as f32 - 2048.0;
    }
    let (mut values, mut indices) = ([0.0f32; K], [0u32; K]);
    topk_on_stack::<K, _, _, 1>(Request {
        input: View::contiguous(&row, [N])?,
        axis: 0,
        k: K,
        direction: Direction::Decreasing,
        values: ViewMut::contiguous(&mut values, [K])?,
        indices: ViewMut::contiguous(&mut indices, [K])?,
    })?;
    let (values, indices) = (black_box(values), black_box(indices));
    let at = |rank: usize| (values[rank], indices[rank] as usize);
    let in_place = (0..K).all(|rank| row.get(at(rank).1) == Some(&at(rank).0));
    let ordered =
        (1..K).all(|rank| at(rank - 1).0 > at(rank).0 || (at(rank - 1).0 == at(rank).0 && at(rank - 1).1 < at(rank).1));
    let (last, last_index) = at(K - 1);
    let kept = |i: usize| indices.contains(&(i as u32));
    let none_better = (0..N).all(|i| kept(i) || row[i] < last || (row[i] == last && i > last_index));
    Ok(in_place && ordered && none_better)
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    // The kernels never panic on a request; this only satisfies the no_std contract.
    loop {
        core::hint::spin_loop();
    }
}

/// The QEMU run's stack measurement and report (`qemu` feature).
#[cfg(feature = "qemu")]
mod qemu {
    use core::arch::asm;

    unsafe extern "C" {
        static mut _ebss: u32;
        static _stack_start: u32;
    }

    /// What free stack is painted with.
    const PAINT: u32 = 0x5AFE_57AC;

    /// Bytes kept unpainted below the stack pointer, for this function's own frame.
    const MARGIN: usize = 256;

    /// Fills the words from the end of .bss to `MARGIN` bytes below the stack pointer with `PAINT`.
    ///
    /// # Safety
    /// Nothing lives in RAM below the caller's frame (the stack grows down from the top of RAM towards
    /// .bss, link.x).
    #[inline(never)]
    pub unsafe fn paint_stack() {
        let sp: usize;
        // SAFETY: reads the stack pointer, nothing else.
        unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
        let mut word = &raw mut _ebss;
        while (word as usize) + MARGIN < sp {
            // SAFETY: between the end of .bss and the stack pointer: free RAM (the precondition).
            unsafe {
                word.write_volatile(PAINT);
                word = word.add(1);
            }
        }
    }

    /// Bytes of stack used since [`paint_stack`]: from the top of RAM down to the lowest word that is no
    /// longer `PAINT`.
    ///
    /// # Safety
    /// `paint_stack` ran, and the RAM from .bss's end to the stack pointer is free again.
    pub unsafe fn stack_used() -> usize {
        let top = &raw const _stack_start as usize;
        let mut word = &raw const _ebss;
        // SAFETY: from .bss's end up to the stack pointer, which lies below `top`: RAM.
        while (word as usize) < top && unsafe { word.read_volatile() } == PAINT {
            // SAFETY: as above.
            word = unsafe { word.add(1) };
        }
        top - word as usize
    }

    /// A line of text for semihosting, NUL-terminated: what does not fit is left out.
    pub struct Line {
        bytes: [u8; 256],
        len: usize,
    }

    impl Line {
        pub fn new() -> Line {
            Line {
                bytes: [0; 256],
                len: 0,
            }
        }

        pub fn put(&mut self, bytes: &[u8]) {
            for &b in bytes {
                // The last byte stays NUL.
                let last = self.bytes.len() - 1;
                if let Some(slot) = self.bytes.get_mut(self.len).filter(|_| self.len < last) {
                    *slot = b;
                    self.len += 1;
                }
            }
        }

        /// `value` in decimal.
        pub fn number(&mut self, value: usize) {
            let (mut digits, mut count, mut rest) = ([0u8; 20], 0, value);
            while count == 0 || rest > 0 {
                digits[count] = b'0' + (rest % 10) as u8;
                (rest, count) = (rest / 10, count + 1);
            }
            for i in (0..count).rev() {
                self.put(&digits[i..=i]);
            }
        }

        /// Prints the line through semihosting.
        ///
        /// # Safety
        /// A semihosting host (QEMU's `-semihosting`, or a debugger) answers `bkpt 0xab`.
        pub unsafe fn print(&self) {
            /// SYS_WRITE0: print a NUL-terminated string.
            const WRITE0: usize = 0x04;
            // SAFETY: the host reads `bytes` up to its NUL (`put` never writes the last byte).
            unsafe { asm!("bkpt #0xab", inout("r0") WRITE0 => _, in("r1") self.bytes.as_ptr(), options(nostack)) };
        }
    }

    /// Prints the result and the stack used through semihosting, then exits QEMU: status 0 if `passed`.
    ///
    /// # Safety
    /// A semihosting host (QEMU's `-semihosting`, or a debugger) answers `bkpt 0xab`.
    pub unsafe fn report(passed: bool, stack: usize) -> ! {
        let mut line = Line::new();
        line.put(if passed {
            b"topk-firmware: passed"
        } else {
            b"topk-firmware: FAILED"
        });
        line.put(b", stack used: ");
        line.number(stack);
        line.put(b" bytes\n");
        // SAFETY: the caller's promise.
        unsafe { line.print() };
        /// SYS_EXIT, with ADP_Stopped_ApplicationExit (QEMU exits with 0) or RunTimeErrorUnknown (1).
        const EXIT: usize = 0x18;
        let reason = if passed { 0x20026 } else { 0x20023 };
        // SAFETY: the host stops.
        unsafe { asm!("bkpt #0xab", inout("r0") EXIT => _, in("r1") reason, options(nostack)) };
        loop {
            core::hint::spin_loop();
        }
    }
}

/// What each request of a small set costs on the core (`bench` feature): SysTick's count across each
/// call, printed through semihosting. Under QEMU's `-icount shift=0` an instruction is 1 ns of virtual
/// time and SysTick counts at 168 MHz, so a tick is about 6 instructions (BENCHMARKS.md has the
/// command).
#[cfg(feature = "bench")]
mod bench {
    use core::hint::black_box;

    use topk_kernels::{Backend, Direction, Element, Request, TopK, View, ViewMut};

    use crate::qemu::Line;

    /// SysTick's control, reload and current-value registers.
    const CSR: *mut u32 = 0xE000_E010 as *mut u32;
    const RVR: *mut u32 = 0xE000_E014 as *mut u32;
    const CVR: *mut u32 = 0xE000_E018 as *mut u32;

    /// Times each request on the scalar and the portable engine and prints a line of ticks for each.
    pub fn run() {
        // SAFETY: SysTick's registers exist on every Cortex-M4; counting from the core's clock, without
        // its interrupt, touches nothing else.
        unsafe {
            RVR.write_volatile(0xFF_FFFF);
            CVR.write_volatile(0);
            CSR.write_volatile(0b101);
        }
        let (mut floats, mut bytes) = ([0.0f32; 2048], [0u8; 2048]);
        let mut state = 0x2545_f491u32;
        for (f, b) in floats.iter_mut().zip(&mut bytes) {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            *f = (state >> 8) as f32 - 8e6;
            *b = (state >> 24) as u8;
        }
        for backend in [Backend::Scalar, Backend::Portable] {
            let mut line = Line::new();
            line.put(backend.name().as_bytes());
            line.put(b":");
            ticks(&mut line, time::<f32, 64>(&floats, 1, 64, backend), b"f32 2048 K=64");
            ticks(&mut line, time::<f32, 64>(&floats, 1, 8, backend), b"K=8");
            ticks(&mut line, time::<f32, 64>(&floats, 1, 1, backend), b"K=1");
            ticks(&mut line, time::<f32, 128>(&floats, 16, 8, backend), b"16x128 K=8");
            ticks(&mut line, time::<f32, 256>(&floats, 128, 2, backend), b"128x16 K=2");
            ticks(&mut line, time::<u8, 64>(&bytes, 1, 16, backend), b"u8 2048 K=16");
            ticks(&mut line, time::<u8, 384>(&bytes, 128, 3, backend), b"128x16 K=3");
            line.put(b"\n");
            // SAFETY: the `bench` feature runs under QEMU (it implies `qemu`).
            unsafe { line.print() };
        }
    }

    /// Ticks of the `k` largest of each of `rows` rows of `input` on `backend` (0 if refused); `OUT`
    /// holds `rows · k` outputs.
    #[inline(never)]
    fn time<T: Element + Default, const OUT: usize>(input: &[T], rows: usize, k: usize, backend: Backend) -> u32 {
        let mut values = [T::default(); OUT];
        let mut indices = [0u32; OUT];
        let mut scratch = [0u64; 256];
        // SAFETY: SysTick's current value, read only.
        let start = unsafe { CVR.read_volatile() };
        let ran = (|| {
            let mut plan = TopK::new(Request {
                input: View::contiguous(black_box(input), [rows, input.len() / rows]).ok()?,
                axis: 1,
                k,
                direction: Direction::Decreasing,
                values: ViewMut::contiguous(values.get_mut(..rows * k)?, [rows, k]).ok()?,
                indices: ViewMut::contiguous(indices.get_mut(..rows * k)?, [rows, k]).ok()?,
            })
            .ok()?;
            plan.run_sequences(0..plan.sequences(), backend, &mut scratch).ok()
        })();
        // SAFETY: as above.
        let end = unsafe { CVR.read_volatile() };
        black_box((values, indices));
        // SysTick counts down, 24 bits wide.
        if ran.is_some() {
            start.wrapping_sub(end) & 0xFF_FFFF
        } else {
            0
        }
    }

    /// Appends ` label ticks` to `line`.
    fn ticks(line: &mut Line, ticks: u32, label: &[u8]) {
        line.put(b" ");
        line.put(label);
        line.put(b" ");
        line.number(ticks as usize);
    }
}
