#!/bin/sh
# The fuzz targets' corpora replayed under ASan/UBSan, then fuzzed for a few
# seconds each: tests/fuzz/replay.sh, run here so tests/run.sh counts it.
# Needs no root; SKIPs when clang-14 or libFuzzer is missing.
exec sh "${BPFSYM_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/fuzz/replay.sh" -t "${FUZZ_REPLAY_SECONDS:-10}"
