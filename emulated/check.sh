#!/usr/bin/env bash
# The AVX-512 engine against the reference on a CPU without AVX-512: builds the harness (src/main.rs)
# with AVX-512 and runs it on Bochs's emulated CPU (run.py), while the reference build runs natively
# beside it. Sets up bochscpu-python in emulated/.venv first (pip, from PyPI). About 4 minutes on 2 cores.
# Usage: emulated/check.sh [build|run]   (both by default; ci.sh runs the second beside other steps:
#                                         the emulation takes one core for 90-130 s)
set -euo pipefail
cd "$(dirname "$0")"
[[ ${1:-} =~ ^(build|run|)$ ]] || { echo "usage: $0 [build|run]" >&2; exit 2; }
target=x86_64-unknown-linux-gnu
# Position-dependent executables: run.py maps their segments where the ELF headers say.
static="-C relocation-model=static"
mkdir -p target
cc -shared -fPIC -O2 glibc_c23.c -o target/glibc_c23.so
# The wheel's two C23 functions, for glibc before 2.38 (glibc_c23.c).
python="env LD_PRELOAD=$PWD/target/glibc_c23.so .venv/bin/python"
[[ -x .venv/bin/python ]] || python3 -m venv .venv
$python -c 'import bochscpu' 2>/dev/null || .venv/bin/pip install -q bochscpu-python

avx512=(--release --target $target --target-dir target/avx512)
avx512_flags="$static -C target-cpu=x86-64-v4"
if [[ ${1:-build} == build ]]; then
    # Not a member of the root workspace: its format and lints are checked here. `--target` keeps
    # RUSTFLAGS off the build scripts and proc macros.
    cargo fmt --check
    RUSTFLAGS=$avx512_flags cargo clippy "${avx512[@]}" -- -D warnings
    RUSTFLAGS=$avx512_flags cargo build "${avx512[@]}"
fi
if [[ ${1:-run} == run ]]; then
    reference="RUSTFLAGS='$static' cargo build -q --profile reference --features reference --target $target \
--target-dir target/reference && exec target/reference/$target/reference/topk-emulated"
    exec $python run.py target/avx512/$target/release/topk-emulated -- bash -c "$reference"
fi
