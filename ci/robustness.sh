#!/usr/bin/env bash
# The robustness checks, called by ./ci.sh (and runnable alone):
#   1. fuzz smoke run: every cargo-fuzz target for $FUZZ_SECONDS (30) seconds from its committed seeds;
#   2. miri on the library's unit tests (strict provenance);
#   3. the library without std for x86_64-unknown-none and thumbv7em-none-eabihf;
#   4. the no_std firmware example, its flash size reported and held to $FIRMWARE_BUDGET bytes;
#   5. the same example run on QEMU's Netduino Plus 2 (a Cortex-M4F): its checks pass, and the stack it
#      used (painted RAM) is reported.
# Installs what is missing first (idempotent; a few seconds when everything is there).
# Knobs: FUZZ_SECONDS=0 skips fuzzing; SKIP_MIRI=1 skips miri.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# Flash (text + data) of firmware/ in bytes, 19 KiB: it catches a new dependency, a vector kernel
# reachable without SIMD, or a panic path that drags in formatting (about 10 KB alone) before a
# microcontroller user does.
FIRMWARE_BUDGET=${FIRMWARE_BUDGET:-19456}

step() { printf '\n== %s (at %d s of this script)\n' "$*" "$SECONDS"; }
started=$SECONDS

step "tools"
if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
installed_nightly=$(rustup +nightly component list --installed)
if ! grep -q '^miri' <<<"$installed_nightly" || ! grep -q '^rust-src' <<<"$installed_nightly"; then
    rustup component add miri rust-src --toolchain nightly
fi
installed_targets=$(rustup target list --installed)
for target in x86_64-unknown-none thumbv7em-none-eabihf; do
    grep -qx "$target" <<<"$installed_targets" || rustup target add "$target"
done
if ! cargo fuzz --version >/dev/null 2>&1; then
    # Unoptimised: it only runs cargo and the fuzz binaries, and builds several times faster.
    cargo install cargo-fuzz --locked --debug
fi
if ! command -v arm-none-eabi-size >/dev/null; then
    apt-get update && apt-get install -y binutils-arm-none-eabi
fi

if [ "$FUZZ_SECONDS" != 0 ]; then
    targets=$(cd fuzz && cargo +nightly fuzz list)
    # The smoke run's build: the dev profile (unoptimised, debug assertions on), without
    # AddressSanitizer, which builds several times faster than cargo-fuzz's default (release, one codegen
    # unit, ASan). The library's unsafe code is what ASan would watch: miri
    # runs it below (strict provenance), its debug assertions restate the preconditions, and the
    # campaigns of FUZZING.md run the default build.
    fuzz_build=(--dev --sanitizer none)
    step "fuzz build ($(echo $targets))"
    (cd fuzz && cargo +nightly fuzz build "${fuzz_build[@]}")
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    # Two targets at a time, one per core: each still fuzzes a whole core for its seconds, in half the
    # rounds of wall time.
    fuzz_one() {
        # New inputs go to the scratch corpus (the first dir); the committed seeds are only read. A crash
        # is saved under fuzz/artifacts/$1/ and reproduces with `cargo +nightly fuzz run $1 <file>`.
        mkdir -p "$scratch/$1"
        # The .npy reader is bounded per input (in the target, and here by libFuzzer): a parse that
        # goes back over nested values takes seconds within a few hundred bytes.
        local timeout=30
        [[ $1 == npy ]] && timeout=5
        (cd fuzz && cargo +nightly fuzz run "${fuzz_build[@]}" "$1" "$scratch/$1" "corpus/$1" -- \
            -max_total_time="$FUZZ_SECONDS" -timeout="$timeout" -print_final_stats=1) >"$scratch/$1.log" 2>&1
    }
    set -- $targets
    while (($#)); do
        round=("$1")
        (($# >= 2)) && round+=("$2")
        shift "${#round[@]}"
        step "fuzz ${round[*]} for ${FUZZ_SECONDS}s, side by side"
        pids=()
        for t in "${round[@]}"; do
            fuzz_one "$t" &
            pids+=($!)
        done
        for i in "${!round[@]}"; do
            t=${round[$i]}
            log="$scratch/$t.log"
            if wait "${pids[$i]}"; then
                echo "$t:"
                grep -E '^(Done|stat::(number_of_executed_units|average_exec_per_sec))' "$log" || true
                grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true
            else
                tail -80 "$log"
                echo "FAILED: fuzz target $t (input saved under fuzz/artifacts/$t/)"
                exit 1
            fi
        done
    done
fi

step "miri: library unit tests"
if [ "${SKIP_MIRI:-0}" != 1 ]; then
    # Strict provenance: the kernels' pointer code (split plans, strided writes) must not need exposed
    # addresses. Skipped: element::tests::float_keys_follow_the_spec_order (over a million key
    # comparisons, no unsafe code; hours in the interpreter). The others run at the sizes their tests pick
    # under cfg!(miri). Miri interprets on one core, so the tests run as two processes side by side after
    # one build, split about evenly: the partition tests and the network's sorts, and the rest.
    export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
    miri_test() { cargo +nightly miri test --lib -p topk-kernels -q -- --skip float_keys_follow_the_spec_order "$@"; }
    miri_test --list >/dev/null
    half=(dispatch::tests::partition:: dispatch::tests::network::sorts_every)
    miri_log=$(mktemp)
    miri_test "${half[@]}" >"$miri_log" 2>&1 &
    first_half=$!
    miri_test "${half[@]/#/--skip=}"
    wait "$first_half" || { cat "$miri_log"; echo "FAILED: miri (the partition and sorting tests)"; exit 1; }
    cat "$miri_log"
    rm -f "$miri_log"
fi

for target in x86_64-unknown-none thumbv7em-none-eabihf; do
    step "no_std library build: $target"
    cargo build --lib -p topk-kernels --no-default-features --target "$target"
done

step "firmware (thumbv7em-none-eabihf, release)"
(cd firmware && cargo build --release --target thumbv7em-none-eabihf)
elf=firmware/target/thumbv7em-none-eabihf/release/topk-firmware
arm-none-eabi-size "$elf"
read -r text data _ < <(arm-none-eabi-size "$elf" | awk 'NR == 2 { print $1, $2, $3 }')
flash=$((text + data))
echo "firmware flash: $flash bytes (text $text + data $data), budget $FIRMWARE_BUDGET"
if [ "$flash" -gt "$FIRMWARE_BUDGET" ]; then
    echo "FAILED: the firmware example is over its flash budget"
    exit 1
fi

step "firmware run on QEMU (netduinoplus2: STM32F405, Cortex-M4F), with the stack painted"
# The `qemu` feature reports through semihosting and exits QEMU with 0 only if every check passed.
(cd firmware && cargo build --release --target thumbv7em-none-eabihf --features qemu)
timeout 120 qemu-system-arm -machine netduinoplus2 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null ||
    { echo "FAILED: the firmware example on QEMU (exit status $?)"; exit 1; }

step "robustness checks passed in $((SECONDS - started)) s"
