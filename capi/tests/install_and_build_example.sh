#!/usr/bin/env bash
# Installs the C library into a temporary prefix (capi/Makefile), then builds the example out of the
# tree against the installed header and library through pkg-config, shared and static, and runs both.
# Usage: capi/tests/install_and_build_example.sh   (TOPK_CAPI_PROFILE: the cargo profile whose library
# is installed, default dist; `TOPK_CAPI_PROFILE=dev` installs the one `cargo test` built, without
# another build; CC, CARGO_TARGET_DIR honoured)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
command -v pkg-config >/dev/null || { echo "pkg-config is missing (apt-get install pkgconf)"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"
make -s -C "$root/capi" install PREFIX="$prefix" PROFILE="${TOPK_CAPI_PROFILE:-dist}"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config: topk_kernels $(pkg-config --modversion topk_kernels): $(pkg-config --cflags --libs topk_kernels)"
# A copy of the example alone: nothing of the repository (its header above all) is in reach.
build="$scratch/example"
mkdir "$build"
cp "$root/capi/examples/Makefile" "$root/capi/examples/topk_example.c" "$build/"
make -s -C "$build" CFLAGS="-std=c11 -O2 -Wall -Wextra -Wpedantic -Werror"
LD_LIBRARY_PATH="$prefix/lib" "$build/topk_example"
# ldd's output captured first: `ldd | grep -q` under pipefail fails at random when grep exits before
# ldd has written everything (SIGPIPE).
libraries=$(ldd "$build/topk_example")
grep -q 'libtopk_kernels_capi\.so' <<<"$libraries" || { echo "FAILED: the shared library is not linked"; exit 1; }
make -s -C "$build" clean
make -s -C "$build" STATIC=1 CFLAGS="-std=c11 -O2 -Wall -Wextra -Wpedantic -Werror"
libraries=$(ldd "$build/topk_example")
if grep -q libtopk_kernels_capi <<<"$libraries"; then
    echo "FAILED: STATIC=1 linked the shared library"
    exit 1
fi
"$build/topk_example"
echo "the example built against the installed library (shared and static) and ran"
