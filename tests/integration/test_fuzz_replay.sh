#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The fuzz targets' corpora replayed under ASan/UBSan, then fuzzed for a few
# seconds each: tests/fuzz/replay.sh, run here so tests/run.sh counts it.
# One test per tests/fuzz/fuzz_NAME.c, fuzz/NAME_replay; replay.sh SKIPs
# them when clang-14 or libFuzzer is missing.  Needs no root.  Its corpora,
# logs and saved failures stay under build/fuzz.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2034
LIB_ROOTLESS=1
names=
for f in "$BPFSYM_TOP"/tests/fuzz/fuzz_*.c; do
	[ -f "$f" ] || continue
	n=${f##*/fuzz_}
	names="$names fuzz/${n%.c}_replay"
done
lib_init $names

sh "$BPFSYM_TOP/tests/fuzz/replay.sh" -t "${FUZZ_REPLAY_SECONDS:-10}" > "$T/replay.out" 2>&1
rc=$?
# Its result lines through pass/fail/skip, so that lib.sh counts them.
while IFS= read -r line; do
	case $line in
	"PASS "*|"FAIL "*|"SKIP "*)
		what=${line#???? }
		t=${what%%:*}
		why=${what#*: }
		[ "$why" != "$what" ] || why=
		case $line in
		PASS*) pass "$t"; [ -z "$why" ] || note "$t: $why" ;;
		FAIL*) fail "$t" "$why" ;;
		SKIP*) skip "$t" "$why" ;;
		esac
		;;
	*) echo "$line" ;;
	esac
done < "$T/replay.out"
if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$T/replay.out"; then
	fail_all "tests/fuzz/replay.sh exited with status $rc"
fi

lib_done
