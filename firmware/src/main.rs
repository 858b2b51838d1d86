//! A bare-metal Cortex-M4F image (`thumbv7em-none-eabihf`) that runs topk-kernels without `std`, an
//! allocator or a runtime crate: a reset vector, a panic handler and two calls to `topk_on_stack`.
//!
//! It exists to prove, in CI, that the kernel crate builds and links for a microcontroller, and to
//! measure what it costs in flash (`arm-none-eabi-size`; the budget is in ci/robustness.sh). Build:
//! `cargo build --release --target thumbv7em-none-eabihf` in this folder.
#![no_std]
#![no_main]

use core::hint::black_box;
use core::panic::PanicInfo;

use topk_kernels::{Direction, Error, View, ViewMut, topk_on_stack};

/// The reset handler, in the slot after the initial stack pointer (which `link.x` writes).
#[unsafe(link_section = ".vector_table.reset")]
#[unsafe(no_mangle)]
pub static VECTOR_TABLE: [unsafe extern "C" fn() -> !; 1] = [reset];

/// Where the core starts: initialise RAM, run the example, then idle. A debugger reads `PASSED`.
///
/// # Safety
/// Only the hardware calls it, once, out of reset, with the stack pointer from the vector table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reset() -> ! {
    // SAFETY: this is the first code to run; nothing has read .data or .bss yet.
    unsafe { init_ram() };
    let passed = matches!(example(), Ok(true));
    // SAFETY: single-threaded, no interrupts enabled: nothing else touches PASSED.
    unsafe { core::ptr::addr_of_mut!(PASSED).write_volatile(passed as u32) };
    loop {
        core::hint::spin_loop();
    }
}

/// 1 once the example ran and matched its expected output (in .bss, so 0 until then).
static mut PASSED: u32 = 0;

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

/// The two calls: the 4 largest of 16 f32 logits, and the 3 smallest of each row of a 4x8 u8 image.
/// `black_box` keeps the optimiser from computing the answers at build time.
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
    topk_on_stack::<4, _, _, 1>(
        View::contiguous(&logits, [16])?,
        0,
        4,
        Direction::Decreasing,
        ViewMut::contiguous(&mut values, [4])?,
        ViewMut::contiguous(&mut indices, [4])?,
    )?;
    let f32_ok = black_box(values) == [7.5, 7.5, 6.0, 4.0] && black_box(indices) == [4, 13, 10, 14];

    let pixels: [u8; 32] = black_box([
        9, 3, 7, 3, 0, 255, 12, 4, //
        1, 1, 1, 1, 1, 1, 1, 1, //
        200, 100, 50, 25, 12, 6, 3, 1, //
        0, 255, 0, 255, 0, 255, 0, 255,
    ]);
    let (mut smallest, mut positions) = ([0u8; 12], [0u32; 12]);
    topk_on_stack::<3, _, _, 2>(
        View::contiguous(&pixels, [4, 8])?,
        1,
        3,
        Direction::Increasing,
        ViewMut::contiguous(&mut smallest, [4, 3])?,
        ViewMut::contiguous(&mut positions, [4, 3])?,
    )?;
    let u8_ok = black_box(smallest) == [0, 3, 3, 1, 1, 1, 1, 3, 6, 0, 0, 0]
        && black_box(positions) == [4, 1, 3, 0, 1, 2, 7, 6, 5, 0, 2, 4];
    Ok(f32_ok && u8_ok)
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    // The kernels never panic on a request; this only satisfies the no_std contract.
    loop {
        core::hint::spin_loop();
    }
}
