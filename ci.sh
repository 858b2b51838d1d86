#!/usr/bin/env bash
# The test command: installs what is missing, then runs every check of the workspace, step by step (each
# step's header is a line `=== NAME (at N s)`). From a clean clone it takes long on 2 cores, most of
# it compiling the kernel crate in its configurations: --only runs a step alone.
# Usage: ./ci.sh                 every step
#        ./ci.sh --quick         every step, less the fuzz smoke run and miri
#        ./ci.sh --list          the steps' names
#        ./ci.sh --only PATTERN  the install step, then only the steps whose name matches PATTERN (a bash
#                                regex, case-insensitive: --only format, --only 'clippy|docs'). Each step
#                                runs alone; those that use an earlier step's builds (the capped tests,
#                                the C ABI, the GPU example) build them first. The AVX-512 emulation's
#                                result step needs its build step: --only emulation selects both.
# Knobs: FUZZ_SECONDS (per fuzz target, default 30), QUICKCHECK_TESTS, TOPK_SEED (see tests/common).
set -euo pipefail
cd "$(dirname "$0")"
quick=0
only=
while (($#)); do
    case $1 in
        --quick) quick=1 ;;
        --only)
            (($# >= 2)) || { echo "--only needs a pattern"; exit 2; }
            only=$2
            shift
            ;;
        --list)
            sed -n 's/^\(if \)\?step "\([^"]*\)".*/\2/p' "$0"
            exit 0
            ;;
        *) echo "usage: ./ci.sh [--quick] [--list] [--only PATTERN]"; exit 2 ;;
    esac
    shift
done

# `if step "NAME"; then ... fi`: prints the step's header, with when it started in seconds since ci.sh
# did, and says whether the step runs (with --only, whether NAME matches; the install step always runs).
step() {
    local selected=1
    if [[ -n $only && $1 != "install what is missing" ]]; then
        shopt -s nocasematch
        [[ $1 =~ $only ]] || selected=0
        shopt -u nocasematch
    fi
    ((selected)) || return 1
    printf '\n=== %s (at %d s)\n' "$1" "$SECONDS"
}
started=$(date +%s)

