#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make run`: profile the whole system for a few seconds while the example
# workload runs, then print the hottest functions.
set -eu
cd "$(dirname "$0")/.."
secs=${SECONDS_TO_RECORD:-5}
out=${BPFSYM_DEMO_OUT:-/tmp/bpfsym-demo.data}
mkdir -p build
cc -O2 -g -fno-omit-frame-pointer -o build/busy examples/busy.c
echo "demo: recording the whole system for ${secs} s while examples/busy runs"
build/busy "$secs" &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
# -f: the demo's own file, replaced at each run (an existing output is refused otherwise).
./bpfsym record -a -d "$secs" -f -o "$out"
wait $busy || true
trap - EXIT
./bpfsym report "$out" --limit 20
echo
echo "demo: the recording is in $out; try: ./bpfsym report $out --folded | head"
