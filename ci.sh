#!/usr/bin/env bash
# The test command: installs what is missing, then runs every check of the workspace.
# Usage: ./ci.sh            (everything; about 20-25 minutes on 2 cores from a clean clone)
#        ./ci.sh --quick    (skips the fuzz smoke run and miri)
set -euo pipefail
cd "$(dirname "$0")"
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

step() { printf '\n=== %s\n' "$*"; }
started=$(date +%s)

step "install what is missing"
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
packages=()
command -v qemu-aarch64 >/dev/null || packages+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null || packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v arm-none-eabi-size >/dev/null || packages+=(binutils-arm-none-eabi)
command -v cc >/dev/null || packages+=(gcc)
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || packages+=(mesa-vulkan-drivers)
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
if ((${#packages[@]})); then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi
rustup component add rustfmt clippy
rustup target add aarch64-unknown-linux-gnu thumbv7em-none-eabihf x86_64-unknown-none
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
rustup component add miri rust-src --toolchain nightly

export CARGO_TERM_COLOR=never
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export RUSTDOCFLAGS="-D warnings"

step "format"
cargo fmt --all --check

step "clippy (host, every feature)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "clippy (aarch64)"
cargo clippy -p topk-kernels --target aarch64-unknown-linux-gnu --all-targets --all-features -- -D warnings

step "tests (host, every feature)"
cargo test -p topk-kernels --all-features

step "tests (aarch64 under qemu)"
cargo test -p topk-kernels --target aarch64-unknown-linux-gnu --lib --tests --features rayon

step "no_std builds (firmware and bare-metal x86_64)"
cargo build -p topk-kernels --no-default-features --target thumbv7em-none-eabihf --lib
cargo build -p topk-kernels --no-default-features --target x86_64-unknown-none --lib

step "docs"
cargo doc -p topk-kernels --no-deps --all-features

step "the main job"
cargo run --release --example topk -- demo

printf '\nci.sh: every check passed in %d s\n' $(($(date +%s) - started))
