#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check-toolchain.sh [CC]: exit 0 when CC (default clang-14, else clang) can
# build a libFuzzer target with ASan and UBSan; otherwise say what is
# missing on stdout and exit 1.  `make fuzz-build` and tests/fuzz/replay.sh
# use it to skip, rather than fail, on machines without the toolchain.
set -u
cc=${1:-$(command -v clang-14 || command -v clang)}
if [ -z "$cc" ] || ! command -v "$cc" > /dev/null 2>&1; then
	echo "${1:-clang-14}: not found (the fuzz targets need clang 14 with libFuzzer)"
	exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-fuzzcc.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n; }' > "$dir/t.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined -o "$dir/t" "$dir/t.c" > "$dir/log" 2>&1; then
	echo "'$cc' cannot link -fsanitize=fuzzer (libclang-rt-14-dev missing?): $(head -n 1 "$dir/log")"
	exit 1
fi
exit 0
