#!/usr/bin/env python3
"""Runs the AVX-512 build of the harness (src/main.rs) on an emulated CPU that has AVX-512, and compares
the digest of each case's output with the reference build's, run natively.

    run.py AVX512_BINARY -- REFERENCE_COMMAND...

REFERENCE_COMMAND runs the reference build (and may build it first): it starts beside the emulation,
which takes one core, and prints `index digest description` for each case.

The emulator is Bochs's CPU through bochscpu-python (pip install bochscpu-python): no operating system,
only the static executable's segments mapped at their addresses, a stack, 64-bit mode in ring 0 with
SSE, AVX and AVX-512 state enabled, and `rip` at the ELF entry. The program ends on `hlt` with the
address of its report in `rax`; any other exception, or a page outside the mapped ones, is a failure.
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

import bochscpu
import bochscpu.cpu
import bochscpu.memory

PAGE = bochscpu.memory.page_size()
MAGIC = int.from_bytes(b"topk-emu", "little")
# Guest physical addresses: the page tables from PML4, the program's pages from DATA on.
PML4 = 0x10_0000
DATA = 0x1_0000_0000
# The stack: 16 MiB ending at STACK_TOP (the kernels' frames are bounded; tests/stack.rs). Its top
# PAINTED bytes are filled with PAINT before the run, and the lowest byte no longer PAINT after it is
# the run's high-water mark.
STACK_TOP = 0x7000_0000_0000
STACK_BYTES = 16 << 20
PAINTED = 1 << 20
PAINT = 0xA5
# Writable pages in PageMapLevel4Table.insert (0 maps a page for code).
WRITABLE = 1


def load_segments(path):
    """The PT_LOAD segments of a static x86_64 ELF executable: (vaddr, file bytes, memory size), and
    its entry point."""
    image = open(path, "rb").read()
    if image[:4] != b"\x7fELF" or image[4] != 2 or struct.unpack_from("<H", image, 18)[0] != 62:
        sys.exit(f"{path}: not an x86_64 ELF64 executable")
    entry, phoff = struct.unpack_from("<QQ", image, 24)
    phentsize, phnum = struct.unpack_from("<HH", image, 54)
    segments = []
    for i in range(phnum):
        kind, _flags, offset, vaddr, _paddr, filesz, memsz, _align = struct.unpack_from(
            "<IIQQQQQQ", image, phoff + i * phentsize
        )
        if kind == 1:  # PT_LOAD
            segments.append((vaddr, image[offset : offset + filesz], memsz))
    return entry, segments


class Guest:
    """Guest memory: pages mapped as they are added, their tables committed once."""

    def __init__(self):
        self.tables = bochscpu.memory.PageMapLevel4Table()
        self.pages = {}  # guest virtual page -> guest physical page
        self.next_gpa = DATA

    def map(self, start, end):
        for page in range(start & ~(PAGE - 1), end, PAGE):
            if page not in self.pages:
                hva = bochscpu.memory.allocate_host_page()
                if not hva:
                    sys.exit("out of host pages")
                bochscpu.memory.page_insert(self.next_gpa, hva)
                self.tables.insert(page, self.next_gpa, WRITABLE)
                self.pages[page] = self.next_gpa
                self.next_gpa += PAGE

    def write(self, address, data):
        """Writes `data` at a mapped guest virtual address, a page at a time."""
        while data:
            room = PAGE - address % PAGE
            gpa = self.pages[address & ~(PAGE - 1)] + address % PAGE
            bochscpu.memory.phy_write(gpa, list(data[:room]))
            address, data = address + room, data[room:]

    def commit(self):
        for hva, gpa in self.tables.commit(PML4):
            bochscpu.memory.page_insert(gpa, hva)

    def read(self, address, size):
        return bytes(bochscpu.memory.virt_read(PML4, address, size))


def segment(selector, attr):
    s = bochscpu.Segment()
    s.present, s.selector, s.base, s.limit, s.attr = True, selector, 0, 0xFFFF_FFFF, attr
    return s


def stack_used(guest):
    """Bytes from STACK_TOP down to the lowest byte of the painted stack that is no longer PAINT."""
    for page in range(STACK_TOP - PAINTED, STACK_TOP, PAGE):
        touched = [i for i, byte in enumerate(guest.read(page, PAGE)) if byte != PAINT]
        if touched:
            return STACK_TOP - (page + touched[0])
    return 0


def emulate(path):
    """Runs the program at `path` to its `hlt`; returns its report's digests, one per case, and the
    stack it used (bytes)."""
    entry, segments = load_segments(path)
    guest = Guest()
    for vaddr, data, memsz in segments:
        guest.map(vaddr, vaddr + memsz)
    guest.map(STACK_TOP - STACK_BYTES, STACK_TOP)
    guest.commit()
    # Fresh host pages are zero (mmap): .bss needs no writes.
    for vaddr, data, _ in segments:
        guest.write(vaddr, data)
    guest.write(STACK_TOP - PAINTED, bytes([PAINT]) * PAINTED)

    session = bochscpu.Session()

    def missing_page(gpa):
        raise RuntimeError(f"the program touched the unmapped guest physical page {gpa:#x}")

    session.missing_page_handler = missing_page
    state = bochscpu.State()
    bochscpu.cpu.set_long_mode(state)
    state.cr3 = PML4
    # OSFXSR, OSXMMEXCPT and OSXSAVE; XCR0 enables x87, SSE, AVX, the opmask and both halves of ZMM.
    state.cr4 |= (1 << 9) | (1 << 10) | (1 << 18)
    state.xcr0 = 0xE7
    state.mxcsr = 0x1F80  # every floating-point exception masked, as Linux starts a process
    state.fpcw = 0x037F
    state.rsp = STACK_TOP
    state.rip = entry
    state.cs = segment(0x10, 0x209B)  # 64-bit code, ring 0: `hlt` ends the run
    data_segment = segment(0x18, 0xC93)
    state.ds = state.ss = state.es = state.fs = state.gs = data_segment
    session.cpu.state = state

    exceptions = []

    def on_exception(session, _cpu, vector, error_code):
        exceptions.append((vector, error_code, session.cpu.state.rip))
        session.stop()

    hook = bochscpu.Hook()
    hook.hlt = lambda session, _cpu: session.stop()
    hook.exception = on_exception
    session.run([hook])
    if exceptions:
        vector, error_code, rip = exceptions[0]
        sys.exit(f"exception {vector} (error code {error_code:#x}) at rip {rip:#x}")
    report = session.cpu.state.rax
    magic, cases, digests, message_len = struct.unpack("<QQQQ", guest.read(report, 32))
    if magic != MAGIC:
        sys.exit(f"stopped at rip {session.cpu.state.rip:#x} without a report")
    if message_len:
        sys.exit("the emulated run panicked: " + guest.read(report + 32, message_len).decode(errors="replace"))
    return list(struct.unpack(f"<{cases}Q", guest.read(digests, 8 * cases))), stack_used(guest)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("avx512", help="the harness built with AVX-512 (target-cpu=x86-64-v4)")
    parser.add_argument("reference", nargs="+", help="the command that runs the harness's reference build")
    args = parser.parse_args()

    started = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as output:
        reference = subprocess.Popen(args.reference, stdout=output)
        got, stack = emulate(args.avx512)
        emulated = time.monotonic() - started
        if reference.wait() != 0:
            sys.exit(f"the reference command failed (exit status {reference.returncode})")
        output.seek(0)
        lines = output.read().splitlines()
    want = [int(line.split()[1], 16) for line in lines]
    if len(got) != len(want):
        sys.exit(f"the emulated run checked {len(got)} cases, the reference {len(want)}")
    wrong = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    for i in wrong[:20]:
        print(f"case {lines[i]}: the AVX-512 engine's output differs from the reference's")
    if wrong:
        sys.exit(f"{len(wrong)} of {len(want)} cases differ (tests/backends.rs runs the same walks with every engine)")
    print(f"the AVX-512 engine under emulation: all {len(want)} cases agree with the reference ({emulated:.0f} s emulated)")
    print(f"its stack's high-water mark: {stack} bytes, the harness's frames included (painted; the deepest case)")
    if stack >= PAINTED:
        sys.exit(f"the stack reached the painted region's end ({PAINTED} bytes): the mark is not known")


if __name__ == "__main__":
    try:
        main()
        status = 0
    except SystemExit as exit:
        if isinstance(exit.code, str):
            print(exit.code, file=sys.stderr)
        status = exit.code if isinstance(exit.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    # bochscpu's bindings crash at interpreter exit (nanobind reports leaked instances, then a
    # segmentation fault): leave without the interpreter's teardown.
    os._exit(status)
