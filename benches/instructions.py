#!/usr/bin/env python3
"""Instructions one call of the kernel executes, counted exactly (valgrind's callgrind), by source line.

Usage: python3 benches/instructions.py BIN "SHAPE DTYPE AXIS K DATA" [--reps R] [--top N] [--mispredicts]
  e.g. python3 benches/instructions.py target/release/topk "4096,256 f32 1 8 normal"

Timings on a shared 2-core VM move by 20-50% between phases of the host, more than most changes are
worth; an instruction count does not move at all. For kernels bound by their instructions (short rows,
the sorts), the count is the measure to compare two builds by; for those bound by memory it says
nothing about the loads' waits, and a timing (`benches/ab.py`) is still needed.

`BIN bench` runs under callgrind twice, with 1 and 1 + R timed repetitions; the difference is R calls
of the kernel, whatever the run does once (data, warm-up, reference check). Each instruction's count is
put on the first source line of this crate that its inlined frames name, outside the ISA files (whose
intrinsic wrappers would otherwise take every vector instruction), and the lines are listed by count.
Instructions outside the binary (the C library's memset and memcpy, which the compiler calls for
fills and copies of a length known at run time) are listed by function on a line of their own.
Functions of core the crate calls out of line (`core::slice::sort::`, the compaction's selection) name
no line of the crate; they are listed as `library ...` and counted as the kernel's.
With --mispredicts the count is callgrind's simulated mispredicted branches instead (a simple
predictor's model, not the CPU's): it shows which loops' exits and which data-dependent branches a
timing pays for.
Needs valgrind and binutils' addr2line, and a BIN with line tables (the release profile keeps them).
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

# Frames in these files are the ISA's wrappers of intrinsics: their instructions go to the caller.
WRAPPERS = ("/arch/x86_64/", "/arch/aarch64/", "/arch/all/", "/vector.rs")


def callgrind(binary, case, reps, out, branches=False):
    shape, dtype, axis, k, data = case.split()
    command = [
        "valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no",
        *(["--branch-sim=yes"] if branches else []),
        f"--callgrind-out-file={out}",
        binary, "bench", "--shape", shape, "--dtype", dtype, "--axis", axis, "--k", k,
        "--data", data, "--reps", str(reps), "--json",
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def counts(path, binary, event="Ir"):
    """`event`'s count (instructions executed, by default) at each address of `binary` (self cost only: a
    call's inclusive line is skipped), and in other objects (the C library's memset, say) by function
    name."""
    by_address, elsewhere = collections.Counter(), collections.Counter()
    names = {"ob": {}, "fn": {}}
    ours, function = True, "?"
    after_call = False
    column = 2
    for line in open(path):
        if line.startswith("events:"):
            column = 2 + line.split()[1:].index(event)
            continue
        kind, _, rest = line.partition("=")
        if kind in ("ob", "fn", "cob", "cfn", "cfi", "cfl", "fl", "fi", "fe"):
            # Compressed names: "(id) name" the first time, "(id)" after.
            match = re.match(r"\((\d+)\)(?: (.*))?", rest.strip())
            if match and kind in ("ob", "fn", "cob", "cfn"):
                table = names["ob" if kind in ("ob", "cob") else "fn"]
                if match.group(2) is not None:
                    table[match.group(1)] = match.group(2)
                name = table.get(match.group(1), "?")
                if kind == "ob":
                    ours = os.path.realpath(name) == os.path.realpath(binary)
                elif kind == "fn":
                    function = name
            continue
        if line.startswith("calls="):
            after_call = True
            continue
        if not line[:1] or not (line[0].isdigit() or line[0] in "+-*"):
            continue
        fields = line.split()
        if after_call:
            after_call = False
            continue
        if len(fields) > column and fields[0].startswith("0x"):
            if ours:
                by_address[int(fields[0], 16)] += int(fields[column])
            else:
                elsewhere[function] += int(fields[column])
    return by_address, elsewhere


def sum_counts(parts):
    """The sum of several `counts` results, address by address and function by function."""
    by_address, elsewhere = collections.Counter(), collections.Counter()
    for addresses, functions in parts:
        by_address.update(addresses)
        elsewhere.update(functions)
    return by_address, elsewhere


# Sources that are not the crate's: the toolchain's library and the registry's crates.
NOT_OURS = ("/rustc/", "/.cargo/registry/", "/.cargo/git/", "/.rustup/")


def ours(location):
    """The crate's `src/...` part of a frame's `file:line`, or None for any other file (the toolchain, a
    dependency, the harness in examples/). Any checkout's: BIN may come from another worktree."""
    if "/src/" not in location or any(part in location for part in NOT_OURS):
        return None
    return "src/" + location.split("/src/", 1)[1]