if step "install what is missing"; then
    as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
    packages=()
    command -v qemu-aarch64 >/dev/null || packages+=(qemu-user)
    command -v aarch64-linux-gnu-gcc >/dev/null || packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
    command -v arm-linux-gnueabihf-gcc >/dev/null || packages+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
    command -v qemu-system-arm >/dev/null || packages+=(qemu-system-arm)
    command -v arm-none-eabi-size >/dev/null || packages+=(binutils-arm-none-eabi)
    command -v cc >/dev/null || packages+=(gcc)
    ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || packages+=(mesa-vulkan-drivers)
    ldconfig -p | grep -q 'libvulkan\.so\.1' || packages+=(libvulkan1)
    command -v c++ >/dev/null || packages+=(g++)
    command -v pkg-config >/dev/null || packages+=(pkgconf)
    python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
    if ((${#packages[@]})); then
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
    fi
    rustup component add rustfmt clippy
    rustup target add aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf thumbv7em-none-eabihf x86_64-unknown-none
    rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
    rustup component add miri rust-src --toolchain nightly
fi

export CARGO_TERM_COLOR=never
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUNNER="qemu-arm -L /usr/arm-linux-gnueabihf"
export RUSTDOCFLAGS="-D warnings"
# Cargo.toml keeps line tables in release builds for profiling; CI's release builds (aarch64 tests, the
# example, benches) need none, and skip their cost.
export CARGO_PROFILE_RELEASE_DEBUG=0
# Nor do the tests' debug builds; and a clean clone gains nothing from incremental builds, which only
# add their bookkeeping.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_INCREMENTAL=0
# The GPU tests run on lavapipe (Mesa's CPU Vulkan driver) and must find it: no silent skip.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export VK_ICD_FILENAMES="${VK_ICD_FILENAMES:-$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json | head -1)}"
export WGPU_BACKEND=vulkan TOPK_REQUIRE_GPU=1

# What several steps share, so that each step also runs alone (--only).
# The kernel crate's test files, as cargo arguments (the aarch64 and armv7 steps).
kernel_tests=()
for file in tests/*.rs; do
    kernel_tests+=(--test "$(basename "$file" .rs)")
done
# The test step's build, as cargo's JSON messages: `cargo test --no-run` finds it built after that step,
# and builds it when a step runs alone.
artifacts=
test_artifacts() {
    [[ -n $artifacts ]] || artifacts=$(cargo test --workspace --all-features --no-run --message-format=json)
}
# artifacts_where CONDITION WHAT (after test_artifacts): prints WHAT for each compiler artifact m of the
# test step's build where CONDITION holds (both Python expressions over cargo's JSON message m).
artifacts_where() {
    python3 -c "
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get('reason') == 'compiler-artifact' and ($1):
        print($2)" <<<"$artifacts"
}
# The Python environment of the conformance suite (tests/conformance.py): numpy and onnx.
conformance_venv() {
    [[ -x .venv-conformance/bin/python ]] || python3 -m venv .venv-conformance
    .venv-conformance/bin/python -c 'import numpy, onnx' 2>/dev/null || .venv-conformance/bin/pip install -q numpy onnx
}

if step "format"; then
    cargo fmt --all --check
fi

if step "clippy (host, every feature)"; then
    cargo clippy --workspace --all-targets --all-features -- -D warnings
fi

if step "clippy (kernel crate without std: library, tests, benches)"; then
    cargo clippy -p topk-kernels --no-default-features --all-targets -- -D warnings
fi

if step "clippy (aarch64)"; then
    cargo clippy -p topk-kernels --target aarch64-unknown-linux-gnu --all-targets --all-features -- -D warnings
fi

if step "clippy (the firmware target, thumbv7em: no SIMD engine, 32-bit usize)"; then
    # What only the SIMD engines use is dead there: the host's and aarch64's lints cannot see it.
    cargo clippy -p topk-kernels --no-default-features --target thumbv7em-none-eabihf -- -D warnings
fi

if step "the kernel crate on its minimum supported Rust (Cargo.toml's rust-version), with and without std"; then
    msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
    rustup toolchain list | grep -q "^$msrv" || rustup toolchain install "$msrv" --profile minimal
    cargo "+$msrv" check -p topk-kernels --lib --all-features --target-dir target/msrv
    cargo "+$msrv" check -p topk-kernels --lib --no-default-features --target-dir target/msrv
fi

if step "tests (host, every feature: kernel, C ABI, GPU on lavapipe, CLI, doctests)"; then
    # cli/tests/cli.rs runs the `topk` binary this command builds, here and in the capped runs below.
    cargo test --workspace --all-features
fi

if step "tests with dispatch capped to each engine below AVX-512 (TOPK_MAX_ISA=avx2, portable)"; then
    # The suite above runs every engine explicitly; these files also go through Backend::Auto (and the
    # CLI), which the cap turns into the AVX2 and then the portable engine. The test step's binaries, run
    # directly: `cargo test --test ...` selects other targets, unifies features differently and rebuilds.
    test_artifacts
    mapfile -t capped_tests < <(artifacts_where \
        'm["target"]["kind"] == ["test"] and m["target"]["name"] in {"accumulator", "cli", "directml", "edge_cases", "properties"}' \
        'm["executable"]')
    ((${#capped_tests[@]} == 5)) || { echo "expected 5 test binaries, found: ${capped_tests[*]}"; exit 1; }
    for cap in avx2 portable; do
        for binary in "${capped_tests[@]}"; do TOPK_MAX_ISA=$cap "$binary"; done
    done
fi

if step "tests (aarch64 under qemu: NEON and the portable engine; release, for qemu's sake)"; then
    # The kernel crate's test files. The command line's (cli/tests/cli.rs) runs `topk` as a child process:
    # qemu-user runs the test binary, but a child aarch64 binary it spawns would need binfmt_misc, which CI
    # machines lack.
    # `topk_tests_only` leaves out the dev-dependencies of the benchmarks (Cargo.toml), which this build
    # does not compile: criterion and its own, for aarch64 in release.
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--cfg topk_tests_only" \
        cargo test -p topk-kernels --target aarch64-unknown-linux-gnu --release --lib "${kernel_tests[@]}" --features rayon,ndarray
fi

if step "tests (32-bit ARM under qemu: armv7, no SIMD engine on a 32-bit usize, as firmware has it)"; then
    # The same files as aarch64's, in release for qemu's sake; no NEON in this target's baseline, so
    # every engine takes the scalar algorithms and the heapsort, as on the Cortex-M firmware target.
    CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUSTFLAGS="--cfg topk_tests_only" \
        cargo test -p topk-kernels --target armv7-unknown-linux-gnueabihf --release --lib "${kernel_tests[@]}" --features ndarray
fi

if step "C ABI: the C test program (host, and armv7 under qemu), and the static library for the firmware target"; then
    # The static library of the test step's build (`run_c_tests.sh` alone builds one with default
    # features: the kernel crate compiled once more).
    test_artifacts
    TOPK_CAPI_LIB=$(artifacts_where 'm["target"]["name"] == "topk_kernels_capi" and not m["profile"]["test"]' \
        '*[f for f in m["filenames"] if f.endswith(".a")]')
    [[ -f $TOPK_CAPI_LIB ]] || { echo "no static library of the C ABI among the test step's artifacts"; exit 1; }
    TOPK_CAPI_LIB=$TOPK_CAPI_LIB capi/tests/run_c_tests.sh
    # The library installed into a temporary prefix with its header and pkg-config file, and the example
    # built against it there (shared and static), as a C user would.
    TOPK_CAPI_PROFILE=dev capi/tests/install_and_build_example.sh
    # The same C program on 32-bit ARM under qemu: the header's types where size_t and pointers are 32 bits.
    cargo build -p topk-kernels-capi --target armv7-unknown-linux-gnueabihf --release
    CC=arm-linux-gnueabihf-gcc TOPK_C_RUNNER="$CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUNNER" \
        TOPK_CAPI_LIB=target/armv7-unknown-linux-gnueabihf/release/libtopk_kernels_capi.a capi/tests/run_c_tests.sh
    cargo rustc -p topk-kernels-capi --no-default-features --target thumbv7em-none-eabihf --crate-type staticlib
fi

if step "conformance of 'topk run' against ONNX's reference TopK"; then
    cargo build --release -p topk-cli
    conformance_venv
    .venv-conformance/bin/python tests/conformance.py target/release/topk
fi

if step "the stack bound of optimised builds (tests/stack.rs, release)"; then
    # The test step checked the debug builds' bound; the one lib.rs states for optimised builds is checked
    # here.
    cargo test --release -p topk-kernels --test stack -- --nocapture 2>&1 | grep -E '^stack|test result|panicked|error'
fi

if step "benchmarks compile and run once"; then
    cargo bench -p topk-kernels --features internals --bench topk --bench sorters -- --test >/dev/null
fi

if step "GPU example on lavapipe: bench, and the same conformance suite against 'topk_gpu run'"; then
    # The example of the test step's build: `cargo run -p topk-kernels-gpu` would unify features
    # differently and rebuild wgpu and the kernel crate.
    test_artifacts
    conformance_venv
    target/debug/examples/topk_gpu bench --shape 4x4096 --k 16 --repeats 2
    # 200 cases (the host suite runs 400): each is a process that starts Vulkan on lavapipe, 0.25 s.
    .venv-conformance/bin/python tests/conformance.py target/debug/examples/topk_gpu --cases 200
fi

if step "docs"; then
    cargo doc -p topk-kernels --no-deps --all-features
fi

if step "the AVX-512 engine under emulation (Bochs): its build; its run goes on beside the next step"; then
    # This machine's CPU may lack AVX-512; the suite above then refused that engine. The backend sweep's
    # cases, compiled for it and run on an emulated CPU that has it (emulated/). The run takes one core,
    # and the fuzz smoke run and miri below leave one free.
    emulated/check.sh build
    emulated/check.sh run >emulated/target/run.log 2>&1 &
    emulated_run=$!
    trap 'kill $emulated_run 2>/dev/null || true' EXIT
fi

if step "robustness: fuzz smoke run, miri, no_std builds, firmware size"; then
    # The fuzz build keeps its profile's line tables (crash reports): the override above is for this file.
    if ((quick)); then quick_knobs=(FUZZ_SECONDS=0 SKIP_MIRI=1); else quick_knobs=(); fi
    env -u CARGO_PROFILE_RELEASE_DEBUG "${quick_knobs[@]}" ci/robustness.sh
fi

if step "the AVX-512 engine under emulation: the run's result"; then
    emulated_status=0
    if [[ -n ${emulated_run:-} ]]; then
        wait "$emulated_run" || emulated_status=$?
    else
        # Alone (--only): the run in the foreground, on the build step's harness.
        emulated/check.sh run >emulated/target/run.log 2>&1 || emulated_status=$?
    fi
    cat emulated/target/run.log
    ((emulated_status == 0)) || { echo "FAILED: the AVX-512 engine under emulation (exit status $emulated_status)"; exit 1; }
fi

if step "the main job"; then
    cargo run --release -p topk-cli -- demo
fi

if [[ -n $only ]]; then
    printf '\nci.sh: the steps matching "%s" passed in %d s\n' "$only" $(($(date +%s) - started))
else
    printf '\nci.sh: every check passed in %d s\n' $(($(date +%s) - started))
fi
