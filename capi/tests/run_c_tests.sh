#!/usr/bin/env bash
# Builds the static library, then compiles and runs the C test program against it (and checks that the
# header also parses as C++). Usage: capi/tests/run_c_tests.sh   (CC / CXX / CARGO_TARGET_DIR honoured;
# TOPK_CAPI_LIB names a static library already built, which is then used instead of building one;
# TOPK_C_RUNNER runs the test program, e.g. "qemu-arm -L /usr/arm-linux-gnueabihf" for a cross CC)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
library="${TOPK_CAPI_LIB:-}"
if [[ -z $library ]]; then
    cargo build --quiet -p topk-kernels-capi
    library="$target/debug/libtopk_kernels_capi.a"
fi
out="$target/capi-c-tests"
mkdir -p "$out"
"${CC:-cc}" -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -I capi/include capi/tests/c/test_topk.c \
    "$library" -lpthread -ldl -lm -o "$out/test_topk"
${TOPK_C_RUNNER:-} "$out/test_topk"
if command -v "${CXX:-c++}" >/dev/null; then
    echo '#include "topk_kernels.h"' | "${CXX:-c++}" -std=c++11 -Wall -Werror -I capi/include -x c++ -fsyntax-only -
fi