# Functions of the standard library the kernel calls out of line (`CoreSort`'s select and sort): their
# frames name no line of the crate, but the harness never calls them between the timed calls.
CALLED_BY_THE_CRATE = ("core::slice::sort::",)


def source_lines(binary, addresses):
    """Each address's line (`src/...`): the innermost inlined frame in the crate's src/ outside the
    wrappers; where no frame is the crate's, the function's name if it is one of CALLED_BY_THE_CRATE
    (prefixed "library "), else None (the harness: the floor's fold, the check)."""
    result = {}
    for start in range(0, len(addresses), 2000):
        batch = addresses[start:start + 2000]
        out = subprocess.run(
            ["addr2line", "-a", "-i", "-f", "-C", "-e", binary] + [hex(a) for a in batch],
            check=True, capture_output=True, text=True,
        ).stdout
        blocks = re.split(r"^(0x[0-9a-f]{8,})$", out, flags=re.M)
        for address, body in zip(blocks[1::2], blocks[2::2]):
            lines = body.strip().split("\n")
            locations = [lines[i + 1] for i in range(0, len(lines) - 1, 2)]
            mine = [ours(re.sub(r" \(discriminator \d+\)", "", loc)) for loc in locations]
            mine = [loc for loc in mine if loc is not None]
            line = next((loc for loc in mine if not any(w in loc for w in WRAPPERS)), mine[0] if mine else None)
            # The function the address is in (the outermost of its inlined frames).
            function = re.sub(r"<.*", "", lines[-2]) if len(lines) >= 2 else ""
            if line is None and function.startswith(CALLED_BY_THE_CRATE):
                line = "library " + function
            result[int(address, 16)] = line
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("case", help='"SHAPE DTYPE AXIS K DATA", as benches/ab.py takes it')
    parser.add_argument("--reps", type=int, default=4, help="extra calls counted (default 4)")
    parser.add_argument("--top", type=int, default=30, help="source lines listed (default 30)")
    parser.add_argument("--mispredicts", action="store_true",
                        help="count callgrind's simulated mispredicted branches (conditional and indirect)"
                             " instead of instructions: a model of a simple predictor, not the CPU's, but"
                             " it shows where the exits a timing pays for come from")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        once, more = os.path.join(tmp, "once"), os.path.join(tmp, "more")
        callgrind(args.binary, args.case, 1, once, args.mispredicts)
        callgrind(args.binary, args.case, 1 + args.reps, more, args.mispredicts)
        events = ("Bcm", "Bim") if args.mispredicts else ("Ir",)
        (base, base_elsewhere), (total, total_elsewhere) = (
            [sum_counts([counts(path, args.binary, event) for event in events]) for path in (once, more)])
    per_call = {a: (c - base.get(a, 0)) / args.reps for a, c in total.items() if c > base.get(a, 0)}
    libraries = {f: (c - base_elsewhere.get(f, 0)) / args.reps for f, c in total_elsewhere.items()}
    libraries = {f: c for f, c in libraries.items() if c >= 100}
    lines = source_lines(args.binary, sorted(per_call))
    by_line, harness = collections.Counter(), 0.0
    for address, count in per_call.items():
        line = lines.get(address)
        if line is None:
            harness += count
        else:
            by_line[line] += count
    kernel = sum(by_line.values())
    elements = 1
    for size in args.case.split()[0].split(","):
        elements *= int(size)
    what = "mispredicted branches" if args.mispredicts else "instructions"
    print(f"{args.case}: {kernel:,.0f} {what} a call in the crate, {kernel / elements:.2f} an element"
          f" (the harness's floor and timing: {harness:,.0f} more)")
    if libraries:
        # Calls out of the binary (memset and memcpy, mostly): the crate's too, and invisible by line.
        listed = ", ".join(f"{f} {c:,.0f}" for f, c in sorted(libraries.items(), key=lambda x: -x[1])[:4])
        print(f"  in other objects: {sum(libraries.values()):,.0f} a call ({listed})")
    for line, count in by_line.most_common(args.top):
        print(f"{count:14,.0f} {100 * count / kernel:5.1f}%  {line}")


if __name__ == "__main__":
    sys.exit(main())
